// Package fleet builds and writes the realistic workload of the real-server benchmarks: the
// Deployments of a cluster with their pods (as the Deployment and ReplicaSet controllers,
// the scheduler and the kubelet would have written them, status included), and configmaps
// with unique payloads. Seed writes them to a kube-apiserver through client-go.
package fleet

import (
	"context"
	"fmt"
	"hash/fnv"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/kubernetes"
)

// Namespaces is the number of namespaces the fleet is spread over.
const Namespaces = 20

// ReplicaMix is the replica counts of consecutive Deployments, repeated: most services run
// one to three pods, a few run more.
var ReplicaMix = []int{1, 1, 1, 2, 2, 2, 3, 3, 5, 10}

const nodes = 200

// Plan is the list of Deployments (their replica counts) that makes at least pods pods.
func Plan(pods int) []int {
	var plan []int
	for n := 0; n < pods; {
		r := ReplicaMix[len(plan)%len(ReplicaMix)]
		r = min(r, pods-n)
		plan = append(plan, r)
		n += r
	}
	return plan
}

// Namespace returns the namespace of Deployment d.
func Namespace(d int) string { return fmt.Sprintf("team-%02d", d%Namespaces) }

func app(d int) string { return fmt.Sprintf("svc-%04d", d) }

// templateHash is a pod-template-hash: ten characters of the ReplicaSet controller's
// alphabet.
func templateHash(d int) string {
	rng := rand.New(rand.NewPCG(uint64(d), 0x5eed))
	return randomString(rng, 10)
}

func randomString(rng *rand.Rand, n int) string {
	const alphabet = "bcdfghjklmnpqrstvwxz2456789"
	b := make([]byte, n)
	for i := range b {
		b[i] = alphabet[rng.IntN(len(alphabet))]
	}
	return string(b)
}

type size struct{ cpuReq, memReq, cpuLim, memLim string }

var sizes = []size{
	{"100m", "128Mi", "500m", "256Mi"}, {"250m", "256Mi", "1", "512Mi"},
	{"500m", "512Mi", "2", "1Gi"}, {"1", "2Gi", "4", "4Gi"},
}

// template returns the pod template of Deployment d.
func template(d int) corev1.PodTemplateSpec {
	ns, a := Namespace(d), app(d)
	sz := sizes[d%len(sizes)]
	probe := func(path string) *corev1.Probe {
		return &corev1.Probe{ProbeHandler: corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: path, Port: intstr.FromInt32(8080), Scheme: corev1.URISchemeHTTP}},
			InitialDelaySeconds: 5, TimeoutSeconds: 1, PeriodSeconds: 10, SuccessThreshold: 1, FailureThreshold: 3}
	}
	fieldEnv := func(name, path string) corev1.EnvVar {
		return corev1.EnvVar{Name: name, ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{APIVersion: "v1", FieldPath: path}}}
	}
	return corev1.PodTemplateSpec{
		ObjectMeta: metav1.ObjectMeta{
			Labels: map[string]string{"app.kubernetes.io/name": a, "app.kubernetes.io/part-of": ns, "team": ns,
				"version": fmt.Sprintf("v1.%d", d%13)},
			Annotations: map[string]string{"prometheus.io/scrape": "true", "prometheus.io/port": "9090"},
		},
		Spec: corev1.PodSpec{
			Volumes: []corev1.Volume{{Name: "config", VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{
				LocalObjectReference: corev1.LocalObjectReference{Name: a + "-config"}}}}},
			Containers: []corev1.Container{{
				Name: a, Image: fmt.Sprintf("registry.example.com/%s/%s:v1.%d", ns, a, d%13),
				Env: []corev1.EnvVar{
					{Name: "LOG_LEVEL", Value: "info"}, {Name: "HTTP_PORT", Value: "8080"},
					fieldEnv("POD_NAME", "metadata.name"), fieldEnv("POD_NAMESPACE", "metadata.namespace"),
					{Name: "DATABASE_URL", Value: fmt.Sprintf("postgres://%s-db.%s.svc.cluster.local:5432/%s?sslmode=require", a, ns, a)},
				},
				Ports: []corev1.ContainerPort{{Name: "http", ContainerPort: 8080, Protocol: corev1.ProtocolTCP}},
				Resources: corev1.ResourceRequirements{
					Limits:   corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(sz.cpuLim), corev1.ResourceMemory: resource.MustParse(sz.memLim)},
					Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(sz.cpuReq), corev1.ResourceMemory: resource.MustParse(sz.memReq)},
				},
				VolumeMounts:   []corev1.VolumeMount{{Name: "config", ReadOnly: true, MountPath: "/etc/" + a}},
				LivenessProbe:  probe("/healthz"),
				ReadinessProbe: probe("/readyz"),
			}, {
				Name: "envoy", Image: "registry.example.com/infra/envoy:v1.31.2",
				Args:  []string{"--config-path", "/etc/envoy/envoy.yaml", "--log-level", "warn"},
				Ports: []corev1.ContainerPort{{Name: "admin", ContainerPort: 9901, Protocol: corev1.ProtocolTCP}},
				Resources: corev1.ResourceRequirements{
					Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("50m"), corev1.ResourceMemory: resource.MustParse("64Mi")},
				},
				ReadinessProbe: &corev1.Probe{ProbeHandler: corev1.ProbeHandler{TCPSocket: &corev1.TCPSocketAction{Port: intstr.FromInt32(9901)}},
					PeriodSeconds: 10, TimeoutSeconds: 1, SuccessThreshold: 1, FailureThreshold: 3},
			}},
			ServiceAccountName: a,
			Tolerations: []corev1.Toleration{
				{Key: "node.kubernetes.io/not-ready", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute, TolerationSeconds: ptr(int64(300))},
				{Key: "node.kubernetes.io/unreachable", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute, TolerationSeconds: ptr(int64(300))},
			},
		},
	}
}

