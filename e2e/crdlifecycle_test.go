package e2e

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/informerkit/informerkit/apitest"
	"github.com/informerkit/informerkit/e2e/cluster"
)

// TestCRDLifecycleFidelity runs one CustomResourceDefinition's life against the
// kube-apiserver and against apitest and compares what a client sees: the CRD's conditions
// event by event, what a watch of its resource receives when the spec changes and when the
// CRD is deleted (and whether the stream ends with or without an ERROR), the answers while
// it is terminating and once it is gone, and a watch from an old resourceVersion after it
// is re-created. Waits are for states, so the transcripts do not depend on timing; the
// times the kube-apiserver took are logged.
func TestCRDLifecycleFidelity(t *testing.T) {
	c := cluster.ForTest(t)
	s := apitest.NewServerWithOptions(apitest.Options{TLS: true, Token: "fidelity", KubernetesVersion: c.Version})
	defer s.Close()
	sc := s.Client()
	defer sc.CloseIdleConnections()
	real := (&crdRun{t: t, name: "kube-apiserver", url: c.URL, client: c.HTTPClient(), ns: newNamespace(t, c)}).run()
	fakeNS := "fid-crd"
	fake := &crdRun{t: t, name: "apitest", url: s.URL, client: sc, ns: fakeNS}
	if code, body := fake.req("POST", "/api/v1/namespaces", `{"metadata":{"name":"`+fakeNS+`"}}`, ""); code != 201 {
		t.Fatalf("namespace: %d %s", code, body)
	}
	got := fake.run()
	compareTranscripts(t, "crd-lifecycle", real, got)
}

// crdRun is the lifecycle on one target, and its transcript.
type crdRun struct {
	t      *testing.T
	name   string
	url    string
	client *http.Client
	ns     string
	lines  []string
	start  time.Time
}

const (
	lcGroup = "lifecycle.informerkit.io"
	lcCRD   = "gizmos." + lcGroup
	lcCRDs  = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions"
)

func lcCRDBody(v2 string) string {
	schema := `"schema":{"openAPIV3Schema":{"type":"object","x-kubernetes-preserve-unknown-fields":true}}`
	versions := `{"name":"v1","served":true,"storage":true,` + schema + `}`
	if v2 != "" {
		versions += `,{"name":"v2","served":` + v2 + `,"storage":false,` + schema + `}`
	}
	return `{"apiVersion":"apiextensions.k8s.io/v1","kind":"CustomResourceDefinition","metadata":{"name":"` + lcCRD + `"},
"spec":{"group":"` + lcGroup + `","scope":"Namespaced","names":{"kind":"Gizmo","plural":"gizmos"},"versions":[` + versions + `]}}`
}

func (r *crdRun) path(version string) string {
	return "/apis/" + lcGroup + "/" + version + "/namespaces/" + r.ns + "/gizmos"
}

func (r *crdRun) logf(format string, args ...any) {
	r.t.Logf("%s %6.3fs: %s", r.name, time.Since(r.start).Seconds(), fmt.Sprintf(format, args...))
}

func (r *crdRun) add(format string, args ...any) {
	r.lines = append(r.lines, fmt.Sprintf(format, args...))
}

func (r *crdRun) req(method, path, body, ct string) (int, string) {
	r.t.Helper()
	code, _, b := r.reqCT(method, path, body, ct)
	return code, b
}

