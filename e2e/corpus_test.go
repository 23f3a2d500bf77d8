package e2e

import (
	"bufio"
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/informerkit/informerkit/e2e/cluster"
)

// TestRecordProtobufCorpus records protobuf bodies the real kube-apiserver serves, the seed
// corpus of the protobuf fuzz targets, into the root module's testdata. It runs only when
// INFORMERKIT_RECORD_CORPUS names the repository's root:
//
//	INFORMERKIT_RECORD_CORPUS=$PWD/.. E2E_BIN_DIR=../bin go test -run TestRecordProtobufCorpus .
//
// Objects (GET, "k8s\x00" + runtime.Unknown) and lists of pods with status, Deployments,
// ReplicaSets, ConfigMaps, Secrets, Services, Namespaces, Events, Leases and a 404 Status go
// to internal/protodec/testdata/real/; the frames of protobuf watches of pods (ADDED,
// MODIFIED, DELETED, the initial-events-end BOOKMARK) and the ERROR event of a watch from a
// compacted resourceVersion, each the WatchEvent message without the 4-byte length prefix,
// go to apiclient/testdata/protobuf/.
func TestRecordProtobufCorpus(t *testing.T) {
	root := os.Getenv("INFORMERKIT_RECORD_CORPUS")
	if root == "" {
		t.Skip("INFORMERKIT_RECORD_CORPUS is not set")
	}
	c := cluster.ForTest(t)
	ns := newNamespace(t, c)
	objects := filepath.Join(root, "internal/protodec/testdata/real")
	frames := filepath.Join(root, "apiclient/testdata/protobuf")
	for _, d := range []string{objects, frames} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	seedCorpusObjects(t, c, ns)
	core, apps := "/api/v1/namespaces/"+ns, "/apis/apps/v1/namespaces/"+ns
	bodies := map[string]string{
		"pod-status.pb":   core + "/pods/web",
		"pods.pb":         core + "/pods",
		"deployment-2.pb": apps + "/deployments/web",
		"deployments.pb":  apps + "/deployments",
		"replicaset.pb":   apps + "/replicasets/web-1",
		"configmap.pb":    core + "/configmaps/settings",
		"configmaps.pb":   core + "/configmaps",
		"secret.pb":       core + "/secrets/token",
		"service.pb":      core + "/services/web",
		"namespace.pb":    "/api/v1/namespaces/" + ns,
		"event.pb":        core + "/events/web.1",
		"events.pb":       core + "/events",
		"lease.pb":        "/apis/coordination.k8s.io/v1/namespaces/" + ns + "/leases/leader",
		"status-404.pb":   core + "/pods/missing",
	}
	for file, path := range bodies {
		body := getProtobuf(t, c, path)
		writeCorpus(t, filepath.Join(objects, file), body)
	}
	recordWatchFrames(t, c, ns, frames)
}

