package apitest_test

import (
	"context"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/informerkit/informerkit/apiclient"
	"github.com/informerkit/informerkit/apitest"
	"github.com/informerkit/informerkit/meta"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// ConfigMap is the typed object the tests use.
type ConfigMap struct {
	meta.TypeMeta
	meta.ObjectMeta `json:"metadata"`
	Data            map[string]string `json:"data,omitempty"`
}

// Deployment declares the fields the generation tests need.
type Deployment struct {
	meta.TypeMeta
	meta.ObjectMeta `json:"metadata"`
	Spec            map[string]any `json:"spec,omitempty"`
	Status          map[string]any `json:"status,omitempty"`
}

var (
	configmapsGVR  = meta.GroupVersionResource{Version: "v1", Resource: "configmaps"}
	deploymentsGVR = meta.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}
)

// env is a server and an apiclient connected to it.
type env struct {
	s   *apitest.Server
	c   *apiclient.Client
	cms *apiclient.Resource[*ConfigMap]
	ctx context.Context
}

func newEnv(t *testing.T) *env {
	t.Helper()
	return newEnvWithOptions(t, apitest.Options{})
}

func newEnvWithOptions(t *testing.T, opts apitest.Options) *env {
	t.Helper()
	s := apitest.NewServerWithOptions(opts)
	cfg := s.Config()
	cfg.MaxRetries = -1
	cfg.WatchProtocol = apiclient.WatchChunked
	c, err := apiclient.New(cfg)
	if err != nil {
		s.Close()
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	t.Cleanup(func() {
		cancel()
		c.Close()
		s.Close()
	})
	return &env{s: s, c: c, cms: apiclient.NewResource[*ConfigMap](c, configmapsGVR).Namespace("default"), ctx: ctx}
}

func cm(name string, labels map[string]string, data map[string]string) *ConfigMap {
	return &ConfigMap{ObjectMeta: meta.ObjectMeta{Name: name, Namespace: "default", Labels: labels}, Data: data}
}

// next reads one event or fails.
func next[T any](t *testing.T, w apiclient.Watcher[T]) apiclient.Event[T] {
	t.Helper()
	select {
	case ev, ok := <-w.ResultChan():
		if !ok {
			t.Fatal("watch closed, expected an event")
		}
		return ev
	case <-time.After(30 * time.Second):
		t.Fatal("no watch event within 30s")
	}
	panic("unreachable")
}

// closed waits until the watch's channel closes, failing on any further event.
func closed[T any](t *testing.T, w apiclient.Watcher[T]) {
	t.Helper()
	select {
	case ev, ok := <-w.ResultChan():
		if ok {
			t.Fatalf("expected the watch to close, got %s %+v (err %v)", ev.Type, ev.Object, ev.Err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("watch did not close within 30s")
	}
}

func mustStatus(t *testing.T, err error, code int32, reason meta.StatusReason) *meta.Status {
	t.Helper()
	st, ok := meta.AsStatus(err)
	if !ok {
		t.Fatalf("expected a Status error %d %s, got %v", code, reason, err)
	}
	if st.Code != code || st.Reason != reason {
		t.Fatalf("expected Status %d %s, got %d %s: %s", code, reason, st.Code, st.Reason, st.Message)
	}
	return st
}
