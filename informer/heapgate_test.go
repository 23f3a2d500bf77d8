package informer

import (
	"context"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"log/slog"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"github.com/informerkit/informerkit/apiclient"
	"github.com/informerkit/informerkit/apitest"
	"github.com/informerkit/informerkit/meta"
)

// The live-heap regression gate (as kube-rs's memory check, which fails at 110% of its
// baseline): an informer of the gate's fleet (1,000 pods of the real-server benchmark's shape),
// with the defaults, must not cache more bytes per pod than heapGateSlack times the committed
// baseline (testdata/heapgate.json). About 10 s under -race on a loaded 2-core machine, most
// of it apitest storing the pods.
//
// The figure is heap, not time, so it does not depend on CPU load; what does depend on timing
// (garbage not yet collected, sync.Pool contents, buffers of requests in flight) is removed by
// measuring after the informer has synced and everything it queued is processed, with
// runtime.GC twice before each reading, and by dividing by enough pods that the informer's
// fixed costs (goroutines' heap, the watch's buffers) are a few percent at most.
//
// To update the baseline after a change that makes the cache larger on purpose (or smaller:
// lower it, so that the gate keeps its margin):
//
//	INFORMERKIT_UPDATE_HEAP_BASELINE=1 go test -race -run TestLiveHeapGate ./informer/
//	INFORMERKIT_UPDATE_HEAP_BASELINE=1 go test -run TestLiveHeapGate ./informer/
//
// (make test runs with -race; allocation sizes differ slightly without it, so each mode has
// its own entry) and commit testdata/heapgate.json with the reason in the message.
const (
	heapGatePods    = 1000
	heapGateSlack   = 1.10
	heapGateFile    = "testdata/heapgate.json"
	envUpdateHeapGB = "INFORMERKIT_UPDATE_HEAP_BASELINE"
)

// heapBaseline is the content of heapGateFile: live heap per cached pod, in bytes.
type heapBaseline struct {
	Pods     int     `json:"pods"`
	Race     float64 `json:"bytesPerPodRace"`
	NoRace   float64 `json:"bytesPerPodNoRace"`
	Recorded string  `json:"recorded"`
}

// gatePod declares what a controller that works with pods typically reads: most of the pod
// (containers with env, ports, resources, probes and mounts, volumes, tolerations, owner
// references, the status with conditions and container statuses).
type gatePod struct {
	meta.TypeMeta
	meta.ObjectMeta `json:"metadata"`
	Spec            struct {
		NodeName           string `json:"nodeName,omitempty"`
		ServiceAccountName string `json:"serviceAccountName,omitempty"`
		Volumes            []struct {
			Name      string          `json:"name"`
			ConfigMap json.RawMessage `json:"configMap,omitempty"`
			Projected *struct {
				Sources     []map[string]any `json:"sources"`
				DefaultMode *int32           `json:"defaultMode,omitempty"`
			} `json:"projected,omitempty"`
		} `json:"volumes,omitempty"`
		Containers []struct {
			Name  string   `json:"name"`
			Image string   `json:"image"`
			Args  []string `json:"args,omitempty"`
			Ports []struct {
				Name          string `json:"name,omitempty"`
				ContainerPort int32  `json:"containerPort"`
				Protocol      string `json:"protocol,omitempty"`
			} `json:"ports,omitempty"`
			Env []struct {
				Name      string `json:"name"`
				Value     string `json:"value,omitempty"`
				ValueFrom *struct {
					FieldRef *struct {
						APIVersion string `json:"apiVersion,omitempty"`
						FieldPath  string `json:"fieldPath"`
					} `json:"fieldRef,omitempty"`
				} `json:"valueFrom,omitempty"`
			} `json:"env,omitempty"`
			Resources struct {
				Requests map[string]string `json:"requests,omitempty"`
				Limits   map[string]string `json:"limits,omitempty"`
			} `json:"resources"`
			VolumeMounts []struct {
				Name      string `json:"name"`
				ReadOnly  bool   `json:"readOnly,omitempty"`
				MountPath string `json:"mountPath"`
			} `json:"volumeMounts,omitempty"`
			LivenessProbe  *gateProbe `json:"livenessProbe,omitempty"`
			ReadinessProbe *gateProbe `json:"readinessProbe,omitempty"`
		} `json:"containers"`
		Tolerations []struct {
			Key               string `json:"key,omitempty"`
			Operator          string `json:"operator,omitempty"`
			Effect            string `json:"effect,omitempty"`
			TolerationSeconds *int64 `json:"tolerationSeconds,omitempty"`
		} `json:"tolerations,omitempty"`
	} `json:"spec"`
	Status struct {
		Phase      string `json:"phase,omitempty"`
		HostIP     string `json:"hostIP,omitempty"`
		PodIP      string `json:"podIP,omitempty"`
		StartTime  string `json:"startTime,omitempty"`
		QOSClass   string `json:"qosClass,omitempty"`
		Conditions []struct {
			Type               string `json:"type"`
			Status             string `json:"status"`
			LastTransitionTime string `json:"lastTransitionTime,omitempty"`
		} `json:"conditions,omitempty"`
		ContainerStatuses []struct {
			Name         string `json:"name"`
			Ready        bool   `json:"ready"`
			RestartCount int32  `json:"restartCount"`
			Image        string `json:"image"`
			ImageID      string `json:"imageID"`
			ContainerID  string `json:"containerID,omitempty"`
			State        struct {
				Running *struct {
					StartedAt string `json:"startedAt,omitempty"`
				} `json:"running,omitempty"`
			} `json:"state"`
		} `json:"containerStatuses,omitempty"`
	} `json:"status"`
}