// seedCorpusObjects creates one object of each recorded kind, with what a real cluster's
// objects carry: a pod's status (conditions, container statuses), owner references,
// quantities, int-or-strings, probes, volumes, managedFields.
func seedCorpusObjects(t *testing.T, c *cluster.Cluster, ns string) {
	core, apps := "/api/v1/namespaces/"+ns, "/apis/apps/v1/namespaces/"+ns
	labels := map[string]any{"app": "web", "tier": "frontend"}
	podSpec := map[string]any{
		"containers": []any{map[string]any{
			"name": "web", "image": "registry.k8s.io/pause:3.10", "args": []any{"--port=8080", "--v=2"},
			"ports":          []any{map[string]any{"name": "http", "containerPort": 8080}},
			"env":            []any{map[string]any{"name": "MODE", "value": "prod"}, map[string]any{"name": "POD", "valueFrom": map[string]any{"fieldRef": map[string]any{"fieldPath": "metadata.name"}}}},
			"resources":      map[string]any{"requests": map[string]any{"cpu": "250m", "memory": "64Mi"}, "limits": map[string]any{"memory": "128Mi"}},
			"readinessProbe": map[string]any{"httpGet": map[string]any{"port": "http", "path": "/healthz"}, "periodSeconds": 5},
			"livenessProbe":  map[string]any{"tcpSocket": map[string]any{"port": 8080}, "initialDelaySeconds": 10},
			"volumeMounts":   []any{map[string]any{"name": "cfg", "mountPath": "/etc/cfg", "readOnly": true}},
		}},
		"volumes":     []any{map[string]any{"name": "cfg", "configMap": map[string]any{"name": "settings"}}},
		"tolerations": []any{map[string]any{"key": "dedicated", "operator": "Exists", "effect": "NoSchedule"}},
		"nodeName":    "node-1",
	}
	do(t, c, http.MethodPost, apps+"/deployments", map[string]any{"apiVersion": "apps/v1", "kind": "Deployment",
		"metadata": map[string]any{"name": "web", "labels": labels},
		"spec": map[string]any{"replicas": 2, "selector": map[string]any{"matchLabels": labels},
			"strategy": map[string]any{"type": "RollingUpdate", "rollingUpdate": map[string]any{"maxSurge": "25%", "maxUnavailable": 1}},
			"template": map[string]any{"metadata": map[string]any{"labels": labels}, "spec": podSpec}}}, http.StatusCreated, nil)
	do(t, c, http.MethodPost, apps+"/replicasets", map[string]any{"apiVersion": "apps/v1", "kind": "ReplicaSet",
		"metadata": map[string]any{"name": "web-1", "labels": labels},
		"spec": map[string]any{"replicas": 2, "selector": map[string]any{"matchLabels": labels},
			"template": map[string]any{"metadata": map[string]any{"labels": labels}, "spec": podSpec}}}, http.StatusCreated, nil)
	do(t, c, http.MethodPost, core+"/pods", map[string]any{"apiVersion": "v1", "kind": "Pod",
		"metadata": map[string]any{"name": "web", "labels": labels, "annotations": map[string]any{"note": "é ✓"}},
		"spec":     podSpec}, http.StatusCreated, nil)
	var pod map[string]any
	do(t, c, http.MethodGet, core+"/pods/web", nil, http.StatusOK, &pod)
	pod["status"] = map[string]any{"phase": "Running", "podIP": "10.0.0.7", "hostIP": "192.168.1.4",
		"startTime": "2026-03-01T10:00:00Z", "qosClass": "Burstable",
		"conditions": []any{map[string]any{"type": "Ready", "status": "True", "lastTransitionTime": "2026-03-01T10:00:05Z"}},
		"containerStatuses": []any{map[string]any{"name": "web", "ready": true, "restartCount": 2, "image": "registry.k8s.io/pause:3.10",
			"imageID": "sha256:0123", "containerID": "containerd://abc", "started": true,
			"state":     map[string]any{"running": map[string]any{"startedAt": "2026-03-01T10:00:03Z"}},
			"lastState": map[string]any{"terminated": map[string]any{"exitCode": 137, "reason": "OOMKilled", "finishedAt": "2026-03-01T09:59:00Z"}}}}}
	do(t, c, http.MethodPut, core+"/pods/web/status", pod, http.StatusOK, nil)
	do(t, c, http.MethodPost, core+"/configmaps", map[string]any{"apiVersion": "v1", "kind": "ConfigMap",
		"metadata": map[string]any{"name": "settings"}, "data": map[string]any{"a": "1", "b": "two\nlines"},
		"binaryData": map[string]any{"bin": "AAEC/w=="}}, http.StatusCreated, nil)
	do(t, c, http.MethodPost, core+"/secrets", map[string]any{"apiVersion": "v1", "kind": "Secret",
		"metadata": map[string]any{"name": "token"}, "type": "Opaque", "data": map[string]any{"t": "c2VjcmV0"}}, http.StatusCreated, nil)
	do(t, c, http.MethodPost, core+"/services", map[string]any{"apiVersion": "v1", "kind": "Service",
		"metadata": map[string]any{"name": "web"}, "spec": map[string]any{"selector": labels,
			"ports": []any{map[string]any{"name": "http", "port": 80, "targetPort": "http"}}}}, http.StatusCreated, nil)
	do(t, c, http.MethodPost, core+"/events", map[string]any{"apiVersion": "v1", "kind": "Event",
		"metadata":       map[string]any{"name": "web.1"},
		"involvedObject": map[string]any{"kind": "Pod", "namespace": ns, "name": "web", "apiVersion": "v1"},
		"reason":         "Started", "message": "Started container web", "type": "Normal", "count": 3,
		"firstTimestamp": "2026-03-01T10:00:03Z", "lastTimestamp": "2026-03-01T10:05:03Z",
		"eventTime": "2026-03-01T10:05:03.123456Z", "reportingComponent": "kubelet", "reportingInstance": "node-1",
		"action": "Started", "source": map[string]any{"component": "kubelet", "host": "node-1"}}, http.StatusCreated, nil)
	do(t, c, http.MethodPost, "/apis/coordination.k8s.io/v1/namespaces/"+ns+"/leases", map[string]any{"apiVersion": "coordination.k8s.io/v1", "kind": "Lease",
		"metadata": map[string]any{"name": "leader"}, "spec": map[string]any{"holderIdentity": "a", "leaseDurationSeconds": 15,
			"acquireTime": "2026-03-01T10:00:00.000000Z", "renewTime": "2026-03-01T10:00:10.500000Z", "leaseTransitions": 1}}, http.StatusCreated, nil)
}

