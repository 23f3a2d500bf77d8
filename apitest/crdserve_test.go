package apitest_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/informerkit/informerkit/apitest"
)

// The CustomResourceDefinition lifecycle through HTTP, as e2e's TestCRDLifecycleFidelity
// found it on the kube-apiserver v1.36.3.

const (
	probeCRDName = "probes.probe.example.com"
	probeCRDs    = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions"
	probesV1     = "/apis/probe.example.com/v1/namespaces/default/probes"
	probesV2     = "/apis/probe.example.com/v2/namespaces/default/probes"
)

func probeCRD(versions ...string) string {
	var vs []string
	for i, v := range versions {
		served := !strings.HasSuffix(v, "-")
		v = strings.TrimSuffix(v, "-")
		vs = append(vs, fmt.Sprintf(`{"name":%q,"served":%v,"storage":%v,"schema":{"openAPIV3Schema":{"type":"object","x-kubernetes-preserve-unknown-fields":true}}}`, v, served, i == 0))
	}
	return `{"apiVersion":"apiextensions.k8s.io/v1","kind":"CustomResourceDefinition","metadata":{"name":"` + probeCRDName + `"},
"spec":{"group":"probe.example.com","scope":"Namespaced","names":{"kind":"Probe","plural":"probes"},"versions":[` + strings.Join(vs, ",") + `]}}`
}

// httpDo sends a request and returns the status, the Content-Type and the body.
func httpDo(t *testing.T, s *apitest.Server, c *http.Client, method, path, body, ct string) (int, string, string) {
	t.Helper()
	req, err := http.NewRequest(method, s.URL+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if body != "" {
		if ct == "" {
			ct = "application/json"
		}
		req.Header.Set("Content-Type", ct)
	}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header.Get("Content-Type"), string(b)
}

// rawWatch is a watch read line by line: each event as "TYPE name [details]", then "END"
// when the stream ends cleanly.
type rawWatch chan string

func openRawWatch(t *testing.T, s *apitest.Server, c *http.Client, path string) rawWatch {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, s.URL+path, nil)
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("watch %s: %s", path, resp.Status)
	}
	out := make(rawWatch, 100)
	done := make(chan struct{})
	go func() {
		defer close(done)
		defer resp.Body.Close()
		sc := bufio.NewScanner(resp.Body)
		for sc.Scan() {
			var ev struct {
				Type   string `json:"type"`
				Object struct {
					APIVersion string `json:"apiVersion"`
					Message    string `json:"message"`
					Metadata   struct {
						Name              string   `json:"name"`
						DeletionTimestamp string   `json:"deletionTimestamp"`
						Finalizers        []string `json:"finalizers"`
					} `json:"metadata"`
					Status json.RawMessage `json:"status"`
				} `json:"object"`
			}
			var status struct {
				Conditions []struct{ Type, Status, Reason string } `json:"conditions"`
			}
			if err := json.Unmarshal(sc.Bytes(), &ev); err != nil {
				out <- "BAD " + err.Error()
				return
			}
			if ev.Type != "ERROR" && len(ev.Object.Status) > 0 {
				json.Unmarshal(ev.Object.Status, &status)
			}
			line := ev.Type + " " + ev.Object.Metadata.Name
			if ev.Type == "ERROR" {
				line += " " + ev.Object.Message
			}
			if ev.Object.Metadata.DeletionTimestamp != "" {
				line += " deleting"
			}
			for _, c := range status.Conditions {
				line += fmt.Sprintf(" %s=%s(%s)", c.Type, c.Status, c.Reason)
			}
			if strings.HasPrefix(path, "/apis/probe") && ev.Type != "ERROR" {
				line += " " + ev.Object.APIVersion
			}
			out <- line
		}
		if sc.Err() == nil {
			out <- "END"
		}
	}()
	t.Cleanup(func() { cancel(); <-done })
	return out
}

