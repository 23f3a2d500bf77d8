package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"runtime"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	k8sruntime "k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/dynamic/dynamicinformer"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/informerkit/informerkit/bench/internal/fleet"
	"github.com/informerkit/informerkit/meta"
)

// The custom-resource workload (kind "applications"): JSON on both sides, so only the JSON
// decoders and the informers differ. informerkit decodes into a typed struct; client-go
// runs its dynamic informer (unstructured objects, what a generic controller uses) as
// "client-go", and an informer of a typed struct over a REST client (what a controller with
// generated types uses) as "client-go-typed".

// Application is informerkit's typed custom resource.
type Application struct {
	meta.TypeMeta
	meta.ObjectMeta `json:"metadata"`
	Spec            fleet.ApplicationSpec   `json:"spec"`
	Status          fleet.ApplicationStatus `json:"status"`
}

// cgApplication is the same custom resource for client-go's typed informer.
type cgApplication struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata"`
	Spec              fleet.ApplicationSpec   `json:"spec"`
	Status            fleet.ApplicationStatus `json:"status"`
}

// cgApplicationList is its list.
type cgApplicationList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata"`
	Items           []cgApplication `json:"items"`
}

// DeepCopyObject copies through JSON: client-go's informer calls it only for its mutation
// detector, which is off.
func (a *cgApplication) DeepCopyObject() k8sruntime.Object {
	out := &cgApplication{}
	jsonCopy(a, out)
	return out
}

// DeepCopyObject copies through JSON.
func (l *cgApplicationList) DeepCopyObject() k8sruntime.Object {
	out := &cgApplicationList{}
	jsonCopy(l, out)
	return out
}

func jsonCopy(in, out any) {
	b, err := json.Marshal(in)
	if err != nil {
		panic(err)
	}
	if err := json.Unmarshal(b, out); err != nil {
		panic(err)
	}
}

// syncClientGoCR syncs client-go's informer of the custom resources: dynamic, or typed over
// a REST client.
func syncClientGoCR(ctx context.Context, a childArgs) (childResult, error) {
	var res childResult
	cfg, err := clientcmd.BuildConfigFromFlags("", a.Kubeconfig)
	if err != nil {
		return res, err
	}
	res.Objects = a.Expect
	base := liveHeap()
	heap := sampleHeap()
	cpu0, t0 := cpuTime(), time.Now()
	var inf cache.SharedIndexInformer
	if a.Impl == "client-go-typed" {
		lw, err := typedCRListWatch(cfg)
		if err != nil {
			return res, err
		}
		inf = cache.NewSharedIndexInformer(lw, &cgApplication{}, 0, cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc})
	} else {
		dyn, err := dynamic.NewForConfig(cfg)
		if err != nil {
			return res, err
		}
		inf = dynamicinformer.NewDynamicSharedInformerFactory(dyn, 0).ForResource(fleet.ApplicationGVR).Informer()
	}
	if _, err := inf.AddEventHandler(cache.ResourceEventHandlerFuncs{}); err != nil {
		return res, err
	}
	ictx, cancel := context.WithCancel(ctx)
	defer cancel()
	go inf.RunWithContext(ictx)
	if !cache.WaitForCacheSync(ctx.Done(), inf.HasSynced) {
		return res, errors.New("client-go: cache not synced")
	}
	res.SyncSeconds = time.Since(t0).Seconds()
	res.SyncCPUSeconds = (cpuTime() - cpu0).Seconds()
	res.PeakHeapSync, res.PeakRSSSync = float64(heap.end()), float64(procStatus("VmHWM"))
	if n := len(inf.GetStore().ListKeys()); n != a.Expect {
		return res, fmt.Errorf("%s cached %d applications, want %d", a.Impl, n, a.Expect)
	}
	steady := liveHeap()
	res.SteadyHeap, res.HeapPerObject = float64(steady), float64(steady-base)/float64(a.Expect)
	runtime.KeepAlive(inf)
	return res, nil
}

// typedCRListWatch is the ListWatch a generated typed client gives an informer: a REST
// client of the group version with a scheme that knows the Go types, JSON on the wire.
func typedCRListWatch(cfg *rest.Config) (*cache.ListWatch, error) {
	gv := fleet.ApplicationGVR.GroupVersion()
	scheme := k8sruntime.NewScheme()
	scheme.AddKnownTypeWithName(gv.WithKind("Application"), &cgApplication{})
	scheme.AddKnownTypeWithName(gv.WithKind("ApplicationList"), &cgApplicationList{})
	metav1.AddToGroupVersion(scheme, gv)
	c := rest.CopyConfig(cfg)
	c.GroupVersion, c.APIPath = &gv, "/apis"
	c.NegotiatedSerializer = serializer.NewCodecFactory(scheme).WithoutConversion()
	rc, err := rest.RESTClientFor(c)
	if err != nil {
		return nil, err
	}
	pc := k8sruntime.NewParameterCodec(scheme)
	return &cache.ListWatch{
		ListWithContextFunc: func(ctx context.Context, o metav1.ListOptions) (k8sruntime.Object, error) {
			out := &cgApplicationList{}
			return out, rc.Get().Resource(fleet.ApplicationGVR.Resource).VersionedParams(&o, pc).Do(ctx).Into(out)
		},
		WatchFuncWithContext: func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
			o.Watch = true
			return rc.Get().Resource(fleet.ApplicationGVR.Resource).VersionedParams(&o, pc).Watch(ctx)
		},
	}, nil
}
