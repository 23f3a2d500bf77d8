package bench

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// Fixtures of the decoding benchmarks, in ../testdata/watch/apiclient/. They are
// synthesized, not recorded: realistic Deployment-managed pods (two containers, probes,
// env, projected service-account volume, tolerations, five conditions, managedFields of
// two managers), 4-6 KB each, encoded exactly as the API server encodes them.
const (
	fixtureDir       = "../testdata/watch/apiclient"
	watchFixture     = fixtureDir + "/pods-watch.jsonl"
	listFixture      = fixtureDir + "/pods-list-500.json"
	watchEventsCount = 400
	listItemsCount   = 500
)

// TestWriteDecodeFixtures regenerates the fixtures when INFORMERKIT_WRITE_FIXTURES=1.
func TestWriteDecodeFixtures(t *testing.T) {
	if os.Getenv("INFORMERKIT_WRITE_FIXTURES") != "1" {
		t.Skip("set INFORMERKIT_WRITE_FIXTURES=1 to regenerate the decoding fixtures")
	}
	if err := os.MkdirAll(fixtureDir, 0o755); err != nil {
		t.Fatal(err)
	}
	f, err := os.Create(watchFixture)
	if err != nil {
		t.Fatal(err)
	}
	w := bufio.NewWriter(f)
	rv := 100000
	for i := 0; i < watchEventsCount; i++ {
		rv += 3
		typ := "MODIFIED"
		switch {
		case i < 40:
			typ = "ADDED"
		case i%37 == 0:
			typ = "DELETED"
		}
		var obj any = syntheticPod(i%120, rv)
		if i%50 == 49 {
			typ = "BOOKMARK"
			obj = map[string]any{"kind": "Pod", "apiVersion": "v1", "metadata": map[string]any{"resourceVersion": fmt.Sprint(rv)}}
		}
		line, err := json.Marshal(map[string]any{"type": typ, "object": obj})
		if err != nil {
			t.Fatal(err)
		}
		w.Write(append(line, '\n'))
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	f.Close()

	list := corev1.PodList{TypeMeta: metav1.TypeMeta{Kind: "PodList", APIVersion: "v1"},
		ListMeta: metav1.ListMeta{ResourceVersion: fmt.Sprint(rv), Continue: "eyJ2IjoibWV0YS5rOHMuaW8vdjEiLCJydiI6MTAwMDAwLCJzdGFydCI6InBvZC00OTkifQ"}}
	for i := 0; i < listItemsCount; i++ {
		p := syntheticPod(i, 100000+i)
		p.TypeMeta = metav1.TypeMeta{}
		list.Items = append(list.Items, *p)
	}
	data, err := json.Marshal(&list)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(listFixture, append(data, '\n'), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("wrote %s and %s", filepath.Base(watchFixture), filepath.Base(listFixture))
}

func syntheticPod(i, rv int) *corev1.Pod {
	ts := metav1.NewTime(time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC).Add(time.Duration(i) * time.Minute))
	app := []string{"checkout", "payments", "search", "frontend", "inventory"}[i%5]
	rs := fmt.Sprintf("%s-7d9c%03dbf5", app, i%17)
	name := fmt.Sprintf("%s-%05x", rs, 0x1a2b3+i*7919)
	uid := types.UID(fmt.Sprintf("8c1f%04x-55aa-4c1e-9f0b-%012x", i, 0x3c2d1e0f+i))
	ctrl := true
	fields := func(s string) *metav1.FieldsV1 { return &metav1.FieldsV1{Raw: []byte(s)} }
	env := func(c int) []corev1.EnvVar {
		out := []corev1.EnvVar{
			{Name: "LOG_LEVEL", Value: "info"},
			{Name: "HTTP_PORT", Value: "8080"},
			{Name: "POD_NAME", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{APIVersion: "v1", FieldPath: "metadata.name"}}},
			{Name: "POD_NAMESPACE", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{APIVersion: "v1", FieldPath: "metadata.namespace"}}},
		}
		if c == 0 {
			out = append(out, corev1.EnvVar{Name: "DATABASE_URL", Value: fmt.Sprintf("postgres://%s-db.prod.svc.cluster.local:5432/%s?sslmode=require", app, app)})
		}
		return out
	}
	probe := func(path string) *corev1.Probe {
		return &corev1.Probe{ProbeHandler: corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: path, Port: intstr.FromInt32(8080), Scheme: corev1.URISchemeHTTP}},
			InitialDelaySeconds: 5, TimeoutSeconds: 1, PeriodSeconds: 10, SuccessThreshold: 1, FailureThreshold: 3}
	}
	container := func(c int) corev1.Container {
		n := app
		img := fmt.Sprintf("registry.example.com/shop/%s:v1.%d.%d", app, 20+i%9, i%13)
		if c == 1 {
			return corev1.Container{Name: "envoy", Image: "registry.example.com/infra/envoy:v1.31.2",
				Ports:                    []corev1.ContainerPort{{Name: "admin", ContainerPort: 9901, Protocol: corev1.ProtocolTCP}},
				TerminationMessagePath:   "/dev/termination-log",
				TerminationMessagePolicy: corev1.TerminationMessageReadFile,
				ImagePullPolicy:          corev1.PullIfNotPresent,
			}
		}
		return corev1.Container{
			Name: n, Image: img, Env: env(c),
			Ports: []corev1.ContainerPort{{Name: "http", ContainerPort: int32(8080 + c), Protocol: corev1.ProtocolTCP}},
			Resources: corev1.ResourceRequirements{
				Limits:   corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1"), corev1.ResourceMemory: resource.MustParse("512Mi")},
				Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("250m"), corev1.ResourceMemory: resource.MustParse("256Mi")},
			},
			VolumeMounts:             []corev1.VolumeMount{{Name: "kube-api-access-x7k2p", ReadOnly: true, MountPath: "/var/run/secrets/kubernetes.io/serviceaccount"}},
			LivenessProbe:            probe("/healthz"),
			ReadinessProbe:           probe("/readyz"),
			TerminationMessagePath:   "/dev/termination-log",
			TerminationMessagePolicy: corev1.TerminationMessageReadFile,
			ImagePullPolicy:          corev1.PullIfNotPresent,
		}
	}
	grace, tolSecs, prio, esl := int64(30), int64(300), int32(0), true
	preempt := corev1.PreemptLowerPriority
	expiry := int64(3607)
	node := fmt.Sprintf("ip-10-0-%d-%d.eu-west-1.compute.internal", i%8, 10+i%200)
	status := func(c int) corev1.ContainerStatus {
		n := app
		if c == 1 {
			n = "envoy"
		}
		return corev1.ContainerStatus{Name: n, Ready: true, RestartCount: int32(i % 3), Started: &ctrl,
			State:       corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: ts}},
			Image:       container(c).Image,
			ImageID:     fmt.Sprintf("registry.example.com/shop/%s@sha256:%064x", n, 0xabcdef1234+i*31+c),
			ContainerID: fmt.Sprintf("containerd://%064x", 0x9f8e7d6c5b+i*17+c),
		}
	}
	cond := func(t corev1.PodConditionType) corev1.PodCondition {
		return corev1.PodCondition{Type: t, Status: corev1.ConditionTrue, LastTransitionTime: ts}
	}
	return &corev1.Pod{
		TypeMeta: metav1.TypeMeta{Kind: "Pod", APIVersion: "v1"},
		ObjectMeta: metav1.ObjectMeta{
			Name: name, GenerateName: rs + "-", Namespace: "shop-" + app, UID: uid,
			ResourceVersion: fmt.Sprint(rv), CreationTimestamp: ts,
			Labels: map[string]string{"app.kubernetes.io/name": app, "app.kubernetes.io/part-of": "shop", "pod-template-hash": rs[len(app)+1:],
				"team": "commerce", "version": fmt.Sprintf("v1.%d", 20+i%9)},
			Annotations: map[string]string{
				"kubectl.kubernetes.io/restartedAt": "2026-02-27T09:12:44Z",
				"prometheus.io/scrape":              "true",
				"prometheus.io/port":                "9090",
			},
			OwnerReferences: []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: rs,
				UID: types.UID(fmt.Sprintf("4f0e%04x-1b2c-4d5e-8f90-%012x", i%17, 0x77+i%17)), Controller: &ctrl, BlockOwnerDeletion: &ctrl}},
			ManagedFields: []metav1.ManagedFieldsEntry{
				{Manager: "kube-controller-manager", Operation: metav1.ManagedFieldsOperationUpdate, APIVersion: "v1", Time: &ts, FieldsType: "FieldsV1",
					FieldsV1: fields(`{"f:metadata":{"f:generateName":{},"f:labels":{".":{},"f:app.kubernetes.io/name":{},"f:app.kubernetes.io/part-of":{},"f:pod-template-hash":{},"f:team":{},"f:version":{}},"f:ownerReferences":{".":{},"k:{\"uid\":\"` + string(uid) + `\"}":{}}},"f:spec":{"f:containers":{"k:{\"name\":\"` + app + `\"}":{".":{},"f:env":{".":{},"k:{\"name\":\"LOG_LEVEL\"}":{".":{},"f:name":{},"f:value":{}}},"f:image":{},"f:imagePullPolicy":{},"f:livenessProbe":{".":{},"f:failureThreshold":{},"f:httpGet":{".":{},"f:path":{},"f:port":{},"f:scheme":{}}},"f:name":{},"f:ports":{".":{},"k:{\"containerPort\":8080,\"protocol\":\"TCP\"}":{".":{},"f:containerPort":{},"f:name":{},"f:protocol":{}}},"f:resources":{".":{},"f:limits":{".":{},"f:cpu":{},"f:memory":{}},"f:requests":{".":{},"f:cpu":{},"f:memory":{}}}}},"f:dnsPolicy":{},"f:enableServiceLinks":{},"f:restartPolicy":{},"f:schedulerName":{},"f:securityContext":{},"f:terminationGracePeriodSeconds":{}}}`)},
				{Manager: "kubelet", Operation: metav1.ManagedFieldsOperationUpdate, APIVersion: "v1", Time: &ts, FieldsType: "FieldsV1", Subresource: "status",
					FieldsV1: fields(`{"f:status":{"f:conditions":{"k:{\"type\":\"ContainersReady\"}":{".":{},"f:lastProbeTime":{},"f:lastTransitionTime":{},"f:status":{},"f:type":{}},"k:{\"type\":\"Initialized\"}":{".":{},"f:lastProbeTime":{},"f:lastTransitionTime":{},"f:status":{},"f:type":{}},"k:{\"type\":\"Ready\"}":{".":{},"f:lastProbeTime":{},"f:lastTransitionTime":{},"f:status":{},"f:type":{}}},"f:containerStatuses":{},"f:hostIP":{},"f:hostIPs":{},"f:phase":{},"f:podIP":{},"f:podIPs":{".":{},"k:{\"ip\":\"10.1.2.3\"}":{".":{},"f:ip":{}}},"f:startTime":{}}}`)},
			},
		},
		Spec: corev1.PodSpec{
			Volumes: []corev1.Volume{{Name: "kube-api-access-x7k2p", VolumeSource: corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{
				Sources: []corev1.VolumeProjection{
					{ServiceAccountToken: &corev1.ServiceAccountTokenProjection{ExpirationSeconds: &expiry, Path: "token"}},
					{ConfigMap: &corev1.ConfigMapProjection{LocalObjectReference: corev1.LocalObjectReference{Name: "kube-root-ca.crt"}, Items: []corev1.KeyToPath{{Key: "ca.crt", Path: "ca.crt"}}}},
				}}}}},
			Containers:                    []corev1.Container{container(0), container(1)},
			RestartPolicy:                 corev1.RestartPolicyAlways,
			TerminationGracePeriodSeconds: &grace,
			DNSPolicy:                     corev1.DNSClusterFirst,
			ServiceAccountName:            app,
			NodeName:                      node,
			SecurityContext:               &corev1.PodSecurityContext{},
			SchedulerName:                 "default-scheduler",
			Tolerations: []corev1.Toleration{
				{Key: "node.kubernetes.io/not-ready", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute, TolerationSeconds: &tolSecs},
				{Key: "node.kubernetes.io/unreachable", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute, TolerationSeconds: &tolSecs},
			},
			Priority: &prio, EnableServiceLinks: &esl, PreemptionPolicy: &preempt,
		},
		Status: corev1.PodStatus{
			Phase:             corev1.PodRunning,
			Conditions:        []corev1.PodCondition{cond("PodReadyToStartContainers"), cond(corev1.PodInitialized), cond(corev1.PodReady), cond(corev1.ContainersReady), cond(corev1.PodScheduled)},
			HostIP:            fmt.Sprintf("10.0.%d.%d", i%8, 10+i%200),
			HostIPs:           []corev1.HostIP{{IP: fmt.Sprintf("10.0.%d.%d", i%8, 10+i%200)}},
			PodIP:             fmt.Sprintf("10.1.%d.%d", i%250, 2+i%250),
			PodIPs:            []corev1.PodIP{{IP: fmt.Sprintf("10.1.%d.%d", i%250, 2+i%250)}},
			StartTime:         &ts,
			ContainerStatuses: []corev1.ContainerStatus{status(0), status(1)},
			QOSClass:          corev1.PodQOSBurstable,
		},
	}
}