func ptr[T any](v T) *T { return &v }

// Deployment returns Deployment d with replicas replicas and the status the Deployment
// controller would have written once they are all available.
func Deployment(d, replicas int) *appsv1.Deployment {
	a := app(d)
	tmpl := template(d)
	created := time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC).Add(time.Duration(d) * time.Minute)
	cond := func(t appsv1.DeploymentConditionType, reason, msg string) appsv1.DeploymentCondition {
		return appsv1.DeploymentCondition{Type: t, Status: corev1.ConditionTrue, Reason: reason, Message: msg,
			LastUpdateTime: metav1.NewTime(created.Add(20 * time.Second)), LastTransitionTime: metav1.NewTime(created.Add(20 * time.Second))}
	}
	r := int32(replicas)
	return &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: a, Namespace: Namespace(d),
			Labels:      map[string]string{"app.kubernetes.io/name": a, "team": Namespace(d)},
			Annotations: map[string]string{"deployment.kubernetes.io/revision": "1"}},
		Spec: appsv1.DeploymentSpec{
			Replicas: &r,
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app.kubernetes.io/name": a}},
			Template: tmpl,
		},
		Status: appsv1.DeploymentStatus{
			ObservedGeneration: 1, Replicas: r, UpdatedReplicas: r, ReadyReplicas: r, AvailableReplicas: r,
			Conditions: []appsv1.DeploymentCondition{
				cond(appsv1.DeploymentAvailable, "MinimumReplicasAvailable", "Deployment has minimum availability."),
				cond(appsv1.DeploymentProgressing, "NewReplicaSetAvailable", fmt.Sprintf("ReplicaSet %q has successfully progressed.", a+"-"+templateHash(d))),
			},
		},
	}
}