func (r *crdRun) reqCT(method, path, body, ct string) (int, string, string) {
	r.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, method, r.url+path, strings.NewReader(body))
	if err != nil {
		r.t.Fatal(err)
	}
	req.Header.Set("Accept", "application/json")
	if body != "" {
		if ct == "" {
			ct = "application/json"
		}
		req.Header.Set("Content-Type", ct)
	}
	resp, err := r.client.Do(req)
	if err != nil {
		r.t.Fatalf("%s: %s %s: %v", r.name, method, path, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header.Get("Content-Type"), string(b)
}

// until polls cond every 20 ms for at most 30 s.
func (r *crdRun) until(what string, cond func() bool) {
	r.t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			r.t.Fatalf("%s: %s: not within 30 s", r.name, what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// lcWatch is an open watch whose events are summarised as lines; "END" when the stream
// ends cleanly.
type lcWatch struct {
	r      *crdRun
	lines  chan string
	cancel context.CancelFunc
}

// watch opens a watch of path. A 429 is retried after its Retry-After, as clients do: the
// kube-apiserver answers so while the watch cache of a resource's new storage initialises
// (after a CRD is created or its versions change), which the transcript does not compare.
func (r *crdRun) watch(path string) *lcWatch {
	r.t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	var resp *http.Response
	for deadline := time.Now().Add(30 * time.Second); ; {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, r.url+path, nil)
		req.Header.Set("Accept", "application/json")
		var err error
		resp, err = r.client.Do(req)
		if err != nil {
			r.t.Fatalf("%s: watch %s: %v", r.name, path, err)
		}
		if resp.StatusCode != http.StatusTooManyRequests || time.Now().After(deadline) {
			break
		}
		resp.Body.Close()
		wait := time.Second
		if s, err := strconv.Atoi(resp.Header.Get("Retry-After")); err == nil && s > 0 && s <= 5 {
			wait = time.Duration(s) * time.Second
		}
		time.Sleep(wait) // the server's Retry-After: the protocol, not a synchronisation
	}
	if resp.StatusCode != 200 {
		r.t.Fatalf("%s: watch %s: %s", r.name, path, resp.Status)
	}
	w := &lcWatch{r: r, lines: make(chan string, 1000), cancel: cancel}
	go func() {
		defer resp.Body.Close()
		defer close(w.lines)
		sc := bufio.NewScanner(resp.Body)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			w.lines <- summarizeLCEvent(sc.Bytes())
		}
		if sc.Err() == nil {
			w.lines <- "END"
		} else if ctx.Err() == nil {
			w.lines <- "BROKEN " + sc.Err().Error()
		}
	}()
	r.t.Cleanup(cancel)
	return w
}

var lcDigits = regexp.MustCompile(`[0-9]+`)

func summarizeLCEvent(b []byte) string {
	var ev struct {
		Type   string
		Object struct {
			APIVersion string `json:"apiVersion"`
			Message    string `json:"message"`
			Code       int    `json:"code"`
			Metadata   struct {
				Name              string   `json:"name"`
				DeletionTimestamp string   `json:"deletionTimestamp"`
				Finalizers        []string `json:"finalizers"`
			} `json:"metadata"`
			Status json.RawMessage `json:"status"`
		} `json:"object"`
	}
	if err := json.Unmarshal(b, &ev); err != nil {
		return "UNDECODABLE " + err.Error()
	}
	o := ev.Object
	if ev.Type == "ERROR" {
		return fmt.Sprintf("ERROR %d %s", o.Code, lcDigits.ReplaceAllString(o.Message, "N"))
	}
	line := ev.Type + " " + o.Metadata.Name + " " + o.APIVersion
	if o.Metadata.DeletionTimestamp != "" {
		line += " deleting"
	}
	if len(o.Metadata.Finalizers) > 0 {
		line += " finalizers=" + strings.Join(o.Metadata.Finalizers, ",")
	}
	var st struct {
		Conditions []struct{ Type, Status, Reason, Message string }
	}
	if json.Unmarshal(o.Status, &st) == nil {
		for _, c := range st.Conditions {
			line += fmt.Sprintf(" %s=%s(%s: %s)", c.Type, c.Status, c.Reason, c.Message)
		}
	}
	return line
}

// next returns the watch's next line (bookmarks skipped).
func (w *lcWatch) next() string {
	w.r.t.Helper()
	for {
		select {
		case l, ok := <-w.lines:
			if !ok {
				return "CLOSED"
			}
			if strings.HasPrefix(l, "BOOKMARK") {
				continue
			}
			return l
		case <-time.After(30 * time.Second):
			return "TIMEOUT"
		}
	}
}

// record adds the watch's next n lines to the transcript under label.
func (w *lcWatch) record(label string, n int) {
	for range n {
		w.r.add("%s: %s", label, w.next())
	}
}

// canonical re-encodes JSON with sorted keys.
func canonical(raw json.RawMessage) string {
	var v any
	json.Unmarshal(raw, &v)
	b, _ := json.Marshal(v)
	return string(b)
}

func rvOf(body string) string {
	var o struct {
		Metadata struct{ ResourceVersion string }
	}
	json.Unmarshal([]byte(body), &o)
	return o.Metadata.ResourceVersion
}

func statusLine(code int, ct, body string) string {
	if !strings.HasPrefix(ct, "application/json") {
		return fmt.Sprintf("%d %s %q", code, strings.Split(ct, ";")[0], body)
	}
	var st struct {
		Kind, Reason, Message string
		Details               json.RawMessage
	}
	json.Unmarshal([]byte(body), &st)
	if st.Kind != "Status" {
		return fmt.Sprintf("%d %s", code, st.Kind)
	}
	return fmt.Sprintf("%d %s %s %s", code, st.Reason, lcDigits.ReplaceAllString(st.Message, "N"), st.Details)
}

func (r *crdRun) run() []string {
	t := r.t
	r.start = time.Now()
	_, list := r.req("GET", lcCRDs, "", "")
	crds := r.watch(lcCRDs + "?watch=1&fieldSelector=metadata.name%3D" + lcCRD + "&resourceVersion=" + rvOf(list))

	// Create: the answer, then the conditions as the controllers set them.
	code, body := r.req("POST", lcCRDs, lcCRDBody(""), "")
	var created struct {
		Spec   struct{ Conversion, Names json.RawMessage }
		Status json.RawMessage
	}
	json.Unmarshal([]byte(body), &created)
	r.add("create CRD: %d conversion=%s names=%s status=%s", code, canonical(created.Spec.Conversion), canonical(created.Spec.Names), canonical(created.Status))
	crds.record("crd", 3)
	r.until("v1 served", func() bool { c, _ := r.req("GET", r.path("v1"), "", ""); return c == 200 })
	r.logf("v1 served")
	typeMeta := `"apiVersion":"` + lcGroup + `/v1","kind":"Gizmo",`
	for _, o := range []string{`{` + typeMeta + `"metadata":{"name":"a"}}`, `{` + typeMeta + `"metadata":{"name":"b","finalizers":["` + lcGroup + `/hold"]}}`} {
		code, body := r.req("POST", r.path("v1"), o, "")
		r.add("create: %d %v", code, strings.Contains(body, `"apiVersion":"`+lcGroup+`/v1"`))
	}
	_, list = r.req("GET", r.path("v1"), "", "")
	oldRV := rvOf(list)

	// A version added: the watch of the old storage ends, without an ERROR.
	w1 := r.watch(r.path("v1") + "?watch=1&allowWatchBookmarks=true&resourceVersion=" + oldRV)
	code, _ = r.req("PATCH", lcCRDs+"/"+lcCRD, `{"spec":`+lcCRDBody("true")[strings.Index(lcCRDBody("true"), `"spec":`)+7:len(lcCRDBody("true"))-1]+`}`, "application/merge-patch+json")
	r.add("add v2: %d", code)
	crds.record("crd", 1)
	r.add("watch of v1 during the change: %s", w1.next())
	r.logf("the v1 watch ended")
	r.until("v2 served", func() bool { c, _ := r.req("GET", r.path("v2"), "", ""); return c == 200 })
	code, body = r.req("GET", r.path("v2")+"/a", "", "")
	r.add("get a at v2: %d %v", code, strings.Contains(body, `"apiVersion":"`+lcGroup+`/v2"`))
	old := r.watch(r.path("v1") + "?watch=1&resourceVersion=" + oldRV)
	old.record("watch from before the change", 2)

	// The version no longer served.
	code, _ = r.req("PATCH", lcCRDs+"/"+lcCRD, `{"spec":`+lcCRDBody("false")[strings.Index(lcCRDBody("false"), `"spec":`)+7:len(lcCRDBody("false"))-1]+`}`, "application/merge-patch+json")
	r.add("v2 not served: %d", code)
	crds.record("crd", 1)
	r.until("v2 gone", func() bool { c, _ := r.req("GET", r.path("v2"), "", ""); return c == 404 })
	r.add("list at v2: %s", statusLine(r.reqCT("GET", r.path("v2"), "", "")))

	// Delete: what the CRD, a watch of its resource and requests see.
	r.until("v1 served again", func() bool { c, _ := r.req("GET", r.path("v1"), "", ""); return c == 200 })
	w2 := r.watch(r.path("v1") + "?watch=1")
	w2.record("watch", 2)
	code, body = r.req("DELETE", lcCRDs+"/"+lcCRD, "", "")
	r.add("delete CRD: %d %s", code, summarizeLCEvent([]byte(`{"type":"ANSWER","object":`+body+`}`)))
	deleted := time.Now()
	crds.record("crd", 2)
	w2.record("watch", 2)
	code, ct, body := r.reqCT("POST", r.path("v1"), `{`+typeMeta+`"metadata":{"name":"c"}}`, "")
	r.add("create while terminating: %s", statusLine(code, ct, body))
	code, _ = r.req("GET", r.path("v1"), "", "")
	r.add("list while terminating: %d", code)
	code, _ = r.req("PATCH", r.path("v1")+"/b", `{"metadata":{"finalizers":null}}`, "application/merge-patch+json")
	r.add("remove b's finalizer: %d", code)
	w2.record("watch", 1)
	crds.record("crd", 1)
	r.logf("CRD deleted %.3fs after the request", time.Since(deleted).Seconds())
	gone := time.Now()
	r.until("resource gone", func() bool { c, _ := r.req("GET", r.path("v1"), "", ""); return c == 404 })
	// The kube-apiserver's discovery controller drops the group a moment after the version.
	r.until("group gone", func() bool { c, _ := r.req("GET", "/apis/"+lcGroup, "", ""); return c == 404 })
	for _, p := range []string{r.path("v1"), r.path("v1") + "/a", r.path("v1") + "?watch=1", "/apis/" + lcGroup + "/v1", "/apis/" + lcGroup} {
		r.add("GET %s: %s", strings.ReplaceAll(p, r.ns, "{ns}"), statusLine(r.reqCT("GET", p, "", "")))
	}
	r.add("watch after the CRD went: %s", w2.next())
	r.logf("the resource's watch ended %.3fs after the CRD's DELETED event", time.Since(gone).Seconds())

	// Created again: served, empty; a watch from an old resourceVersion gets 410.
	code, _ = r.req("POST", lcCRDs, lcCRDBody(""), "")
	r.add("re-create CRD: %d", code)
	crds.record("crd", 3)
	r.until("v1 served after re-creation", func() bool { c, _ := r.req("GET", r.path("v1"), "", ""); return c == 200 })
	_, body = r.req("GET", r.path("v1"), "", "")
	r.add("list after re-creation: %v", strings.Contains(body, `"items":[]`))
	r.watch(r.path("v1")+"?watch=1&resourceVersion="+oldRV).record("watch from the old CRD's resourceVersion", 2)
	code, _ = r.req("DELETE", lcCRDs+"/"+lcCRD, "", "")
	r.add("delete CRD again: %d", code)
	crds.record("crd", 3)
	if t.Failed() {
		t.Logf("%s transcript:\n%s", r.name, strings.Join(r.lines, "\n"))
	}
	return r.lines
}