type gateProbe struct {
	HTTPGet *struct {
		Path   string `json:"path,omitempty"`
		Port   any    `json:"port"`
		Scheme string `json:"scheme,omitempty"`
	} `json:"httpGet,omitempty"`
	TCPSocket *struct {
		Port any `json:"port"`
	} `json:"tcpSocket,omitempty"`
	InitialDelaySeconds int32 `json:"initialDelaySeconds,omitempty"`
	TimeoutSeconds      int32 `json:"timeoutSeconds,omitempty"`
	PeriodSeconds       int32 `json:"periodSeconds,omitempty"`
	SuccessThreshold    int32 `json:"successThreshold,omitempty"`
	FailureThreshold    int32 `json:"failureThreshold,omitempty"`
}

// gateFleet returns the gate's pods and their statuses, deterministically: the shape of the
// real-server benchmark's fleet (bench/internal/fleet: Deployments of 1, 1, 1, 2, 2, 2, 3, 3,
// 5 and 10 replicas over 20 namespaces, two containers with env, probes and resources, the
// projected token volume with a random name per pod, a running status with conditions and
// container statuses), written as JSON maps because the root module does not import k8s.io/api.
func gateFleet(pods int) (objs, statuses []map[string]any) {
	mix := []int{1, 1, 1, 2, 2, 2, 3, 3, 5, 10}
	const alphabet = "bcdfghjklmnpqrstvwxz2456789"
	random := func(rng *rand.Rand, n int) string {
		b := make([]byte, n)
		for i := range b {
			b[i] = alphabet[rng.IntN(len(alphabet))]
		}
		return string(b)
	}
	sizes := [][4]string{{"100m", "128Mi", "500m", "256Mi"}, {"250m", "256Mi", "1", "512Mi"}, {"500m", "512Mi", "2", "1Gi"}, {"1", "2Gi", "4", "4Gi"}}
	probe := func(path string) map[string]any {
		return map[string]any{"httpGet": map[string]any{"path": path, "port": 8080, "scheme": "HTTP"},
			"initialDelaySeconds": 5, "timeoutSeconds": 1, "periodSeconds": 10, "successThreshold": 1, "failureThreshold": 3}
	}
	fieldEnv := func(name, path string) map[string]any {
		return map[string]any{"name": name, "valueFrom": map[string]any{"fieldRef": map[string]any{"apiVersion": "v1", "fieldPath": path}}}
	}
	toleration := func(key string) map[string]any {
		return map[string]any{"key": key, "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 300}
	}
	n := 0
	for d := 0; n < pods; d++ {
		ns, app := fmt.Sprintf("team-%02d", d%20), fmt.Sprintf("svc-%04d", d)
		hash := random(rand.New(rand.NewPCG(uint64(d), 0x5eed)), 10)
		rs := app + "-" + hash
		sz := sizes[d%len(sizes)]
		image := fmt.Sprintf("registry.example.com/%s/%s:v1.%d", ns, app, d%13)
		for r := range min(mix[d%len(mix)], pods-n) {
			rng := rand.New(rand.NewPCG(uint64(d), uint64(r)))
			name := rs + "-" + random(rng, 5)
			node := rng.IntN(200)
			nodeName := fmt.Sprintf("ip-10-0-%d-%d.eu-west-1.compute.internal", node/50, 10+node%50)
			sa := "kube-api-access-" + random(rng, 5)
			saMount := map[string]any{"name": sa, "readOnly": true, "mountPath": "/var/run/secrets/kubernetes.io/serviceaccount"}
			objs = append(objs, map[string]any{
				"apiVersion": "v1", "kind": "Pod",
				"metadata": map[string]any{
					"name": name, "generateName": rs + "-", "namespace": ns,
					"labels": map[string]any{"app.kubernetes.io/name": app, "app.kubernetes.io/part-of": ns, "team": ns,
						"version": fmt.Sprintf("v1.%d", d%13), "pod-template-hash": hash},
					"annotations": map[string]any{"prometheus.io/scrape": "true", "prometheus.io/port": "9090"},
					"ownerReferences": []any{map[string]any{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": rs,
						"uid": fmt.Sprintf("4f0e%04x-1b2c-4d5e-8f90-%012x", d%0x10000, d), "controller": true, "blockOwnerDeletion": true}},
				},
				"spec": map[string]any{
					"nodeName": nodeName, "serviceAccountName": app,
					"volumes": []any{
						map[string]any{"name": sa, "projected": map[string]any{"defaultMode": 420, "sources": []any{
							map[string]any{"serviceAccountToken": map[string]any{"expirationSeconds": 3607, "path": "token"}},
							map[string]any{"configMap": map[string]any{"name": "kube-root-ca.crt", "items": []any{map[string]any{"key": "ca.crt", "path": "ca.crt"}}}},
							map[string]any{"downwardAPI": map[string]any{"items": []any{map[string]any{"path": "namespace",
								"fieldRef": map[string]any{"apiVersion": "v1", "fieldPath": "metadata.namespace"}}}}},
						}}},
						map[string]any{"name": "config", "configMap": map[string]any{"name": app + "-config"}},
					},
					"containers": []any{
						map[string]any{
							"name": app, "image": image,
							"env": []any{
								map[string]any{"name": "LOG_LEVEL", "value": "info"}, map[string]any{"name": "HTTP_PORT", "value": "8080"},
								fieldEnv("POD_NAME", "metadata.name"), fieldEnv("POD_NAMESPACE", "metadata.namespace"),
								map[string]any{"name": "DATABASE_URL", "value": fmt.Sprintf("postgres://%s-db.%s.svc.cluster.local:5432/%s?sslmode=require", app, ns, app)},
							},
							"ports": []any{map[string]any{"name": "http", "containerPort": 8080, "protocol": "TCP"}},
							"resources": map[string]any{"requests": map[string]any{"cpu": sz[0], "memory": sz[1]},
								"limits": map[string]any{"cpu": sz[2], "memory": sz[3]}},
							"volumeMounts":   []any{saMount, map[string]any{"name": "config", "readOnly": true, "mountPath": "/etc/" + app}},
							"livenessProbe":  probe("/healthz"),
							"readinessProbe": probe("/readyz"),
						},
						map[string]any{
							"name": "envoy", "image": "registry.example.com/infra/envoy:v1.31.2",
							"args":         []any{"--config-path", "/etc/envoy/envoy.yaml", "--log-level", "warn"},
							"ports":        []any{map[string]any{"name": "admin", "containerPort": 9901, "protocol": "TCP"}},
							"resources":    map[string]any{"requests": map[string]any{"cpu": "50m", "memory": "64Mi"}},
							"volumeMounts": []any{saMount},
							"readinessProbe": map[string]any{"tcpSocket": map[string]any{"port": 9901},
								"periodSeconds": 10, "timeoutSeconds": 1, "successThreshold": 1, "failureThreshold": 3},
						},
					},
					"tolerations": []any{toleration("node.kubernetes.io/not-ready"), toleration("node.kubernetes.io/unreachable")},
				},
			})
			// The kubelet's status.
			srng := rand.New(rand.NewPCG(uint64(n), 7))
			start := time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC).Add(time.Duration(n) * time.Second)
			ts := func(after time.Duration) string { return start.Add(after).Format(time.RFC3339) }
			hostIP := fmt.Sprintf("10.0.%d.%d", node/50, 10+node%50)
			podIP := fmt.Sprintf("10.%d.%d.%d", 64+n>>16, n>>8&0xff, n&0xff)
			cond := func(t string, after time.Duration) map[string]any {
				return map[string]any{"type": t, "status": "True", "lastTransitionTime": ts(after)}
			}
			var cstatuses []any
			for i, c := range []struct{ name, image string }{{app, image}, {"envoy", "registry.example.com/infra/envoy:v1.31.2"}} {
				h := fnv.New64a()
				h.Write([]byte(c.image))
				s := h.Sum64()
				cstatuses = append(cstatuses, map[string]any{
					"name": c.name, "ready": true, "restartCount": srng.IntN(10) / 8, "started": true,
					"state":       map[string]any{"running": map[string]any{"startedAt": ts(time.Duration(3+i) * time.Second)}},
					"image":       c.image,
					"imageID":     fmt.Sprintf("%s@sha256:%016x%016x%016x%016x", c.image, s, s^1, s^2, s^3),
					"containerID": fmt.Sprintf("containerd://%016x%016x%016x%016x", srng.Uint64(), srng.Uint64(), srng.Uint64(), srng.Uint64()),
				})
			}
			statuses = append(statuses, map[string]any{
				"phase": "Running",
				"conditions": []any{cond("PodReadyToStartContainers", 5*time.Second), cond("Initialized", 2*time.Second),
					cond("Ready", 9*time.Second), cond("ContainersReady", 9*time.Second), cond("PodScheduled", 0)},
				"hostIP": hostIP, "hostIPs": []any{map[string]any{"ip": hostIP}},
				"podIP": podIP, "podIPs": []any{map[string]any{"ip": podIP}},
				"startTime": ts(0), "qosClass": "Burstable", "containerStatuses": cstatuses,
			})
			n++
		}
	}
	return objs, statuses
}