// Pod returns pod r of Deployment d, owned by its ReplicaSet (rsUID), as created by the
// ReplicaSet controller and scheduled; PodStatus returns the status the kubelet writes.
func Pod(d, r int, rsUID types.UID) *corev1.Pod {
	rng := rand.New(rand.NewPCG(uint64(d), uint64(r)))
	tmpl := template(d)
	hash := templateHash(d)
	rs := app(d) + "-" + hash
	labels := map[string]string{"pod-template-hash": hash}
	for k, v := range tmpl.Labels {
		labels[k] = v
	}
	node := rng.IntN(nodes)
	spec := tmpl.Spec
	spec.NodeName = fmt.Sprintf("ip-10-0-%d-%d.eu-west-1.compute.internal", node/50, 10+node%50)
	// The ServiceAccount admission plugin's projected token volume, a random name per pod.
	sa := "kube-api-access-" + randomString(rng, 5)
	spec.Volumes = append([]corev1.Volume{{Name: sa, VolumeSource: corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{
		Sources: []corev1.VolumeProjection{
			{ServiceAccountToken: &corev1.ServiceAccountTokenProjection{ExpirationSeconds: ptr(int64(3607)), Path: "token"}},
			{ConfigMap: &corev1.ConfigMapProjection{LocalObjectReference: corev1.LocalObjectReference{Name: "kube-root-ca.crt"},
				Items: []corev1.KeyToPath{{Key: "ca.crt", Path: "ca.crt"}}}},
			{DownwardAPI: &corev1.DownwardAPIProjection{Items: []corev1.DownwardAPIVolumeFile{{Path: "namespace",
				FieldRef: &corev1.ObjectFieldSelector{APIVersion: "v1", FieldPath: "metadata.namespace"}}}}},
		}, DefaultMode: ptr(int32(420))}}}}, spec.Volumes...)
	spec.Containers = append([]corev1.Container(nil), spec.Containers...)
	for i := range spec.Containers {
		c := &spec.Containers[i]
		c.VolumeMounts = append([]corev1.VolumeMount{{Name: sa, ReadOnly: true, MountPath: "/var/run/secrets/kubernetes.io/serviceaccount"}}, c.VolumeMounts...)
	}
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Name: rs + "-" + randomString(rng, 5), GenerateName: rs + "-", Namespace: Namespace(d),
			Labels: labels, Annotations: tmpl.Annotations,
			OwnerReferences: []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: rs, UID: rsUID,
				Controller: ptr(true), BlockOwnerDeletion: ptr(true)}},
		},
		Spec: spec,
	}
}

// PodStatus sets the status of a running pod (pod n of the fleet) on p.
func PodStatus(p *corev1.Pod, n int) {
	rng := rand.New(rand.NewPCG(uint64(n), 7))
	start := p.CreationTimestamp.Add(time.Second)
	ts := func(after time.Duration) metav1.Time { return metav1.NewTime(start.Add(after).Truncate(time.Second)) }
	node := p.Spec.NodeName
	var a, b, c, dd int
	fmt.Sscanf(node, "ip-%d-%d-%d-%d", &a, &b, &c, &dd)
	hostIP := fmt.Sprintf("%d.%d.%d.%d", a, b, c, dd)
	podIP := fmt.Sprintf("10.%d.%d.%d", 64+n>>16, n>>8&0xff, n&0xff)
	cond := func(t corev1.PodConditionType, after time.Duration) corev1.PodCondition {
		return corev1.PodCondition{Type: t, Status: corev1.ConditionTrue, LastTransitionTime: ts(after)}
	}
	p.Status = corev1.PodStatus{
		Phase: corev1.PodRunning,
		Conditions: []corev1.PodCondition{
			cond("PodReadyToStartContainers", 5*time.Second), cond(corev1.PodInitialized, 2*time.Second),
			cond(corev1.PodReady, 9*time.Second), cond(corev1.ContainersReady, 9*time.Second), cond(corev1.PodScheduled, 0),
		},
		HostIP: hostIP, HostIPs: []corev1.HostIP{{IP: hostIP}},
		PodIP: podIP, PodIPs: []corev1.PodIP{{IP: podIP}},
		StartTime: ptr(ts(0)),
		QOSClass:  corev1.PodQOSBurstable,
	}
	for i, ctr := range p.Spec.Containers {
		h := fnv.New64a()
		h.Write([]byte(ctr.Image))
		s := h.Sum64()
		p.Status.ContainerStatuses = append(p.Status.ContainerStatuses, corev1.ContainerStatus{
			Name: ctr.Name, Ready: true, RestartCount: int32(rng.IntN(10) / 8), Started: ptr(true),
			State:       corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: ts(time.Duration(3+i) * time.Second)}},
			Image:       ctr.Image,
			ImageID:     fmt.Sprintf("%s@sha256:%016x%016x%016x%016x", ctr.Image, s, s^1, s^2, s^3),
			ContainerID: fmt.Sprintf("containerd://%016x%016x%016x%016x", rng.Uint64(), rng.Uint64(), rng.Uint64(), rng.Uint64()),
		})
	}
}

