package controller

import (
	"context"
	"log/slog"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/informerkit/informerkit/apitest"
	"github.com/informerkit/informerkit/controller/client"
	"github.com/informerkit/informerkit/internal/testobj"
	"github.com/informerkit/informerkit/kinds"
	"github.com/informerkit/informerkit/workqueue"
)

// levelRecorder is a slog.Handler that keeps the level and message of every record.
type levelRecorder struct {
	mu      sync.Mutex
	records []slog.Record
}

func (h *levelRecorder) Enabled(context.Context, slog.Level) bool { return true }
func (h *levelRecorder) Handle(_ context.Context, r slog.Record) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.records = append(h.records, r.Clone())
	return nil
}
func (h *levelRecorder) WithAttrs([]slog.Attr) slog.Handler { return h }
func (h *levelRecorder) WithGroup(string) slog.Handler      { return h }

func (h *levelRecorder) atLeast(level slog.Level) []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	var out []string
	for _, r := range h.records {
		if r.Level >= level {
			out = append(out, r.Message)
		}
	}
	return out
}

// A reconcile whose update answers 409 Conflict is retried, counted in Stats and in
// informerkit_controller_reconcile_conflicts_total, and logged below ERROR: conflicts are
// normal with concurrent writers. Another error is still logged at ERROR.
func TestConflictsAreCountedNotLoggedAsErrors(t *testing.T) {
	srv := newTestServer(t)
	logs := &levelRecorder{}
	m := newManager(t, srv, ManagerOptions{Kinds: kinds.NewRegistry(), Logger: slog.New(logs)})
	cms := client.TypedFor[*testobj.ConfigMap](m.Client())
	done := make(chan struct{}, 10)
	c, err := New("touch", ReconcilerFunc(func(ctx context.Context, req Request) (Result, error) {
		cm, err := cms.Get(ctx, req.Namespace, req.Name, client.GetOptions{})
		if err != nil {
			return Result{}, err
		}
		if cm.Data["touched"] == "yes" {
			done <- struct{}{}
			return Result{}, nil
		}
		cm.Data = map[string]string{"touched": "yes"}
		_, err = cms.Update(ctx, cm, client.UpdateOptions{})
		return Result{}, err
	}), Options{RateLimiter: workqueue.NewItemExponentialFailureRateLimiter[Request](time.Millisecond, 10*time.Millisecond)})
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Watch(FromInformer[*testobj.ConfigMap](mustInformer[*testobj.ConfigMap](t, m), EnqueueRequestForObject[*testobj.ConfigMap]())); err != nil {
		t.Fatal(err)
	}
	if err := m.Add(c); err != nil {
		t.Fatal(err)
	}
	if err := srv.Faults().FailRequests(apitest.VerbUpdate, "configmaps", 3, http.StatusConflict, 0); err != nil {
		t.Fatal(err)
	}
	if err := srv.Faults().FailRequests(apitest.VerbUpdate, "configmaps", 1, http.StatusInternalServerError, 0); err != nil {
		t.Fatal(err)
	}
	startManager(t, m)
	if _, err := srv.Create("configmaps", map[string]any{"metadata": map[string]any{"namespace": "default", "name": "c"}}); err != nil {
		t.Fatal(err)
	}
	select {
	case <-done:
	case <-time.After(testTimeout):
		t.Fatal("the ConfigMap was never updated")
	}
	st := c.Stats()
	if st.Conflicts != 3 || st.Errors != 4 || st.Requeues < 4 || st.Reconciles < 5 || st.Dropped != 0 {
		t.Errorf("stats %+v, want 3 conflicts of 4 errors, at least 4 requeues and 5 reconciles (the 6th may still be running)", st)
	}
	if v := metricValue(t, m, "informerkit_controller_reconcile_conflicts_total", map[string]string{"controller": "touch"}); v != 3 {
		t.Errorf("conflicts metric %v, want 3", v)
	}
	if v := metricValue(t, m, "controller_runtime_reconcile_errors_total", map[string]string{"controller": "touch"}); v != 4 {
		t.Errorf("errors metric %v, want 4", v)
	}
	errs := logs.atLeast(slog.LevelError)
	if len(errs) != 1 || errs[0] != "reconcile failed; retrying with backoff" {
		t.Errorf("ERROR lines %q, want one: the 500's", errs)
	}
}