// getProtobuf GETs path with Accept: application/vnd.kubernetes.protobuf and returns the
// body, whatever the status (a 404's body is a protobuf Status).
func getProtobuf(t *testing.T, c *cluster.Cluster, path string) []byte {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, c.URL+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Accept", "application/vnd.kubernetes.protobuf")
	resp, err := c.HTTPClient().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	if ct := resp.Header.Get("Content-Type"); ct != "application/vnd.kubernetes.protobuf" || !bytes.HasPrefix(body, []byte("k8s\x00")) {
		t.Fatalf("GET %s: %s, %s: %q", path, resp.Status, ct, body)
	}
	return body
}

func writeCorpus(t *testing.T, path string, b []byte) {
	t.Helper()
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("recorded %s (%d bytes)", path, len(b))
}

// recordWatchFrames records the frames of protobuf watches of pods: a streaming list (ADDED
// events, the end bookmark) followed by a change and a delete; and the ERROR event of a
// watch of the uncached resource from a compacted resourceVersion.
func recordWatchFrames(t *testing.T, c *cluster.Cluster, ns, dir string) {
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	core := "/api/v1/namespaces/" + ns
	r := openProtobufWatch(t, ctx, c, core+"/pods?watch=1&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true")
	n := 0
	save := func(frame []byte, what string) {
		n++
		writeCorpus(t, filepath.Join(dir, fmt.Sprintf("watch-%02d-%s.pb", n, what)), frame)
	}
	for {
		f := nextFrame(t, r)
		if bytes.Contains(f, []byte("BOOKMARK")) {
			save(f, "bookmark")
			break
		}
		save(f, "added")
	}
	do(t, c, http.MethodPatch, core+"/pods/web", map[string]any{"metadata": map[string]any{"labels": map[string]any{"rollout": "2"}}}, http.StatusOK, nil)
	save(nextFrame(t, r), "modified")
	do(t, c, http.MethodDelete, core+"/pods/web?gracePeriodSeconds=0", nil, http.StatusOK, nil)
	for {
		f := nextFrame(t, r)
		save(f, "deleted-or-modified")
		if bytes.HasPrefix(f, []byte("\n\aDELETED")) {
			break
		}
	}
	// The ERROR event of a watch from a compacted resourceVersion (podtemplates are served
	// from etcd, not the watch cache).
	var pt object
	do(t, c, http.MethodPost, core+"/"+cluster.UncachedResource, podTemplate("pt", map[string]string{"v": "1"}), http.StatusCreated, &pt)
	do(t, c, http.MethodPatch, core+"/"+cluster.UncachedResource+"/pt", map[string]any{"metadata": map[string]any{"labels": map[string]any{"v": "2"}}}, http.StatusOK, nil)
	if _, err := c.Compact(ctx); err != nil {
		t.Fatal(err)
	}
	r = openProtobufWatch(t, ctx, c, core+"/"+cluster.UncachedResource+"?watch=1&resourceVersion="+pt.Metadata.ResourceVersion)
	f := nextFrame(t, r)
	if !bytes.HasPrefix(f, []byte("\n\x05ERROR")) {
		t.Fatalf("watch from a compacted resourceVersion: %q", f)
	}
	save(f, "error-410")
}

func openProtobufWatch(t *testing.T, ctx context.Context, c *cluster.Cluster, path string) *bufio.Reader {
	t.Helper()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, c.URL+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Accept", "application/vnd.kubernetes.protobuf")
	resp, err := c.HTTPClient().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		t.Fatalf("GET %s: %s %q", path, resp.Status, b)
	}
	t.Cleanup(func() { resp.Body.Close() })
	return bufio.NewReader(resp.Body)
}

// nextFrame reads one length-prefixed frame and returns its WatchEvent message.
func nextFrame(t *testing.T, r *bufio.Reader) []byte {
	t.Helper()
	var n [4]byte
	if _, err := io.ReadFull(r, n[:]); err != nil {
		t.Fatal(err)
	}
	f := make([]byte, binary.BigEndian.Uint32(n[:]))
	if _, err := io.ReadFull(r, f); err != nil {
		t.Fatal(err)
	}
	return f
}