// gateResource serves the gate's pods: a custom resource, so that a pod is stored with its
// status in one write (seeding through "pods", a create and a status update each with the
// pod strategy's defaulting, takes a minute under -race). The informer decodes the same
// bytes either way; what the kube-apiserver's defaulting would add are fields gatePod does not
// declare, which the decoder skips.
var gateResource = apitest.ResourceType{Group: "gate.informerkit.io", Version: "v1", Kind: "FleetPod", Plural: "fleetpods", Namespaced: true}

// heapGateServer starts an apitest server holding the gate's fleet.
func heapGateServer(t *testing.T) *apitest.Server {
	t.Helper()
	s, err := apitest.Start(apitest.Options{Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	if err := s.AddResource(gateResource); err != nil {
		t.Fatal(err)
	}
	for n := range 20 {
		if _, err := s.Create("namespaces", map[string]any{"metadata": map[string]any{"name": fmt.Sprintf("team-%02d", n)}}); err != nil {
			t.Fatal(err)
		}
	}
	objs, statuses := gateFleet(heapGatePods)
	for i, o := range objs {
		o["apiVersion"], o["kind"] = gateResource.Group+"/"+gateResource.Version, gateResource.Kind
		o["status"] = statuses[i]
		if _, err := s.Create(gateResource.Plural+"."+gateResource.Group, o); err != nil {
			t.Fatal(err)
		}
	}
	return s
}

// heapPerPod runs an informer of gatePod with the defaults (sharing as asked) against s and
// returns its live heap per cached pod: the live heap once it has synced and processed every
// pod, less the live heap before it started, divided by the number of pods.
func heapPerPod(t *testing.T, s *apitest.Server, sharing bool) float64 {
	t.Helper()
	c, err := apiclient.New(s.Config())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	// Nothing of the informer exists yet; what the client holds (transport, TLS config) is
	// counted before and after alike.
	before := gateLiveHeap()
	inf := New(apiclient.NewResource[*gatePod](c, meta.GroupVersionResource{Group: gateResource.Group, Version: gateResource.Version, Resource: gateResource.Plural}), Options[*gatePod]{
		DisableSharing: !sharing,
		Logger:         slog.New(slog.DiscardHandler),
	})
	ctx, cancel := context.WithCancel(context.Background())
	defer func() {
		cancel()
		<-inf.Done()
	}()
	go inf.Run(ctx)
	// Wait for the state measured: every pod cached and nothing left queued (polled with a
	// generous deadline, so that a loaded machine only makes it slower).
	deadline := time.Now().Add(2 * time.Minute)
	for {
		st := inf.Stats()
		if st.Synced && st.Cached == heapGatePods && st.Queued == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("informer not synced after 2m: %+v", st)
		}
		time.Sleep(5 * time.Millisecond) // polling the recorded state, not synchronisation
	}
	after := gateLiveHeap()
	runtime.KeepAlive(inf)
	if after < before {
		t.Fatalf("live heap went down from %d to %d B while the informer filled its cache", before, after)
	}
	return float64(after-before) / heapGatePods
}

// gateLiveHeap is the live heap after two collections (the second frees what finalizers and
// sync.Pool's victim cache kept through the first).
func gateLiveHeap() uint64 {
	runtime.GC()
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapAlloc
}

// checkHeapGate returns an error when perPod exceeds heapGateSlack times the baseline.
func checkHeapGate(perPod, baseline float64) error {
	if limit := heapGateSlack * baseline; perPod > limit {
		return fmt.Errorf("live heap per cached pod is %.0f B, above the gate's %.0f B (%.0f%% of the committed baseline %.0f B, %s): "+
			"the cache got %.1f%% larger; if that is intended, update the baseline (see heapgate_test.go)",
			perPod, limit, 100*heapGateSlack, baseline, heapGateFile, 100*(perPod/baseline-1))
	}
	return nil
}

func readHeapBaseline(t *testing.T) heapBaseline {
	t.Helper()
	var b heapBaseline
	data, err := os.ReadFile(heapGateFile)
	if err != nil {
		t.Fatalf("the gate's baseline: %v", err)
	}
	if err := json.Unmarshal(data, &b); err != nil {
		t.Fatalf("the gate's baseline %s: %v", heapGateFile, err)
	}
	if b.Pods != heapGatePods {
		t.Fatalf("%s was recorded with %d pods, the gate runs %d: update it", heapGateFile, b.Pods, heapGatePods)
	}
	return b
}

// TestLiveHeapGate fails when an informer's live heap per cached pod exceeds 110% of the
// committed baseline, and shows that the gate catches a regression: with structural sharing
// turned off (as a change that broke sharing would do) the same fleet fails it.
func TestLiveHeapGate(t *testing.T) {
	if testing.Short() {
		t.Skip("the gate seeds 1,000 pods")
	}
	// The mutation detector keeps a deep copy of every cached object: not what users run.
	t.Setenv(EnvCacheMutationDetector, "false")
	s := heapGateServer(t)
	perPod := heapPerPod(t, s, true)

	if os.Getenv(envUpdateHeapGB) != "" {
		b := heapBaseline{Pods: heapGatePods}
		if data, err := os.ReadFile(heapGateFile); err == nil {
			_ = json.Unmarshal(data, &b)
		}
		b.Pods = heapGatePods
		if raceEnabled {
			b.Race = perPod
		} else {
			b.NoRace = perPod
		}
		b.Recorded = time.Now().UTC().Format(time.DateOnly) + ", " + runtime.Version()
		data, err := json.MarshalIndent(b, "", "  ")
		if err != nil {
			t.Fatal(err)
		}
		if err := os.MkdirAll(filepath.Dir(heapGateFile), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(heapGateFile, append(data, '\n'), 0o644); err != nil {
			t.Fatal(err)
		}
		t.Logf("baseline updated: %.0f B per pod (race %v)", perPod, raceEnabled)
		return
	}

	b := readHeapBaseline(t)
	baseline := b.NoRace
	if raceEnabled {
		baseline = b.Race
	}
	if baseline <= 0 {
		t.Fatalf("%s has no baseline for race=%v: record one (see heapgate_test.go)", heapGateFile, raceEnabled)
	}
	t.Logf("live heap per cached pod: %.0f B (baseline %.0f B, gate %.0f B)", perPod, baseline, heapGateSlack*baseline)
	if err := checkHeapGate(perPod, baseline); err != nil {
		t.Error(err)
	}
	if perPod < 0.9*baseline {
		t.Logf("the cache is %.1f%% smaller than the baseline: lower the baseline so that the gate keeps its margin", 100*(1-perPod/baseline))
	}

	t.Run("catches-sharing-off", func(t *testing.T) {
		unshared := heapPerPod(t, s, false)
		t.Logf("live heap per cached pod with sharing off: %.0f B", unshared)
		if err := checkHeapGate(unshared, baseline); err == nil {
			t.Errorf("the gate passed an informer without structural sharing (%.0f B per pod against the baseline %.0f B)", unshared, baseline)
		}
	})
}
