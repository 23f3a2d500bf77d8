package bench

import (
	"fmt"
	"hash/fnv"
	"math/rand/v2"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// The informer benchmarks' fixture: the pods of a cluster of Deployments, built the way the
// Deployment and ReplicaSet controllers, the ServiceAccount admission plugin, the scheduler
// and the kubelet build them, so that what is shared between pods in a real cluster is
// shared here and what is unique is unique:
//
//   - fleetDeployments Deployments over fleetNamespaces namespaces, fleetReplicas replicas
//     each (50,000 pods for 500 × 100). Every tenth Deployment is mid-rollout: half its
//     pods belong to the new ReplicaSet (new image, new pod-template-hash), half to the old.
//   - Per ReplicaSet (the pod template): labels (with pod-template-hash), annotations,
//     ownerReferences, containers (an app container with env, ports, resources of one of
//     four sizes, probes; an Envoy sidecar identical in every pod), a configMap volume,
//     tolerations, service account, and the container images and image IDs.
//   - Per pod: name (ReplicaSet name + 5 random characters), uid and creationTimestamp
//     (assigned by the server), resourceVersion, the projected service-account volume
//     "kube-api-access-xxxxx" (a random name per pod, mounted in every container, as the
//     admission plugin does), nodeName from a pool of fleetNodes nodes with that node's
//     hostIP, a unique podIP, startTime, five conditions and two container statuses with
//     per-pod timestamps, unique containerIDs and a restart count, and managedFields of
//     two managers: kube-controller-manager's (the template's fields and the owner's uid:
//     the same for the pods of a ReplicaSet but for its time) and the kubelet's (status
//     fields, with the pod's IP).
//
// Both implementations cache exactly the same objects: the server holds them once.
const (
	fleetNamespaces = 25
	fleetNodes      = 200
)

// fleetPod returns pod r of Deployment d (0 ≤ r < replicas).
func fleetPod(d, r, replicas int) *corev1.Pod {
	rng := rand.New(rand.NewPCG(uint64(d), uint64(r)))
	ns := fmt.Sprintf("team-%02d", d%fleetNamespaces)
	app := fmt.Sprintf("svc-%03d", d)
	rollout := d%10 == 9
	gen := 3 + d%4 // the Deployment's template generation
	if rollout && r%2 == 0 {
		gen++ // the new ReplicaSet's half
	}
	hash := templateHash(d, gen)
	rs := app + "-" + hash
	name := rs + "-" + randomSuffix(rng)
	rsUID := fmt.Sprintf("4f0e%04x-1b2c-4d5e-8f90-%012x", d, gen)
	image := fmt.Sprintf("registry.example.com/%s/%s:v1.%d.%d", ns, app, gen, d%13)
	imageID := func(img string) string {
		h := fnv.New64a()
		h.Write([]byte(img))
		return fmt.Sprintf("%s@sha256:%016x%016x%016x%016x", img[:len(img)-len(":v1.0.0")], h.Sum64(), h.Sum64()^1, h.Sum64()^2, h.Sum64()^3)
	}
	envoyImage := "registry.example.com/infra/envoy:v1.31.2"
	node := rng.IntN(fleetNodes)
	nodeName := fmt.Sprintf("ip-10-0-%d-%d.eu-west-1.compute.internal", node/50, 10+node%50)
	hostIP := fmt.Sprintf("10.0.%d.%d", node/50, 10+node%50)
	podN := d*replicas + r
	podIP := fmt.Sprintf("10.%d.%d.%d", 64+podN>>16, podN>>8&0xff, podN&0xff)
	saVolume := "kube-api-access-" + randomSuffix(rng)

	created := time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC).Add(time.Duration(d)*time.Hour + time.Duration(r)*time.Second)
	ts := func(after time.Duration) metav1.Time { return metav1.NewTime(created.Add(after)) }
	start := ts(time.Second)
	ctrl := true
	size := []struct{ cpuReq, memReq, cpuLim, memLim string }{
		{"100m", "128Mi", "500m", "256Mi"}, {"250m", "256Mi", "1", "512Mi"},
		{"500m", "512Mi", "2", "1Gi"}, {"1", "2Gi", "4", "4Gi"},
	}[d%4]
	probe := func(path string) *corev1.Probe {
		return &corev1.Probe{ProbeHandler: corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: path, Port: intstr.FromInt32(8080), Scheme: corev1.URISchemeHTTP}},
			InitialDelaySeconds: 5, TimeoutSeconds: 1, PeriodSeconds: 10, SuccessThreshold: 1, FailureThreshold: 3}
	}
	mounts := []corev1.VolumeMount{{Name: saVolume, ReadOnly: true, MountPath: "/var/run/secrets/kubernetes.io/serviceaccount"}}
	appContainer := corev1.Container{
		Name: app, Image: image,
		Env: []corev1.EnvVar{
			{Name: "LOG_LEVEL", Value: "info"},
			{Name: "HTTP_PORT", Value: "8080"},
			{Name: "POD_NAME", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{APIVersion: "v1", FieldPath: "metadata.name"}}},
			{Name: "POD_NAMESPACE", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{APIVersion: "v1", FieldPath: "metadata.namespace"}}},
			{Name: "DATABASE_URL", Value: fmt.Sprintf("postgres://%s-db.%s.svc.cluster.local:5432/%s?sslmode=require", app, ns, app)},
		},
		Ports: []corev1.ContainerPort{{Name: "http", ContainerPort: 8080, Protocol: corev1.ProtocolTCP}},
		Resources: corev1.ResourceRequirements{
			Limits:   corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(size.cpuLim), corev1.ResourceMemory: resource.MustParse(size.memLim)},
			Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(size.cpuReq), corev1.ResourceMemory: resource.MustParse(size.memReq)},
		},
		VolumeMounts:             append(mounts, corev1.VolumeMount{Name: "config", ReadOnly: true, MountPath: "/etc/" + app}),
		LivenessProbe:            probe("/healthz"),
		ReadinessProbe:           probe("/readyz"),
		TerminationMessagePath:   "/dev/termination-log",
		TerminationMessagePolicy: corev1.TerminationMessageReadFile,
		ImagePullPolicy:          corev1.PullIfNotPresent,
	}
	envoy := corev1.Container{Name: "envoy", Image: envoyImage,
		Ports:                    []corev1.ContainerPort{{Name: "admin", ContainerPort: 9901, Protocol: corev1.ProtocolTCP}},
		VolumeMounts:             mounts,
		TerminationMessagePath:   "/dev/termination-log",
		TerminationMessagePolicy: corev1.TerminationMessageReadFile,
		ImagePullPolicy:          corev1.PullIfNotPresent,
	}
	status := func(c corev1.Container, i int) corev1.ContainerStatus {
		return corev1.ContainerStatus{Name: c.Name, Ready: true, RestartCount: int32(rng.IntN(10) / 8), Started: &ctrl,
			State:       corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: ts(time.Duration(3+i) * time.Second)}},
			Image:       c.Image,
			ImageID:     imageID(c.Image),
			ContainerID: fmt.Sprintf("containerd://%016x%016x%016x%016x", rng.Uint64(), rng.Uint64(), rng.Uint64(), rng.Uint64()),
		}
	}
	cond := func(t corev1.PodConditionType, after time.Duration) corev1.PodCondition {
		return corev1.PodCondition{Type: t, Status: corev1.ConditionTrue, LastTransitionTime: ts(after)}
	}
	grace, tolSecs, prio, esl := int64(30), int64(300), int32(0), true
	preempt := corev1.PreemptLowerPriority
	expiry := int64(3607)
	fields := func(s string) *metav1.FieldsV1 { return &metav1.FieldsV1{Raw: []byte(s)} }
	return &corev1.Pod{
		TypeMeta: metav1.TypeMeta{Kind: "Pod", APIVersion: "v1"},
		ObjectMeta: metav1.ObjectMeta{
			Name: name, GenerateName: rs + "-", Namespace: ns,
			Labels: map[string]string{"app.kubernetes.io/name": app, "app.kubernetes.io/part-of": ns,
				"pod-template-hash": hash, "team": ns, "version": fmt.Sprintf("v1.%d.%d", gen, d%13)},
			Annotations: map[string]string{
				"kubectl.kubernetes.io/restartedAt": time.Date(2026, 2, 27, 9, 0, 0, 0, time.UTC).Add(time.Duration(d*7+gen) * time.Minute).Format(time.RFC3339),
				"prometheus.io/scrape":              "true",
				"prometheus.io/port":                "9090",
			},
			OwnerReferences: []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: rs,
				UID: types.UID(rsUID), Controller: &ctrl, BlockOwnerDeletion: &ctrl}},
			ManagedFields: []metav1.ManagedFieldsEntry{
				{Manager: "kube-controller-manager", Operation: metav1.ManagedFieldsOperationUpdate, APIVersion: "v1", Time: &start, FieldsType: "FieldsV1",
					FieldsV1: fields(`{"f:metadata":{"f:generateName":{},"f:labels":{".":{},"f:app.kubernetes.io/name":{},"f:app.kubernetes.io/part-of":{},"f:pod-template-hash":{},"f:team":{},"f:version":{}},"f:ownerReferences":{".":{},"k:{\"uid\":\"` + rsUID + `\"}":{}}},"f:spec":{"f:containers":{"k:{\"name\":\"` + app + `\"}":{".":{},"f:env":{".":{},"k:{\"name\":\"LOG_LEVEL\"}":{".":{},"f:name":{},"f:value":{}}},"f:image":{},"f:imagePullPolicy":{},"f:livenessProbe":{".":{},"f:failureThreshold":{},"f:httpGet":{".":{},"f:path":{},"f:port":{},"f:scheme":{}}},"f:name":{},"f:ports":{".":{},"k:{\"containerPort\":8080,\"protocol\":\"TCP\"}":{".":{},"f:containerPort":{},"f:name":{},"f:protocol":{}}},"f:resources":{".":{},"f:limits":{".":{},"f:cpu":{},"f:memory":{}},"f:requests":{".":{},"f:cpu":{},"f:memory":{}}}}},"f:dnsPolicy":{},"f:enableServiceLinks":{},"f:restartPolicy":{},"f:schedulerName":{},"f:securityContext":{},"f:terminationGracePeriodSeconds":{}}}`)},
				{Manager: "kubelet", Operation: metav1.ManagedFieldsOperationUpdate, APIVersion: "v1", Time: &start, FieldsType: "FieldsV1", Subresource: "status",
					FieldsV1: fields(`{"f:status":{"f:conditions":{"k:{\"type\":\"ContainersReady\"}":{".":{},"f:lastProbeTime":{},"f:lastTransitionTime":{},"f:status":{},"f:type":{}},"k:{\"type\":\"Initialized\"}":{".":{},"f:lastProbeTime":{},"f:lastTransitionTime":{},"f:status":{},"f:type":{}},"k:{\"type\":\"Ready\"}":{".":{},"f:lastProbeTime":{},"f:lastTransitionTime":{},"f:status":{},"f:type":{}}},"f:containerStatuses":{},"f:hostIP":{},"f:hostIPs":{},"f:phase":{},"f:podIP":{},"f:podIPs":{".":{},"k:{\"ip\":\"` + podIP + `\"}":{".":{},"f:ip":{}}},"f:startTime":{}}}`)},
			},
		},
		Spec: corev1.PodSpec{
			Volumes: []corev1.Volume{
				{Name: saVolume, VolumeSource: corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{
					Sources: []corev1.VolumeProjection{
						{ServiceAccountToken: &corev1.ServiceAccountTokenProjection{ExpirationSeconds: &expiry, Path: "token"}},
						{ConfigMap: &corev1.ConfigMapProjection{LocalObjectReference: corev1.LocalObjectReference{Name: "kube-root-ca.crt"}, Items: []corev1.KeyToPath{{Key: "ca.crt", Path: "ca.crt"}}}},
						{DownwardAPI: &corev1.DownwardAPIProjection{Items: []corev1.DownwardAPIVolumeFile{{Path: "namespace", FieldRef: &corev1.ObjectFieldSelector{APIVersion: "v1", FieldPath: "metadata.namespace"}}}}},
					}}}},
				{Name: "config", VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{LocalObjectReference: corev1.LocalObjectReference{Name: app + "-config"}}}},
			},
			Containers:                    []corev1.Container{appContainer, envoy},
			RestartPolicy:                 corev1.RestartPolicyAlways,
			TerminationGracePeriodSeconds: &grace,
			DNSPolicy:                     corev1.DNSClusterFirst,
			ServiceAccountName:            app,
			DeprecatedServiceAccount:      app,
			NodeName:                      nodeName,
			SecurityContext:               &corev1.PodSecurityContext{},
			SchedulerName:                 "default-scheduler",
			Tolerations: []corev1.Toleration{
				{Key: "node.kubernetes.io/not-ready", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute, TolerationSeconds: &tolSecs},
				{Key: "node.kubernetes.io/unreachable", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute, TolerationSeconds: &tolSecs},
			},
			Priority: &prio, EnableServiceLinks: &esl, PreemptionPolicy: &preempt,
		},
		Status: corev1.PodStatus{
			Phase: corev1.PodRunning,
			Conditions: []corev1.PodCondition{
				cond("PodReadyToStartContainers", 5*time.Second), cond(corev1.PodInitialized, 2*time.Second),
				cond(corev1.PodReady, 9*time.Second), cond(corev1.ContainersReady, 9*time.Second), cond(corev1.PodScheduled, 0),
			},
			HostIP:            hostIP,
			HostIPs:           []corev1.HostIP{{IP: hostIP}},
			PodIP:             podIP,
			PodIPs:            []corev1.PodIP{{IP: podIP}},
			StartTime:         &start,
			ContainerStatuses: []corev1.ContainerStatus{status(appContainer, 0), status(envoy, 1)},
			QOSClass:          corev1.PodQOSBurstable,
		},
	}
}

// templateHash is a pod-template-hash for generation gen of Deployment d: ten characters of
// the alphabet the ReplicaSet controller uses.
func templateHash(d, gen int) string {
	rng := rand.New(rand.NewPCG(uint64(d)<<32|uint64(gen), 0x5eed))
	const alphabet = "bcdfghjklmnpqrstvwxz2456789"
	b := make([]byte, 10)
	for i := range b {
		b[i] = alphabet[rng.IntN(len(alphabet))]
	}
	return string(b)
}

// randomSuffix is five characters of the alphabet generateName and the admission plugin use.
func randomSuffix(rng *rand.Rand) string {
	const alphabet = "bcdfghjklmnpqrstvwxz2456789"
	b := make([]byte, 5)
	for i := range b {
		b[i] = alphabet[rng.IntN(len(alphabet))]
	}
	return string(b)
}
