package compat

import (
	"net/http"
	"sync"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	autoscalingv1 "k8s.io/api/autoscaling/v1"
	certificatesv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"

	"github.com/informerkit/informerkit/apitest"
	"github.com/informerkit/informerkit/internal/kubeschema"
)

type pathRecorder struct {
	mu    sync.Mutex
	paths []string
	base  http.RoundTripper
}

func (p *pathRecorder) RoundTrip(r *http.Request) (*http.Response, error) {
	p.mu.Lock()
	p.paths = append(p.paths, r.URL.Path)
	p.mu.Unlock()
	return p.base.RoundTrip(r)
}

// TestClientGoAggregatedDiscovery: client-go's discovery client reads apitest's aggregated
// discovery (two requests, /api and /apis, none per group version) and finds every
// resource of the kube-apiserver's table, with the preferred version of each group.
func TestClientGoAggregatedDiscovery(t *testing.T) {
	e := newEnv(t, apitest.Options{})
	rec := &pathRecorder{}
	cfg := rest.CopyConfig(e.cfg)
	cfg.Wrap(func(rt http.RoundTripper) http.RoundTripper { rec.base = rt; return rec })
	dc, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	groups, lists, err := dc.ServerGroupsAndResources()
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range rec.paths {
		if p != "/api" && p != "/apis" {
			t.Errorf("client-go fell back to legacy discovery: GET %s", p)
		}
	}
	found := map[string]bool{}
	for _, l := range lists {
		for _, r := range l.APIResources {
			found[l.GroupVersion+"/"+r.Name] = true
		}
	}
	for _, r := range kubeschema.Resources() {
		gv := r.Version
		if r.Group != "" {
			gv = r.Group + "/" + r.Version
		}
		if !found[gv+"/"+r.Resource] {
			t.Errorf("client-go does not find %s/%s", gv, r.Resource)
		}
		for _, s := range r.Subresources {
			if !found[gv+"/"+r.Resource+"/"+s.Name] {
				t.Errorf("client-go does not find %s/%s/%s", gv, r.Resource, s.Name)
			}
		}
	}
	for _, g := range groups {
		if g.Name == "autoscaling" && g.PreferredVersion.Version != "v2" {
			t.Errorf("autoscaling prefers %s", g.PreferredVersion.Version)
		}
	}
}

