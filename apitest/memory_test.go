package apitest_test

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	"github.com/informerkit/informerkit/apiclient"
	"github.com/informerkit/informerkit/apitest"
	"github.com/informerkit/informerkit/meta"
)

// An in-memory server runs inside a synctest bubble: a watch that waits ten minutes for its
// next event is durably blocked, so the fake clock jumps.
func TestInMemoryServerInSynctest(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := apitest.NewServerWithOptions(apitest.Options{InMemory: true})
		defer s.Close()
		c, err := apiclient.New(s.Config())
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		cms := apiclient.NewResource[*ConfigMap](c, meta.GroupVersionResource{Version: "v1", Resource: "configmaps"}).Namespace("default")
		ctx := context.Background()
		w, err := cms.Watch(ctx, apiclient.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		defer w.Stop()
		start := time.Now()
		go func() {
			time.Sleep(10 * time.Minute)
			if _, err := s.Create("configmaps", map[string]any{"metadata": map[string]any{"namespace": "default", "name": "late"}}); err != nil {
				t.Error(err)
			}
		}()
		ev, ok := <-w.ResultChan()
		if !ok || ev.Object.Name != "late" {
			t.Fatalf("event %+v, %v", ev, ok)
		}
		if d := time.Since(start); d != 10*time.Minute {
			t.Errorf("the event came after %v of fake time, want 10m", d)
		}
		if s.URL != "http://apitest.invalid" {
			t.Errorf("URL %s", s.URL)
		}
	})
}
