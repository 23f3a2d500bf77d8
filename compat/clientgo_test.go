package compat

import (
	"context"
	"fmt"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/dynamic/dynamicinformer"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/metadata/metadatainformer"
	"k8s.io/utils/ptr"

	"github.com/informerkit/informerkit/apitest"
)

// TestClientGoTypedClients runs client-go's typed clientset with the default rest.Config
// (protobuf bodies and responses for built-in kinds) through the verbs of every built-in
// kind apitest serves.
func TestClientGoTypedClients(t *testing.T) {
	e := newEnv(t, apitest.Options{})
	logs := captureKlog(t)
	cs, err := kubernetes.NewForConfig(e.cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx := e.ctx
	ns := "default"

	// Namespaces, with their defaults.
	nsObj, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "team"}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("create namespace: %v", err)
	}
	if nsObj.Status.Phase != corev1.NamespaceActive || nsObj.Labels["kubernetes.io/metadata.name"] != "team" {
		t.Errorf("namespace defaults: phase %q labels %v", nsObj.Status.Phase, nsObj.Labels)
	}

	// ConfigMaps: create, conflict, update, list, delete.
	cm, err := cs.CoreV1().ConfigMaps(ns).Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "a", Labels: map[string]string{"app": "x"}},
		Data: map[string]string{"k": "v"}, BinaryData: map[string][]byte{"b": {0, 1, 2}}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("create configmap: %v", err)
	}
	if cm.UID == "" || cm.ResourceVersion == "" || cm.CreationTimestamp.IsZero() || string(cm.BinaryData["b"]) != "\x00\x01\x02" {
		t.Errorf("created configmap %+v", cm)
	}
	if _, err := cs.CoreV1().ConfigMaps(ns).Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "a"}}, metav1.CreateOptions{}); !apierrors.IsAlreadyExists(err) {
		t.Errorf("second create: %v, want AlreadyExists", err)
	}
	stale := cm.DeepCopy()
	cm.Data["k"] = "w"
	if _, err := cs.CoreV1().ConfigMaps(ns).Update(ctx, cm, metav1.UpdateOptions{}); err != nil {
		t.Fatalf("update: %v", err)
	}
	stale.Data["k"] = "stale"
	if _, err := cs.CoreV1().ConfigMaps(ns).Update(ctx, stale, metav1.UpdateOptions{}); !apierrors.IsConflict(err) {
		t.Errorf("stale update: %v, want Conflict", err)
	}
	list, err := cs.CoreV1().ConfigMaps(ns).List(ctx, metav1.ListOptions{LabelSelector: "app=x"})
	if err != nil || len(list.Items) != 1 || list.Items[0].Data["k"] != "w" {
		t.Fatalf("list: %v %+v", err, list)
	}
	if _, err := cs.CoreV1().ConfigMaps(ns).Get(ctx, "missing", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("get missing: %v, want NotFound", err)
	}
	if err := cs.CoreV1().ConfigMaps(ns).Delete(ctx, "a", metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &cm.UID}}); err != nil {
		t.Errorf("delete: %v", err)
	}

	// Secrets (bytes), Services, Pods, Deployments, Leases, Events.
	sec, err := cs.CoreV1().Secrets(ns).Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "s"}, Data: map[string][]byte{"pw": []byte("hunter2")}}, metav1.CreateOptions{})
	if err != nil || string(sec.Data["pw"]) != "hunter2" {
		t.Fatalf("secret: %v %+v", err, sec)
	}
	if sec.Type != corev1.SecretTypeOpaque {
		t.Errorf("secret type %q, want Opaque", sec.Type)
	}
	pod, err := cs.CoreV1().Pods(ns).Create(ctx, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p"}, Spec: corev1.PodSpec{Containers: []corev1.Container{{
		Name: "c", Image: "nginx:1.27", Resources: corev1.ResourceRequirements{Limits: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("500m")}}}}}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("create pod: %v", err)
	}
	if pod.Status.Phase != corev1.PodPending || pod.Spec.RestartPolicy != corev1.RestartPolicyAlways ||
		pod.Spec.Containers[0].ImagePullPolicy != corev1.PullIfNotPresent || pod.Spec.Containers[0].Resources.Requests.Cpu().String() != "500m" {
		t.Errorf("pod defaults: phase %q restartPolicy %q pullPolicy %q requests %v", pod.Status.Phase, pod.Spec.RestartPolicy,
			pod.Spec.Containers[0].ImagePullPolicy, pod.Spec.Containers[0].Resources.Requests)
	}
	dep, err := cs.AppsV1().Deployments(ns).Create(ctx, &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: "d"}, Spec: appsv1.DeploymentSpec{
		Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "d"}},
		Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "d"}},
			Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "nginx"}}}}}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("create deployment: %v", err)
	}
	if dep.Spec.Replicas == nil || *dep.Spec.Replicas != 1 || dep.Spec.Strategy.Type != appsv1.RollingUpdateDeploymentStrategyType ||
		dep.Spec.RevisionHistoryLimit == nil || *dep.Spec.RevisionHistoryLimit != 10 || dep.Generation != 1 {
		t.Errorf("deployment defaults: %+v", dep.Spec)
	}
	scale, err := cs.AppsV1().Deployments(ns).GetScale(ctx, "d", metav1.GetOptions{})
	if err != nil {
		t.Fatalf("get scale: %v", err)
	}
	scale.Spec.Replicas = 3
	if _, err := cs.AppsV1().Deployments(ns).UpdateScale(ctx, "d", scale, metav1.UpdateOptions{}); err != nil {
		t.Fatalf("update scale: %v", err)
	}
	if dep, _ = cs.AppsV1().Deployments(ns).Get(ctx, "d", metav1.GetOptions{}); *dep.Spec.Replicas != 3 || dep.Generation != 2 {
		t.Errorf("after scale: replicas %d generation %d", *dep.Spec.Replicas, dep.Generation)
	}
	lease, err := cs.CoordinationV1().Leases(ns).Create(ctx, &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Name: "l"},
		Spec: coordinationv1.LeaseSpec{HolderIdentity: ptr.To("me"), LeaseDurationSeconds: ptr.To[int32](15), AcquireTime: &metav1.MicroTime{Time: cm.CreationTimestamp.Time}}}, metav1.CreateOptions{})
	if err != nil || *lease.Spec.HolderIdentity != "me" {
		t.Fatalf("lease: %v %+v", err, lease)
	}
	if _, err := cs.CoreV1().Events(ns).Create(ctx, &corev1.Event{ObjectMeta: metav1.ObjectMeta{Name: "ev"},
		InvolvedObject: corev1.ObjectReference{Kind: "Pod", Name: "p", Namespace: ns}, Reason: "Test", Message: "hello", Type: "Normal"}, metav1.CreateOptions{}); err != nil {
		t.Fatalf("event: %v", err)
	}
	// A pod without containers is invalid, as on the real server.
	_, err = cs.CoreV1().Pods(ns).Create(ctx, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "empty"}}, metav1.CreateOptions{})
	if !apierrors.IsInvalid(err) {
		t.Errorf("pod without containers: %v, want Invalid", err)
	}
	if errs := logs.clientErrors(); len(errs) > 0 {
		t.Errorf("client-go logged errors:\n%s", strings.Join(errs, "\n"))
	}
}

