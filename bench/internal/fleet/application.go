package fleet

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"sync/atomic"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"

	"github.com/informerkit/informerkit/bench/internal/fleet/apptypes"
	"github.com/informerkit/informerkit/meta"
)

// The custom-resource fleet: Applications, a custom resource shaped as Argo CD's (what to
// deploy from which Git repository, where, with which sync policy, and a status listing the
// resources it manages, their health, the last sync's result and the deploy history), with
// the full structural schema a CRD generator would write. Its objects are 4 to 7 KB of JSON.

// ApplicationGVR is the resource of the custom-resource fleet.
var ApplicationGVR = schema.GroupVersionResource{Group: "bench.informerkit.dev", Version: "v1", Resource: "applications"}

// The Application types, declared in package apptypes (which needs no client-go).
type (
	ApplicationSpec           = apptypes.ApplicationSpec
	AppSource                 = apptypes.AppSource
	HelmSource                = apptypes.HelmSource
	HelmParameter             = apptypes.HelmParameter
	AppDestination            = apptypes.AppDestination
	SyncPolicy                = apptypes.SyncPolicy
	SyncPolicyAutomated       = apptypes.SyncPolicyAutomated
	RetryStrategy             = apptypes.RetryStrategy
	Backoff                   = apptypes.Backoff
	ResourceIgnoreDifferences = apptypes.ResourceIgnoreDifferences
	Info                      = apptypes.Info
	ApplicationStatus         = apptypes.ApplicationStatus
	ResourceStatus            = apptypes.ResourceStatus
	SyncStatus                = apptypes.SyncStatus
	ComparedTo                = apptypes.ComparedTo
	HealthStatus              = apptypes.HealthStatus
	RevisionHistory           = apptypes.RevisionHistory
	AppCondition              = apptypes.AppCondition
	OperationState            = apptypes.OperationState
	SyncOperationResult       = apptypes.SyncOperationResult
	ResourceResult            = apptypes.ResourceResult
	ApplicationSummary        = apptypes.ApplicationSummary
)

// Application returns the spec and status of the i-th Application: teams share
// repositories, projects and policies; names, revisions and times are its own.
func Application(i int) (spec ApplicationSpec, status ApplicationStatus) {
	team, app := i%Namespaces, fmt.Sprintf("app-%05d", i)
	repo := fmt.Sprintf("https://git.example.com/team-%02d/deploy.git", team)
	rev := fmt.Sprintf("%040x", uint64(i)*0x9E3779B97F4A7C15)
	src := AppSource{RepoURL: repo, Path: "apps/" + app, TargetRevision: "main", Helm: &HelmSource{
		ReleaseName: app, ValueFiles: []string{"values.yaml", "values-prod.yaml"},
		Parameters: []HelmParameter{{Name: "image.tag", Value: fmt.Sprintf("v1.%d.%d", i%20, i%7)},
			{Name: "replicaCount", Value: fmt.Sprint(1 + i%5)}, {Name: "resources.requests.cpu", Value: "250m"}}}}
	dest := AppDestination{Server: "https://kubernetes.default.svc", Namespace: Namespace(team)}
	limit := int64(10)
	spec = ApplicationSpec{Project: fmt.Sprintf("team-%02d", team), Source: src, Destination: dest,
		SyncPolicy: &SyncPolicy{Automated: &SyncPolicyAutomated{Prune: true, SelfHeal: true},
			SyncOptions: []string{"CreateNamespace=true", "ServerSideApply=true"},
			Retry:       &RetryStrategy{Limit: 5, Backoff: Backoff{Duration: "5s", Factor: 2, MaxDuration: "3m"}}},
		IgnoreDifferences:    []ResourceIgnoreDifferences{{Group: "apps", Kind: "Deployment", JSONPointers: []string{"/spec/replicas"}}},
		Info:                 []Info{{Name: "owner", Value: fmt.Sprintf("team-%02d@example.com", team)}},
		RevisionHistoryLimit: &limit}
	at := func(s int) meta.Time {
		return meta.NewTime(time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC).Add(time.Duration(i*60+s) * time.Second))
	}
	kinds := []struct{ group, kind string }{{"", "Service"}, {"apps", "Deployment"}, {"", "ConfigMap"}, {"", "ServiceAccount"}, {"networking.k8s.io", "Ingress"}, {"autoscaling", "HorizontalPodAutoscaler"}}
	var res []ResourceStatus
	var results []ResourceResult
	for _, k := range kinds[:3+i%4] {
		v := "v1"
		if k.kind == "HorizontalPodAutoscaler" {
			v = "v2"
		}
		res = append(res, ResourceStatus{Group: k.group, Version: v, Kind: k.kind, Namespace: dest.Namespace, Name: app, Status: "Synced", Health: &HealthStatus{Status: "Healthy"}})
		results = append(results, ResourceResult{Group: k.group, Version: v, Kind: k.kind, Namespace: dest.Namespace, Name: app,
			Status: "Synced", Message: strings.ToLower(k.kind) + "/" + app + " configured", SyncPhase: "Sync"})
	}
	var history []RevisionHistory
	for h := range 3 {
		history = append(history, RevisionHistory{ID: int64(h), Revision: fmt.Sprintf("%040x", uint64(i*3+h)*0x9E3779B97F4A7C15), DeployedAt: at(h * 600), DeployStartedAt: at(h*600 - 20), Source: src})
	}
	ts := at(1800)
	status = ApplicationStatus{Resources: res, Sync: SyncStatus{Status: "Synced", Revision: rev, ComparedTo: ComparedTo{Source: src, Destination: dest}},
		Health: HealthStatus{Status: "Healthy"}, History: history, ReconciledAt: &ts, SourceType: "Helm",
		Conditions:     []AppCondition{{Type: "SyncError", Message: "one resource failed to sync once", LastTransitionTime: &ts}},
		OperationState: &OperationState{Phase: "Succeeded", Message: "successfully synced (all tasks run)", StartedAt: at(1780), FinishedAt: at(1790), SyncResult: &SyncOperationResult{Revision: rev, Resources: results}},
		Summary:        ApplicationSummary{ExternalURLs: []string{"https://" + app + ".example.com"}, Images: []string{fmt.Sprintf("registry.example.com/team-%02d/%s:v1.%d.%d", team, app, i%20, i%7)}}}
	return spec, status
}

