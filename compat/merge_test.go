package compat

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	appsv1ac "k8s.io/client-go/applyconfigurations/apps/v1"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"
	metav1ac "k8s.io/client-go/applyconfigurations/meta/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/informerkit/informerkit/apitest"
)

// controllerRuntimeApplyAndPatch runs controller-runtime's client (its defaults: protobuf
// for built-in kinds) through server-side apply (typed apply configurations, conflicts,
// ForceOwnership, the status subresource) and strategic and JSON merge patches, and
// returns a transcript: each step's error (reason and message) or the fields it changed
// and the managers of managedFields.
func controllerRuntimeApplyAndPatch(t *testing.T, cfg *rest.Config, ns string) []string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	c, err := client.New(cfg, client.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
		t.Fatal(err)
	}
	var lines []string
	show := func(step string, err error) {
		if err != nil {
			st := apierrors.ReasonForError(err)
			lines = append(lines, fmt.Sprintf("%s: %s %s", step, st, err))
			return
		}
		var d appsv1.Deployment
		if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: "web"}, &d); err != nil {
			t.Fatalf("%s: get: %v", step, err)
		}
		var cs []string
		for _, ct := range d.Spec.Template.Spec.Containers {
			cs = append(cs, ct.Name+"="+ct.Image)
		}
		var ms []string
		for _, m := range d.ManagedFields {
			s := m.Manager + "/" + string(m.Operation)
			if m.Subresource != "" {
				s += "/" + m.Subresource
			}
			ms = append(ms, s)
		}
		// Entries sort by time (in seconds) first: the order depends on timing.
		sort.Strings(ms)
		lines = append(lines, fmt.Sprintf("%s: replicas=%d containers=%s labels=%v status.replicas=%d generation=%d managers=%s",
			step, *d.Spec.Replicas, strings.Join(cs, ","), d.Labels, d.Status.Replicas, d.Generation, strings.Join(ms, ",")))
	}
	deployment := func(replicas int32, containers ...*corev1ac.ContainerApplyConfiguration) *appsv1ac.DeploymentApplyConfiguration {
		spec := appsv1ac.DeploymentSpec().
			WithSelector(metav1ac.LabelSelector().WithMatchLabels(map[string]string{"app": "web"})).
			WithTemplate(corev1ac.PodTemplateSpec().WithLabels(map[string]string{"app": "web"}).WithSpec(corev1ac.PodSpec().WithContainers(containers...)))
		if replicas > 0 {
			spec = spec.WithReplicas(replicas)
		}
		return appsv1ac.Deployment("web", ns).WithLabels(map[string]string{"app": "web"}).WithSpec(spec)
	}
	app := corev1ac.Container().WithName("app").WithImage("app:1").WithPorts(corev1ac.ContainerPort().WithContainerPort(8080))

	show("apply", c.Apply(ctx, deployment(2, app), client.FieldOwner("deployer")))
	sidecar := corev1ac.Container().WithName("sidecar").WithImage("envoy:1")
	show("apply-sidecar", c.Apply(ctx, appsv1ac.Deployment("web", ns).WithSpec(appsv1ac.DeploymentSpec().
		WithTemplate(corev1ac.PodTemplateSpec().WithSpec(corev1ac.PodSpec().WithContainers(sidecar)))), client.FieldOwner("mesh")))
	show("apply-conflict", c.Apply(ctx, appsv1ac.Deployment("web", ns).WithSpec(appsv1ac.DeploymentSpec().WithReplicas(5)), client.FieldOwner("autoscaler")))
	show("apply-force", c.Apply(ctx, appsv1ac.Deployment("web", ns).WithSpec(appsv1ac.DeploymentSpec().WithReplicas(5)), client.FieldOwner("autoscaler"), client.ForceOwnership))
	show("apply-without-replicas", c.Apply(ctx, deployment(0, corev1ac.Container().WithName("app").WithImage("app:2")), client.FieldOwner("deployer")))
	show("status-apply", c.Status().Apply(ctx, appsv1ac.Deployment("web", ns).WithStatus(appsv1ac.DeploymentStatus().WithReplicas(5).WithObservedGeneration(1)), client.FieldOwner("controller")))

	var d appsv1.Deployment
	if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: "web"}, &d); err != nil {
		t.Fatal(err)
	}
	before := d.DeepCopy()
	for i := range d.Spec.Template.Spec.Containers {
		if d.Spec.Template.Spec.Containers[i].Name == "sidecar" {
			d.Spec.Template.Spec.Containers[i].Image = "envoy:2"
		}
	}
	show("strategic-merge-from", c.Patch(ctx, &d, client.StrategicMergeFrom(before), client.FieldOwner("editor")))
	patch := client.RawPatch("application/strategic-merge-patch+json", []byte(`{"spec":{"template":{"spec":{"containers":[{"name":"debug","image":"busybox:1"},{"name":"app","$patch":"delete"}]}}}}`))
	show("strategic-directives", c.Patch(ctx, &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "web"}}, patch, client.FieldOwner("editor")))
	before = d.DeepCopy()
	d.Labels["tier"] = "front"
	show("merge-from", c.Patch(ctx, &d, client.MergeFrom(before), client.FieldOwner("labeler")))
	show("deployer-reapplies", c.Apply(ctx, deployment(0, corev1ac.Container().WithName("app").WithImage("app:2")), client.FieldOwner("deployer")))
	return lines
}

// TestControllerRuntimeApplyAndPatch runs controllerRuntimeApplyAndPatch against apitest
// and, when the e2e binaries are there, against kube-apiserver v1.37.2, and compares the
// transcripts.
func TestControllerRuntimeApplyAndPatch(t *testing.T) {
	e := newEnv(t, apitest.Options{})
	ns := fmt.Sprintf("cr-merge-%d", time.Now().UnixNano()%1e9)
	got := controllerRuntimeApplyAndPatch(t, e.cfg, ns)
	for _, l := range got {
		t.Log(l)
	}
	for _, want := range []string{
		"apply: replicas=2 containers=app=app:1 labels=map[app:web] status.replicas=0 generation=1 managers=deployer/Apply",
		`apply-conflict: Conflict Apply failed with 1 conflict: conflict with "deployer": .spec.replicas`,
	} {
		found := false
		for _, l := range got {
			found = found || l == want
		}
		if !found {
			t.Errorf("transcript lacks %q", want)
		}
	}
	real := startRealCluster(t)
	cfg, err := clientcmd.RESTConfigFromKubeConfig(real)
	if err != nil {
		t.Fatal(err)
	}
	want := controllerRuntimeApplyAndPatch(t, cfg, ns)
	for i := range max(len(want), len(got)) {
		var w, g string
		if i < len(want) {
			w = want[i]
		}
		if i < len(got) {
			g = got[i]
		}
		if w != g {
			t.Errorf("step %d differs:\n  kube-apiserver: %s\n  apitest:        %s", i, w, g)
		}
	}
}