// TestClientGoTypedClientsOfEveryGroup creates, through client-go's typed clientset (protobuf
// bodies), objects of the kinds controller-runtime's suites and kubectl users meet beyond
// the core workloads: service accounts, cluster roles, ingresses, stateful sets, autoscalers
// (both versions), certificate signing requests, nodes.
func TestClientGoTypedClientsOfEveryGroup(t *testing.T) {
	e := newEnv(t, apitest.Options{})
	logs := captureKlog(t)
	cs, err := kubernetes.NewForConfig(e.cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx, ns := e.ctx, "default"
	labels := map[string]string{"app": "x"}
	check := func(what string, err error) {
		t.Helper()
		if err != nil {
			t.Errorf("%s: %v", what, err)
		}
	}
	_, err = cs.CoreV1().ServiceAccounts(ns).Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "sa"}}, metav1.CreateOptions{})
	check("serviceaccount", err)
	_, err = cs.RbacV1().ClusterRoles().Create(ctx, &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: "system:controller:x"},
		Rules: []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"pods"}, Verbs: []string{"get"}}}}, metav1.CreateOptions{})
	check("clusterrole named with colons", err)
	_, err = cs.NetworkingV1().Ingresses(ns).Create(ctx, &networkingv1.Ingress{ObjectMeta: metav1.ObjectMeta{Name: "ing"},
		Spec: networkingv1.IngressSpec{DefaultBackend: &networkingv1.IngressBackend{Service: &networkingv1.IngressServiceBackend{Name: "s", Port: networkingv1.ServiceBackendPort{Number: 80}}}}}, metav1.CreateOptions{})
	check("ingress", err)
	tmpl := corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels}, Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "nginx:1"}}}}
	sts, err := cs.AppsV1().StatefulSets(ns).Create(ctx, &appsv1.StatefulSet{ObjectMeta: metav1.ObjectMeta{Name: "sts"},
		Spec: appsv1.StatefulSetSpec{Selector: &metav1.LabelSelector{MatchLabels: labels}, Template: tmpl}}, metav1.CreateOptions{})
	check("statefulset", err)
	if err == nil && (sts.Generation != 1 || sts.Spec.Replicas == nil || *sts.Spec.Replicas != 1 || sts.Spec.PodManagementPolicy != appsv1.OrderedReadyPodManagement) {
		t.Errorf("statefulset defaults: generation %d, %+v", sts.Generation, sts.Spec)
	}
	scale, err := cs.AppsV1().StatefulSets(ns).GetScale(ctx, "sts", metav1.GetOptions{})
	check("statefulset scale", err)
	if err == nil && scale.Spec.Replicas != 1 {
		t.Errorf("statefulset scale %+v", scale)
	}
	_, err = cs.AutoscalingV1().HorizontalPodAutoscalers(ns).Create(ctx, &autoscalingv1.HorizontalPodAutoscaler{ObjectMeta: metav1.ObjectMeta{Name: "hpa"},
		Spec: autoscalingv1.HorizontalPodAutoscalerSpec{MaxReplicas: 3, TargetCPUUtilizationPercentage: ptr.To[int32](60),
			ScaleTargetRef: autoscalingv1.CrossVersionObjectReference{APIVersion: "apps/v1", Kind: "StatefulSet", Name: "sts"}}}, metav1.CreateOptions{})
	check("hpa v1", err)
	v2, err := cs.AutoscalingV2().HorizontalPodAutoscalers(ns).Get(ctx, "hpa", metav1.GetOptions{})
	check("hpa read at v2", err)
	if err == nil && (len(v2.Spec.Metrics) != 1 || v2.Spec.Metrics[0].Resource.Target.AverageUtilization == nil || *v2.Spec.Metrics[0].Resource.Target.AverageUtilization != 60) {
		t.Errorf("hpa at v2: %+v", v2.Spec.Metrics)
	}
	_, err = cs.AutoscalingV2().HorizontalPodAutoscalers(ns).List(ctx, metav1.ListOptions{})
	check("hpa list v2", err)
	_, err = cs.CertificatesV1().CertificateSigningRequests().Create(ctx, &certificatesv1.CertificateSigningRequest{ObjectMeta: metav1.ObjectMeta{Name: "csr"},
		Spec: certificatesv1.CertificateSigningRequestSpec{Request: []byte(testCSR), SignerName: "example.com/signer", Usages: []certificatesv1.KeyUsage{certificatesv1.UsageClientAuth}}}, metav1.CreateOptions{})
	check("csr", err)
	node, err := cs.CoreV1().Nodes().Create(ctx, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n1"}}, metav1.CreateOptions{})
	check("node", err)
	if err == nil && (len(node.Spec.Taints) != 1 || node.Spec.Taints[0].Key != "node.kubernetes.io/not-ready") {
		t.Errorf("node taints %+v (TaintNodesByCondition)", node.Spec.Taints)
	}
	_, err = cs.CoreV1().Services(ns).Get(ctx, "kubernetes", metav1.GetOptions{})
	check("the kubernetes Service", err)
	if errs := logs.clientErrors(); len(errs) > 0 {
		t.Errorf("client-go logged errors: %v", errs)
	}
}

// testCSR is a certificate request (PEM) the CSR stub of the kube-apiserver's storage test
// uses; apitest does not parse it.
const testCSR = "-----BEGIN CERTIFICATE REQUEST-----\nMIIBHjCBxAIBADAPMQ0wCwYDVQQDEwR0ZXN0MFkwEwYHKoZIzj0CAQYIKoZIzj0D\n-----END CERTIFICATE REQUEST-----\n"