// ApplicationCRD is the CustomResourceDefinition of Applications, its schema built from the
// Go types above as a CRD generator builds it.
func ApplicationCRD() map[string]any {
	props := map[string]any{
		"spec":   schemaOf(reflect.TypeFor[ApplicationSpec]()),
		"status": schemaOf(reflect.TypeFor[ApplicationStatus]()),
	}
	return map[string]any{
		"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
		"metadata": map[string]any{"name": ApplicationGVR.Resource + "." + ApplicationGVR.Group},
		"spec": map[string]any{
			"group": ApplicationGVR.Group, "scope": "Namespaced",
			"names": map[string]any{"plural": "applications", "singular": "application", "kind": "Application", "listKind": "ApplicationList"},
			"versions": []any{map[string]any{"name": "v1", "served": true, "storage": true,
				"schema": map[string]any{"openAPIV3Schema": map[string]any{"type": "object", "properties": props}}}},
		},
	}
}

var metaTime = reflect.TypeFor[meta.Time]()

// schemaOf is the OpenAPI v3 schema of a Go type (structs, slices, maps, scalars, meta.Time).
func schemaOf(t reflect.Type) map[string]any {
	if t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch {
	case t == metaTime:
		return map[string]any{"type": "string", "format": "date-time"}
	case t.Kind() == reflect.String:
		return map[string]any{"type": "string"}
	case t.Kind() == reflect.Bool:
		return map[string]any{"type": "boolean"}
	case t.Kind() >= reflect.Int && t.Kind() <= reflect.Int64:
		return map[string]any{"type": "integer", "format": "int64"}
	case t.Kind() == reflect.Slice:
		return map[string]any{"type": "array", "items": schemaOf(t.Elem())}
	case t.Kind() == reflect.Map:
		return map[string]any{"type": "object", "additionalProperties": schemaOf(t.Elem())}
	}
	props := map[string]any{}
	for i := range t.NumField() {
		f := t.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		props[name] = schemaOf(f.Type)
	}
	return map[string]any{"type": "object", "properties": props}
}

// SeedApplications creates the Applications' CRD (if needed) and n Applications with
// workers parallel writers; those that exist already are left as they are.
func SeedApplications(ctx context.Context, dyn dynamic.Interface, n, workers int, progress func(string)) error {
	crds := schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}
	if _, err := dyn.Resource(crds).Create(ctx, &unstructured.Unstructured{Object: ApplicationCRD()}, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return err
	}
	var done atomic.Int64
	return Parallel(ctx, workers, n, func(i int) error {
		spec, status := Application(i)
		obj := map[string]any{"apiVersion": ApplicationGVR.GroupVersion().String(), "kind": "Application",
			"metadata": map[string]any{"name": fmt.Sprintf("app-%05d", i), "namespace": Namespace(i % Namespaces),
				"labels": map[string]any{"app.kubernetes.io/part-of": fmt.Sprintf("team-%02d", i%Namespaces)}},
			"spec": toMap(spec), "status": toMap(status)}
		for {
			_, err := dyn.Resource(ApplicationGVR).Namespace(Namespace(i%Namespaces)).Create(ctx, &unstructured.Unstructured{Object: obj}, metav1.CreateOptions{})
			if apierrors.IsNotFound(err) { // the CRD is not served yet
				select {
				case <-ctx.Done():
					return ctx.Err()
				case <-time.After(100 * time.Millisecond):
				}
				continue
			}
			if err != nil && !apierrors.IsAlreadyExists(err) {
				return err
			}
			if k := done.Add(1); progress != nil && k%2000 == 0 {
				progress(fmt.Sprintf("applications %d/%d", k, n))
			}
			return nil
		}
	})
}

func toMap(v any) map[string]any {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		panic(err)
	}
	return m
}
