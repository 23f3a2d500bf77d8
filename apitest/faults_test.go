package apitest_test

import (
	"errors"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/informerkit/informerkit/apiclient"
	"github.com/informerkit/informerkit/apitest"
	"github.com/informerkit/informerkit/meta"
)

// openWatch opens a watch at the current RV and waits until the server has registered it.
func openWatch(t *testing.T, e *env, opts apiclient.ListOptions) (apiclient.Watcher[*ConfigMap], apitest.WatchInfo) {
	t.Helper()
	opened := e.s.NextWatch("configmaps")
	if opts.ResourceVersion == "" {
		opts.ResourceVersion = e.s.ResourceVersion()
	}
	w, err := e.cms.Watch(e.ctx, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(w.Stop)
	select {
	case info := <-opened:
		return w, info
	case <-e.ctx.Done():
		t.Fatal("watch never registered")
	}
	panic("unreachable")
}

func TestCutWatches(t *testing.T) {
	e := newEnv(t)
	w, info := openWatch(t, e, apiclient.ListOptions{})
	if n, err := e.s.Faults().CutWatches("configmaps"); err != nil || n != 1 {
		t.Fatalf("CutWatches = %d, %v", n, err)
	}
	closed(t, w)
	f := e.s.Faults().RecordsOf(apitest.FaultCutWatch)
	if len(f) != 1 || f[0].WatchID != info.ID || f[0].Resource != "configmaps" {
		t.Fatalf("fault log %+v", e.s.Faults().Records())
	}
	if err := e.s.WaitFor(e.ctx, func() bool { return len(e.s.Watches("")) == 0 }); err != nil {
		t.Fatal(err)
	}
}

func TestCutWatchesAfterEvents(t *testing.T) {
	e := newEnv(t)
	w, _ := openWatch(t, e, apiclient.ListOptions{})
	e.s.Faults().CutWatchesAfter("cm", 2)
	for i := range 3 {
		e.s.Create("configmaps", cm("c"+strconv.Itoa(i), nil, nil))
	}
	for i := range 2 {
		if ev := next(t, w); ev.Type != apiclient.Added || ev.Object.Name != "c"+strconv.Itoa(i) {
			t.Fatalf("event %d: %s %s", i, ev.Type, ev.Object.Name)
		}
	}
	closed(t, w)
}

func TestAbortWatches(t *testing.T) {
	e := newEnv(t)
	w, _ := openWatch(t, e, apiclient.ListOptions{})
	e.s.Faults().AbortWatches("")
	// An aborted chunked stream ends with a transport error (unexpected EOF), or closes.
	for ev := range w.ResultChan() {
		if ev.Type != apiclient.Error {
			t.Fatalf("unexpected event %s", ev.Type)
		}
	}
	if len(e.s.Faults().RecordsOf(apitest.FaultAbortWatch)) != 1 {
		t.Fatalf("faults %+v", e.s.Faults().Records())
	}
}

func TestExpireWatches(t *testing.T) {
	e := newEnv(t)
	w, _ := openWatch(t, e, apiclient.ListOptions{})
	e.s.Faults().ExpireWatches("configmaps")
	ev := next(t, w)
	if ev.Type != apiclient.Error || !meta.IsResourceExpired(ev.Err) {
		t.Fatalf("expected ERROR 410, got %s %v", ev.Type, ev.Err)
	}
	closed(t, w)
	f := e.s.Faults().RecordsOf(apitest.FaultWatchError)
	if len(f) != 1 || f[0].Code != 410 {
		t.Fatalf("faults %+v", f)
	}
}

func TestStallWatches(t *testing.T) {
	e := newEnvWithOptions(t, apitest.Options{BookmarkInterval: 10 * time.Millisecond, ProgressNotify: true})
	w, _ := openWatch(t, e, apiclient.ListOptions{AllowWatchBookmarks: true})
	release, n, err := e.s.Faults().StallWatches("configmaps", 0)
	if err != nil || n != 1 {
		t.Fatalf("StallWatches: %d %v", n, err)
	}
	if err := e.s.WaitFor(e.ctx, func() bool { return len(e.s.Faults().RecordsOf(apitest.FaultStall)) == 1 }); err != nil {
		t.Fatal(err)
	}
	sentAtStall := e.s.Watches("configmaps")[0].LastRV
	// A bookmark would be due (the global RV moves) and an event happens: neither is sent.
	e.s.Create("secrets", map[string]any{"metadata": map[string]any{"name": "s", "namespace": "default"}})
	e.s.Create("configmaps", cm("during", nil, nil))
	silence := time.NewTimer(100 * time.Millisecond) // bounded observation of silence
	defer silence.Stop()
	select {
	case ev := <-w.ResultChan():
		t.Fatalf("event during stall: %s %s", ev.Type, ev.Object.Name)
	case <-silence.C:
	}
	if got := e.s.Watches("configmaps")[0].LastRV; got != sentAtStall {
		t.Fatalf("stalled watch wrote up to RV %d (was %d)", got, sentAtStall)
	}
	release()
	release()
	for {
		ev := next(t, w)
		if ev.Type == apiclient.Bookmark {
			continue
		}
		if ev.Type != apiclient.Added || ev.Object.Name != "during" {
			t.Fatalf("after release: %s %s", ev.Type, ev.Object.Name)
		}
		break
	}
	if len(e.s.Faults().RecordsOf(apitest.FaultStallEnd)) != 1 {
		t.Fatalf("faults %+v", e.s.Faults().Records())
	}
}

func TestStallForDuration(t *testing.T) {
	e := newEnv(t)
	w, _ := openWatch(t, e, apiclient.ListOptions{})
	e.s.Faults().StallWatches("configmaps", 50*time.Millisecond)
	e.s.Create("configmaps", cm("x", nil, nil))
	if ev := next(t, w); ev.Type != apiclient.Added {
		t.Fatalf("got %s", ev.Type)
	}
	if err := e.s.WaitFor(e.ctx, func() bool { return len(e.s.Faults().RecordsOf(apitest.FaultStallEnd)) == 1 }); err != nil {
		t.Fatal(err)
	}
}

func TestCorruptAndOversizedFrames(t *testing.T) {
	e := newEnv(t)
	w, _ := openWatch(t, e, apiclient.ListOptions{})
	e.s.Faults().SendCorruptFrame("configmaps")
	ev := next(t, w)
	var de *apiclient.DecodeError
	if ev.Type != apiclient.Error || !errors.As(ev.Err, &de) {
		t.Fatalf("corrupt frame: %s %v", ev.Type, ev.Err)
	}
	closed(t, w)
	// The server notices the client's close of the first watch.
	if err := e.s.WaitFor(e.ctx, func() bool { return len(e.s.Watches("")) == 0 }); err != nil {
		t.Fatal(err)
	}

	cfg := e.s.Config()
	cfg.MaxEventSize = 4096
	c, _ := apiclient.New(cfg)
	defer c.Close()
	small := apiclient.NewResource[*ConfigMap](c, configmapsGVR).Namespace("default")
	opened := e.s.NextWatch("configmaps")
	w2, err := small.Watch(e.ctx, apiclient.ListOptions{ResourceVersion: e.s.ResourceVersion(), AllowWatchBookmarks: true})
	if err != nil {
		t.Fatal(err)
	}
	defer w2.Stop()
	<-opened
	e.s.Faults().SendOversizedFrame("configmaps", 10000)
	if ev := next(t, w2); ev.Type != apiclient.Error || !errors.Is(ev.Err, apiclient.ErrEventTooLarge) {
		t.Fatalf("oversized frame: %s %v", ev.Type, ev.Err)
	}
	if len(e.s.Faults().RecordsOf(apitest.FaultOversizedFrame)) != 1 || len(e.s.Faults().RecordsOf(apitest.FaultCorruptFrame)) != 1 {
		t.Fatalf("faults %+v", e.s.Faults().Records())
	}
}

func TestFailRequests(t *testing.T) {
	e := newEnv(t)
	if err := e.s.Faults().FailRequests(apitest.VerbList, "configmaps", 2, 429, 3*time.Second); err != nil {
		t.Fatal(err)
	}
	for range 2 {
		_, err := e.cms.List(e.ctx, apiclient.ListOptions{})
		mustStatus(t, err, 429, meta.StatusReasonTooManyRequests)
		if d, ok := meta.RetryAfter(err); !ok || d != 3*time.Second {
			t.Fatalf("retry after %v %v", d, ok)
		}
	}
	if _, err := e.cms.List(e.ctx, apiclient.ListOptions{}); err != nil {
		t.Fatalf("third list: %v", err)
	}
	// Other verbs and resources are not affected; watches can fail too.
	e.s.Faults().FailRequests(apitest.VerbWatch, "", 1, 503, time.Second)
	if _, err := e.s.Create("configmaps", cm("x", nil, nil)); err != nil {
		t.Fatal(err)
	}
	_, err := e.cms.Watch(e.ctx, apiclient.ListOptions{ResourceVersion: "0"})
	mustStatus(t, err, 503, meta.StatusReasonServiceUnavailable)
	e.s.Faults().FailRequests(apitest.VerbAny, "", 1, 500, 0)
	_, err = e.cms.Get(e.ctx, "x", apiclient.GetOptions{})
	mustStatus(t, err, 500, meta.StatusReasonInternalError)
	f := e.s.Faults().RecordsOf(apitest.FaultFailRequest)
	if len(f) != 4 || f[0].Code != 429 || f[2].Verb != apitest.VerbWatch || f[3].Verb != apitest.VerbGet {
		t.Fatalf("fault log %+v", f)
	}
	if reqs := e.s.RequestsFor(apitest.VerbList, "cm"); len(reqs) != 3 || reqs[0].Code != 429 || reqs[2].Code != 200 {
		t.Fatalf("request log %+v", reqs)
	}
	if err := e.s.Faults().FailRequests(apitest.VerbGet, "nosuch", 1, 500, 0); err == nil {
		t.Fatal("unknown resource accepted")
	}
}

func TestWriteDelay(t *testing.T) {
	e := newEnv(t)
	e.s.Faults().SetWriteDelay("configmaps", 30*time.Millisecond)
	start := time.Now()
	if _, err := e.cms.List(e.ctx, apiclient.ListOptions{}); err != nil {
		t.Fatal(err)
	}
	if time.Since(start) < 30*time.Millisecond {
		t.Fatal("the delay was not applied")
	}
	e.s.Faults().SetWriteDelay("configmaps", 0)
	if len(e.s.Faults().RecordsOf(apitest.FaultWriteDelay)) != 2 {
		t.Fatalf("faults %+v", e.s.Faults().Records())
	}
}

func TestSlowWatcherIsClosed(t *testing.T) {
	e := newEnvWithOptions(t, apitest.Options{HistorySize: 5})
	w, _ := openWatch(t, e, apiclient.ListOptions{})
	release, _, _ := e.s.Faults().StallWatches("configmaps", 0)
	e.s.WaitFor(e.ctx, func() bool { return len(e.s.Faults().RecordsOf(apitest.FaultStall)) == 1 })
	for i := range 10 {
		e.s.Create("configmaps", cm("c"+strconv.Itoa(i), nil, nil))
	}
	release()
	closed(t, w)
	if len(e.s.Faults().RecordsOf(apitest.FaultSlowWatcherClosed)) != 1 {
		t.Fatalf("faults %+v", e.s.Faults().Records())
	}
}

func TestWaitForRequestAndRequestLog(t *testing.T) {
	e := newEnv(t)
	mark := e.s.LastRequestSeq()
	done := make(chan error, 1)
	go func() {
		_, err := e.cms.List(e.ctx, apiclient.ListOptions{ResourceVersion: "0", Limit: 500, LabelSelector: "a=b"})
		done <- err
	}()
	r, err := e.s.WaitForRequest(e.ctx, apitest.RequestFilter{Verb: apitest.VerbList, Resource: "configmaps", After: mark})
	if err != nil {
		t.Fatal(err)
	}
	if r.Param("resourceVersion") != "0" || r.Param("limit") != "500" || r.Param("labelSelector") != "a=b" || r.Namespace != "default" {
		t.Fatalf("request %+v", r)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if n := e.s.CountRequests(apitest.VerbList, "configmaps"); n != 1 {
		t.Fatalf("count %d", n)
	}
	e.s.ClearRequests()
	if len(e.s.Requests()) != 0 {
		t.Fatal("ClearRequests left records")
	}
}

// FailRequestsWithStatus answers with the Status as given (here the way kube-apiservers before
// 1.17 worded a too-large resourceVersion), Retry-After included.
func TestFailRequestsWithStatus(t *testing.T) {
	e := newEnv(t)
	old := &meta.Status{TypeMeta: meta.TypeMeta{Kind: "Status", APIVersion: "v1"}, Status: "Failure",
		Message: "Too large resource version: 20, current: 10", Reason: meta.StatusReasonTimeout, Code: 504,
		Details: &meta.StatusDetails{RetryAfterSeconds: 2}}
	if err := e.s.Faults().FailRequestsWithStatus(apitest.VerbList, "configmaps", 1, old); err != nil {
		t.Fatal(err)
	}
	_, err := e.cms.List(e.ctx, apiclient.ListOptions{})
	st := mustStatus(t, err, 504, meta.StatusReasonTimeout)
	if st.Message != old.Message || !meta.IsTooLargeResourceVersion(err) {
		t.Fatalf("answer %+v", st)
	}
	if d, ok := meta.RetryAfter(err); !ok || d != 2*time.Second {
		t.Fatalf("retry after %v %v", d, ok)
	}
	if _, err := e.cms.List(e.ctx, apiclient.ListOptions{}); err != nil {
		t.Fatalf("second list: %v", err)
	}
	if err := e.s.Faults().FailRequestsWithStatus(apitest.VerbList, "", 1, &meta.Status{Code: 200}); err == nil {
		t.Fatal("a Status without an error code accepted")
	}
}

// ResetRequests drops requests without an answer, over every transport: the client gets a
// transport error (no Status, not "connection refused"), and the next request works.
func TestResetRequests(t *testing.T) {
	for _, tc := range []struct {
		name  string
		proto apiclient.WatchProtocol
		opts  apitest.Options
	}{
		{"http1", apiclient.WatchChunked, apitest.Options{}},
		{"http2", apiclient.WatchChunked, apitest.Options{TLS: true}},
		{"websocket", apiclient.WatchWebSocket, apitest.Options{}},
		{"websocket-tls", apiclient.WatchWebSocket, apitest.Options{TLS: true}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnvProtoWithOptions(t, tc.proto, tc.opts)
			if err := e.s.Faults().ResetRequests(apitest.VerbWatch, "configmaps", 2); err != nil {
				t.Fatal(err)
			}
			for range 2 {
				w, err := e.cms.Watch(e.ctx, apiclient.ListOptions{ResourceVersion: "0"})
				if err == nil {
					w.Stop()
					t.Fatal("a reset watch opened")
				}
				if _, ok := meta.AsStatus(err); ok || errors.Is(err, syscall.ECONNREFUSED) {
					t.Fatalf("reset watch: %v, want a transport error", err)
				}
			}
			w, _ := openWatch(t, e, apiclient.ListOptions{})
			w.Stop()
			reqs := e.s.RequestsFor(apitest.VerbWatch, "configmaps")
			if len(reqs) != 3 || reqs[0].Code != apitest.CodeDropped || reqs[1].Code != apitest.CodeDropped {
				t.Fatalf("request log %+v", reqs)
			}
			if f := e.s.Faults().RecordsOf(apitest.FaultResetRequest); len(f) != 2 || f[0].Verb != apitest.VerbWatch {
				t.Fatalf("fault log %+v", f)
			}
		})
	}
}
