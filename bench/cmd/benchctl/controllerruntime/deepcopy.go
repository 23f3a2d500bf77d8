package main

import (
	"slices"

	"k8s.io/apimachinery/pkg/runtime"

	"github.com/informerkit/informerkit/bench/internal/fleet/apptypes"
)

// The deep copies a kubebuilder project generates (controller-gen object), written out for
// the Application types, which live in a package of their own.

// DeepCopyInto copies a into out.
func (a *Application) DeepCopyInto(out *Application) {
	*out = *a
	out.TypeMeta = a.TypeMeta
	a.ObjectMeta.DeepCopyInto(&out.ObjectMeta)
	copySpec(&a.Spec, &out.Spec)
	copyStatus(&a.Status, &out.Status)
}

// DeepCopy returns a copy of a.
func (a *Application) DeepCopy() *Application {
	if a == nil {
		return nil
	}
	out := new(Application)
	a.DeepCopyInto(out)
	return out
}

// DeepCopyObject is runtime.Object's copy.
func (a *Application) DeepCopyObject() runtime.Object {
	if c := a.DeepCopy(); c != nil {
		return c
	}
	return nil
}

// DeepCopyInto copies l into out.
func (l *ApplicationList) DeepCopyInto(out *ApplicationList) {
	*out = *l
	out.TypeMeta = l.TypeMeta
	l.ListMeta.DeepCopyInto(&out.ListMeta)
	if l.Items != nil {
		out.Items = make([]Application, len(l.Items))
		for i := range l.Items {
			l.Items[i].DeepCopyInto(&out.Items[i])
		}
	}
}

// DeepCopyObject is runtime.Object's copy.
func (l *ApplicationList) DeepCopyObject() runtime.Object {
	if l == nil {
		return nil
	}
	out := new(ApplicationList)
	l.DeepCopyInto(out)
	return out
}

func ptrCopy[T any](p *T, copyInto func(in, out *T)) *T {
	if p == nil {
		return nil
	}
	out := new(T)
	*out = *p
	if copyInto != nil {
		copyInto(p, out)
	}
	return out
}

func copySource(in, out *apptypes.AppSource) {
	*out = *in
	out.Helm = ptrCopy(in.Helm, func(in, out *apptypes.HelmSource) {
		out.ValueFiles = slices.Clone(in.ValueFiles)
		out.Parameters = slices.Clone(in.Parameters)
	})
}

func copySpec(in, out *apptypes.ApplicationSpec) {
	*out = *in
	copySource(&in.Source, &out.Source)
	out.SyncPolicy = ptrCopy(in.SyncPolicy, func(in, out *apptypes.SyncPolicy) {
		out.Automated = ptrCopy(in.Automated, nil)
		out.SyncOptions = slices.Clone(in.SyncOptions)
		out.Retry = ptrCopy(in.Retry, nil)
	})
	if in.IgnoreDifferences != nil {
		out.IgnoreDifferences = make([]apptypes.ResourceIgnoreDifferences, len(in.IgnoreDifferences))
		for i, d := range in.IgnoreDifferences {
			d.JSONPointers = slices.Clone(d.JSONPointers)
			out.IgnoreDifferences[i] = d
		}
	}
	out.Info = slices.Clone(in.Info)
	out.RevisionHistoryLimit = ptrCopy(in.RevisionHistoryLimit, nil)
}

func copyStatus(in, out *apptypes.ApplicationStatus) {
	*out = *in
	if in.Resources != nil {
		out.Resources = make([]apptypes.ResourceStatus, len(in.Resources))
		for i, r := range in.Resources {
			r.Health = ptrCopy(r.Health, nil)
			out.Resources[i] = r
		}
	}
	copySource(&in.Sync.ComparedTo.Source, &out.Sync.ComparedTo.Source)
	if in.History != nil {
		out.History = make([]apptypes.RevisionHistory, len(in.History))
		for i := range in.History {
			out.History[i] = in.History[i]
			copySource(&in.History[i].Source, &out.History[i].Source)
		}
	}
	if in.Conditions != nil {
		out.Conditions = make([]apptypes.AppCondition, len(in.Conditions))
		for i, c := range in.Conditions {
			c.LastTransitionTime = ptrCopy(c.LastTransitionTime, nil)
			out.Conditions[i] = c
		}
	}
	out.ReconciledAt = ptrCopy(in.ReconciledAt, nil)
	out.OperationState = ptrCopy(in.OperationState, func(in, out *apptypes.OperationState) {
		out.SyncResult = ptrCopy(in.SyncResult, func(in, out *apptypes.SyncOperationResult) {
			out.Resources = slices.Clone(in.Resources)
		})
	})
	out.Summary.ExternalURLs = slices.Clone(in.Summary.ExternalURLs)
	out.Summary.Images = slices.Clone(in.Summary.Images)
}