func (w rawWatch) expect(t *testing.T, want ...string) {
	t.Helper()
	for _, line := range want {
		select {
		case got := <-w:
			if got != line {
				t.Fatalf("watch event %q, want %q", got, line)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("no watch event, want %q", line)
		}
	}
}

func TestCRDLifecycle(t *testing.T) {
	s := apitest.NewServerWithOptions(apitest.Options{CRDWatchTeardownDelay: 20 * time.Millisecond})
	defer s.Close()
	c := s.Client()
	defer c.CloseIdleConnections()
	do := func(method, path, body, ct string) (int, string, string) {
		t.Helper()
		return httpDo(t, s, c, method, path, body, ct)
	}
	rvOf := func(body string) string {
		var o struct {
			Metadata struct{ ResourceVersion string }
		}
		json.Unmarshal([]byte(body), &o)
		return o.Metadata.ResourceVersion
	}

	// Before: the group is not served, and the mux answers in plain text.
	if code, ct, body := do("GET", probesV1, "", ""); code != 404 || !strings.HasPrefix(ct, "text/plain") || body != "404 page not found\n" {
		t.Fatalf("before the CRD: %d %s %q", code, ct, body)
	}

	// Create: stored without conditions, then NamesAccepted with Installing, then Established.
	_, _, list := do("GET", probeCRDs, "", "")
	crds := openRawWatch(t, s, c, probeCRDs+"?watch=1&resourceVersion="+rvOf(list))
	code, _, body := do("POST", probeCRDs, probeCRD("v1"), "")
	if code != 201 || !strings.Contains(body, `"status":{"acceptedNames":{"kind":"","plural":""},"conditions":null,"storedVersions":["v1"]}`) ||
		!strings.Contains(body, `"conversion":{"strategy":"None"}`) || !strings.Contains(body, `"singular":"probe"`) {
		t.Fatalf("create: %d %s", code, body)
	}
	crds.expect(t, "ADDED "+probeCRDName,
		"MODIFIED "+probeCRDName+" NamesAccepted=True(NoConflicts) Established=False(Installing)",
		"MODIFIED "+probeCRDName+" NamesAccepted=True(NoConflicts) Established=True(InitialNamesAccepted)")
	if code, _, body := do("GET", "/apis/probe.example.com/v1", "", ""); code != 200 || !strings.Contains(body, `"name":"probes"`) {
		t.Fatalf("discovery: %d %s", code, body)
	}
	for _, o := range []string{`{"metadata":{"name":"a"}}`, `{"metadata":{"name":"b","finalizers":["probe.example.com/hold"]}}`} {
		if code, _, body := do("POST", probesV1, o, ""); code != 201 {
			t.Fatalf("create: %d %s", code, body)
		}
	}
	_, _, list = do("GET", probesV1, "", "")
	oldRV := rvOf(list)

	// A version added: served at once, the same objects under its apiVersion; the watches
	// of the old storage end cleanly, and a watch from before the change gets 410.
	w1 := openRawWatch(t, s, c, probesV1+"?watch=1&resourceVersion="+oldRV)
	if code, _, body := do("PATCH", probeCRDs+"/"+probeCRDName, `{"spec":{"versions":`+probeCRD("v1", "v2")[strings.Index(probeCRD("v1", "v2"), `[`):strings.LastIndex(probeCRD("v1", "v2"), `]`)+1]+`}}`,
		"application/merge-patch+json"); code != 200 {
		t.Fatalf("add v2: %d %s", code, body)
	}
	crds.expect(t, "MODIFIED "+probeCRDName+" NamesAccepted=True(NoConflicts) Established=True(InitialNamesAccepted)")
	w1.expect(t, "END")
	if code, _, body := do("GET", probesV2+"/a", "", ""); code != 200 || !strings.Contains(body, `"apiVersion":"probe.example.com/v2"`) {
		t.Fatalf("v2 get: %d %s", code, body)
	}
	if code, _, body := do("POST", probesV2, `{"apiVersion":"probe.example.com/v2","kind":"Probe","metadata":{"name":"c"}}`, ""); code != 201 ||
		!strings.Contains(body, `"apiVersion":"probe.example.com/v2"`) {
		t.Fatalf("v2 create: %d %s", code, body)
	}
	if code, _, body := do("GET", probesV1+"/c", "", ""); code != 200 || !strings.Contains(body, `"apiVersion":"probe.example.com/v1"`) {
		t.Fatalf("v1 get of an object created at v2: %d %s", code, body)
	}
	if code, _, body := do("GET", "/apis/probe.example.com", "", ""); code != 200 ||
		!strings.Contains(body, `"preferredVersion":{"groupVersion":"probe.example.com/v2","version":"v2"}`) {
		t.Fatalf("group: %d %s", code, body)
	}
	openRawWatch(t, s, c, probesV1+"?watch=1&resourceVersion="+oldRV).expect(t,
		fmt.Sprintf("ERROR  too old resource version: %s (%s)", oldRV, rvOf(crdGet(t, do))), "END")

	// The version no longer served: its paths go at once.
	if code, _, body := do("PATCH", probeCRDs+"/"+probeCRDName, `{"spec":{"versions":`+probeCRD("v1", "v2-")[strings.Index(probeCRD("v1", "v2-"), `[`):strings.LastIndex(probeCRD("v1", "v2-"), `]`)+1]+`}}`,
		"application/merge-patch+json"); code != 200 {
		t.Fatalf("v2 served=false: %d %s", code, body)
	}
	crds.expect(t, "MODIFIED "+probeCRDName+" NamesAccepted=True(NoConflicts) Established=True(InitialNamesAccepted)")
	if code, _, body := do("GET", probesV2, "", ""); code != 404 || body != "404 page not found\n" {
		t.Fatalf("v2 after served=false: %d %q", code, body)
	}

	// Delete: Terminating, the instances deleted (b waits for its finalizer), creates
	// refused, then the CRD goes, the resource with it, and its watches end.
	w2 := openRawWatch(t, s, c, probesV1+"?watch=1")
	w2.expect(t, "ADDED a probe.example.com/v1", "ADDED b probe.example.com/v1", "ADDED c probe.example.com/v1")
	code, _, body = do("DELETE", probeCRDs+"/"+probeCRDName, "", "")
	if code != 200 || !strings.Contains(body, `"finalizers":["customresourcecleanup.apiextensions.k8s.io"]`) || !strings.Contains(body, "deletionTimestamp") {
		t.Fatalf("delete: %d %s", code, body)
	}
	crds.expect(t,
		"MODIFIED "+probeCRDName+" deleting NamesAccepted=True(NoConflicts) Established=True(InitialNamesAccepted) Terminating=True(InstanceDeletionPending)",
		"MODIFIED "+probeCRDName+" deleting NamesAccepted=True(NoConflicts) Established=True(InitialNamesAccepted) Terminating=True(InstanceDeletionInProgress)")
	w2.expect(t, "DELETED a probe.example.com/v1", "MODIFIED b deleting probe.example.com/v1", "DELETED c probe.example.com/v1")
	code, _, body = do("POST", probesV1, `{"metadata":{"name":"d"}}`, "")
	if code != 403 || !strings.Contains(body, `probes.probe.example.com \"d\" is forbidden: create not allowed while custom resource definition is terminating`) ||
		!strings.Contains(body, `"details":{"name":"d","group":"probe.example.com","kind":"probes"}`) {
		t.Fatalf("create while terminating: %d %s", code, body)
	}
	if code, _, _ := do("GET", probesV1, "", ""); code != 200 {
		t.Fatalf("list while terminating: %d", code)
	}
	if code, _, body := do("PATCH", probesV1+"/b", `{"metadata":{"finalizers":null}}`, "application/merge-patch+json"); code != 200 {
		t.Fatalf("finalizer: %d %s", code, body)
	}
	w2.expect(t, "DELETED b deleting probe.example.com/v1")
	crds.expect(t, "DELETED "+probeCRDName+" deleting NamesAccepted=True(NoConflicts) Established=True(InitialNamesAccepted) Terminating=True(InstanceDeletionInProgress)")
	for _, p := range []string{probesV1, probesV1 + "/a", probesV1 + "?watch=1", "/apis/probe.example.com/v1", "/apis/probe.example.com"} {
		if code, ct, body := do("GET", p, "", ""); code != 404 || !strings.HasPrefix(ct, "text/plain") || body != "404 page not found\n" {
			t.Fatalf("GET %s after the CRD went: %d %s %q", p, code, ct, body)
		}
	}
	w2.expect(t, "END")

	// Re-created: served again, empty; a watch from before gets 410.
	if code, _, body := do("POST", probeCRDs, probeCRD("v1"), ""); code != 201 {
		t.Fatalf("re-create: %d %s", code, body)
	}
	if code, _, body := do("GET", probesV1, "", ""); code != 200 || !strings.Contains(body, `"items":[]`) {
		t.Fatalf("list after re-create: %d %s", code, body)
	}
	openRawWatch(t, s, c, probesV1+"?watch=1&resourceVersion="+oldRV).expect(t,
		fmt.Sprintf("ERROR  too old resource version: %s (%s)", oldRV, rvOf(crdGet(t, do))), "END")
}

// crdGet returns the probe CRD as stored.
func crdGet(t *testing.T, do func(method, path, body, ct string) (int, string, string)) string {
	t.Helper()
	code, _, body := do("GET", probeCRDs+"/"+probeCRDName, "", "")
	if code != 200 {
		t.Fatalf("get CRD: %d %s", code, body)
	}
	return body
}

func TestCRDNameConflictIsNotEstablished(t *testing.T) {
	s := apitest.NewServer()
	defer s.Close()
	if err := s.AddResource(apitest.ResourceType{Group: "probe.example.com", Version: "v1", Kind: "Probe", Plural: "probes", Namespaced: true}); err != nil {
		t.Fatal(err)
	}
	c := s.Client()
	defer c.CloseIdleConnections()
	if code, _, body := httpDo(t, s, c, "POST", probeCRDs, probeCRD("v1"), ""); code != 201 {
		t.Fatalf("create: %d %s", code, body)
	}
	_, _, body := httpDo(t, s, c, "GET", probeCRDs+"/"+probeCRDName, "", "")
	if !strings.Contains(body, `"message":"\"probes\" is already in use","reason":"NameConflict","status":"False","type":"NamesAccepted"`) ||
		!strings.Contains(body, `"reason":"NotAccepted","status":"False","type":"Established"`) {
		t.Fatalf("CRD whose plural is taken: %s", body)
	}
	if err := s.AddCRD([]byte(probeCRD("v1"))); err == nil {
		t.Fatal("AddCRD of a second probes.probe.example.com succeeded")
	}
}