// ConfigMap returns configmap i: a few keys, one of them a unique payload of about 1 KB.
func ConfigMap(i int) *corev1.ConfigMap {
	rng := rand.New(rand.NewPCG(uint64(i), 11))
	payload := make([]byte, 1024)
	for j := range payload {
		payload[j] = "abcdefghijklmnopqrstuvwxyz0123456789\n"[rng.IntN(37)]
	}
	return &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("config-%05d", i), Namespace: Namespace(i),
			Labels: map[string]string{"app.kubernetes.io/managed-by": "bench", "shard": fmt.Sprint(i % 16)}},
		Data: map[string]string{
			"settings.yaml": string(payload),
			"LOG_LEVEL":     "info",
			"id":            fmt.Sprint(i),
		},
	}
}

// Counts says how many objects Seed wrote.
type Counts struct{ Deployments, Pods, ConfigMaps int }

// Seed writes the fleet of about pods pods and configMaps configmaps with workers parallel
// writers: namespaces, Deployments (status through the status subresource) and their pods
// (status likewise), and the configmaps. Objects that exist already are left as they are,
// so a second Seed with the same figures writes nothing.
func Seed(ctx context.Context, cs kubernetes.Interface, pods, configMaps, workers int, progress func(string)) (Counts, error) {
	for n := range Namespaces {
		ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: Namespace(n)}}
		if _, err := cs.CoreV1().Namespaces().Create(ctx, ns, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
			return Counts{}, err
		}
	}
	plan := Plan(pods)
	first := make([]int, len(plan)) // fleet number of each Deployment's first pod
	for d := 1; d < len(plan); d++ {
		first[d] = first[d-1] + plan[d-1]
	}
	var done atomic.Int64
	report := func(what string, total int) {
		if n := done.Add(1); progress != nil && n%2000 == 0 {
			progress(fmt.Sprintf("%s %d/%d", what, n, total))
		}
	}
	err := Parallel(ctx, workers, len(plan), func(d int) error {
		created, err := CreateDeployment(ctx, cs, Deployment(d, plan[d]))
		if err != nil || created == nil {
			return err
		}
		// The ReplicaSet's uid, a stand-in: no ReplicaSet object is written (no controller
		// runs to adopt the pods).
		rsUID := types.UID(fmt.Sprintf("4f0e%04x-1b2c-4d5e-8f90-%012x", d%0x10000, d))
		for r := range plan[d] {
			p := Pod(d, r, rsUID)
			cp, err := cs.CoreV1().Pods(p.Namespace).Create(ctx, p, metav1.CreateOptions{})
			if err != nil {
				return err
			}
			PodStatus(cp, first[d]+r)
			if _, err := cs.CoreV1().Pods(p.Namespace).UpdateStatus(ctx, cp, metav1.UpdateOptions{}); err != nil {
				return err
			}
			report("pods", pods)
		}
		return nil
	})
	if err != nil {
		return Counts{}, err
	}
	done.Store(0)
	err = Parallel(ctx, workers, configMaps, func(i int) error {
		cm := ConfigMap(i)
		_, err := cs.CoreV1().ConfigMaps(cm.Namespace).Create(ctx, cm, metav1.CreateOptions{})
		if apierrors.IsAlreadyExists(err) {
			err = nil
		}
		report("configmaps", configMaps)
		return err
	})
	return Counts{Deployments: len(plan), Pods: pods, ConfigMaps: configMaps}, err
}

// CreateDeployment creates dep, then writes its status through the status subresource. It
// returns the created Deployment, or nil if one of that name exists already.
func CreateDeployment(ctx context.Context, cs kubernetes.Interface, dep *appsv1.Deployment) (*appsv1.Deployment, error) {
	created, err := cs.AppsV1().Deployments(dep.Namespace).Create(ctx, dep, metav1.CreateOptions{})
	if apierrors.IsAlreadyExists(err) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	created.Status = dep.Status
	return cs.AppsV1().Deployments(dep.Namespace).UpdateStatus(ctx, created, metav1.UpdateOptions{})
}

// Parallel runs fn(0..n-1) on workers goroutines and returns the first error.
func Parallel(ctx context.Context, workers, n int, fn func(int) error) error {
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	var next atomic.Int64
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for ctx.Err() == nil {
				i := int(next.Add(1) - 1)
				if i >= n {
					return
				}
				if err := fn(i); err != nil {
					cancel(err)
					return
				}
			}
		})
	}
	wg.Wait()
	return context.Cause(ctx)
}