// TestClientGoInformers runs typed, dynamic and metadata informers against apitest, with
// and without WatchList, through writes and injected faults, and checks that each cache
// converges to the server's state.
func TestClientGoInformers(t *testing.T) {
	for _, watchList := range []bool{false, true} {
		t.Run(fmt.Sprintf("watchList=%v", watchList), func(t *testing.T) {
			setWatchList(t, watchList)
			e := newEnv(t, apitest.Options{})
			logs := captureKlog(t)
			cs := kubernetes.NewForConfigOrDie(e.cfg)
			dyn := dynamic.NewForConfigOrDie(e.cfg)
			md := metadata.NewForConfigOrDie(e.cfg)
			ctx, stop := context.WithCancel(e.ctx)

			typed := informers.NewSharedInformerFactory(cs, 0)
			cmInf := typed.Core().V1().ConfigMaps()
			cmLister := cmInf.Lister()
			cmInf.Informer()
			gvr := schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}
			dynF := dynamicinformer.NewDynamicSharedInformerFactory(dyn, 0)
			dynLister := dynF.ForResource(gvr).Lister()
			mdF := metadatainformer.NewSharedInformerFactory(md, 0)
			mdLister := mdF.ForResource(gvr).Lister()
			typed.Start(ctx.Done())
			dynF.Start(ctx.Done())
			mdF.Start(ctx.Done())
			defer func() {
				stop()
				typed.Shutdown()
				dynF.Shutdown()
				mdF.Shutdown()
			}()
			typed.WaitForCacheSync(ctx.Done())
			dynF.WaitForCacheSync(ctx.Done())
			mdF.WaitForCacheSync(ctx.Done())

			write := func(i int) {
				name := fmt.Sprintf("cm-%d", i%7)
				if _, err := e.s.Get("configmaps", "default", name); err != nil {
					if _, err := e.s.Create("configmaps", map[string]any{"metadata": map[string]any{"name": name}, "data": map[string]any{"i": fmt.Sprint(i)}}); err != nil {
						t.Fatal(err)
					}
					return
				}
				if i%5 == 0 {
					if err := e.s.Delete("configmaps", "default", name); err != nil {
						t.Fatal(err)
					}
					return
				}
				if _, err := e.s.Mutate("configmaps", "default", name, func(o apitest.Object) { o["data"] = map[string]any{"i": fmt.Sprint(i)} }); err != nil {
					t.Fatal(err)
				}
			}
			for i := range 30 {
				write(i)
				switch i {
				case 10:
					e.s.Faults().CutWatches("configmaps")
				case 20:
					e.s.Faults().ExpireWatches("configmaps")
				}
			}
			// Converged: every cache holds what the server holds.
			want := func() map[string]string {
				objs, _, _ := e.s.List("configmaps", "default")
				m := map[string]string{}
				for _, o := range objs {
					m[o.Name()] = o.ResourceVersion()
				}
				return m
			}
			e.waitFor("the caches to converge", func() bool {
				w := want()
				tl, _ := cmLister.ConfigMaps("default").List(labels.Everything())
				dl, _ := dynLister.ByNamespace("default").List(labels.Everything())
				ml, _ := mdLister.ByNamespace("default").List(labels.Everything())
				if len(tl) != len(w) || len(dl) != len(w) || len(ml) != len(w) {
					return false
				}
				for _, o := range tl {
					if w[o.Name] != o.ResourceVersion {
						return false
					}
				}
				for _, o := range ml {
					if a, err := metaAccessor(o); err != nil || w[a.GetName()] != a.GetResourceVersion() {
						return false
					}
				}
				return true
			})
			for _, l := range logs.clientErrors() {
				// The injected faults end watches; everything else is a client-side error.
				if strings.Contains(l, "decode") || strings.Contains(l, "unable to") || strings.Contains(l, "Failed to") {
					t.Errorf("client-go: %s", l)
				}
			}
		})
	}
}
