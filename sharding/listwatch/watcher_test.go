package listwatch_test

import (
	"context"
	"errors"
	"log/slog"
	"testing"
	"time"

	"github.com/informerkit/informerkit/apiclient"
	"github.com/informerkit/informerkit/apitest"
	"github.com/informerkit/informerkit/internal/testobj"
	"github.com/informerkit/informerkit/sharding/listwatch"
)

// A sharded watch says what its inner watch says: the fallbacks made to open it (the
// reflector counts them) and, once it ends, why (the reflector tells a broken connection
// from a clean end by it), also after it moved to new ranges on a watch of its own.
func TestWatchTellsTheInnerWatchersErrAndFallbacks(t *testing.T) {
	srv := apitest.NewServerWithOptions(apitest.Options{RefuseWebSocket: true})
	t.Cleanup(srv.Close)
	createConfigMaps(t, srv, "default", "cm", 4)
	cfg := srv.Config() // WatchAuto: WebSocket first
	cfg.Logger = slog.New(slog.DiscardHandler)
	c, err := apiclient.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	sh := newShare(lower, upper)
	lw, err := listwatch.New(apiclient.NewResource[*testobj.ConfigMap](c, testobj.ConfigMapGVR), sh, listwatch.Options{})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	type errer interface{ Err() error }
	type fallbacker interface{ Fallbacks() []error }
	watch := func() apiclient.Watcher[*testobj.ConfigMap] {
		t.Helper()
		opened := srv.NextWatch("configmaps")
		w, err := lw.Watch(ctx, apiclient.ListOptions{ResourceVersion: srv.ResourceVersion(), AllowWatchBookmarks: true})
		if err != nil {
			t.Fatal(err)
		}
		if _, ok := w.(errer); !ok {
			t.Fatalf("%T has no Err method", w)
		}
		if _, ok := w.(fallbacker); !ok {
			t.Fatalf("%T has no Fallbacks method", w)
		}
		waitWatch(ctx, t, opened)
		return w
	}
	// drain reads w to its end and returns its Err.
	drain := func(w apiclient.Watcher[*testobj.ConfigMap]) error {
		t.Helper()
		for {
			select {
			case _, ok := <-w.ResultChan():
				if !ok {
					return w.(errer).Err()
				}
			case <-ctx.Done():
				t.Fatal("the watch never ended")
			}
		}
	}

	// The first watch asked for WebSocket and was refused; its connection breaks.
	w := watch()
	if fb := w.(fallbacker).Fallbacks(); len(fb) != 1 || !errors.Is(fb[0], apiclient.ErrWebSocketRefused) {
		t.Errorf("Fallbacks() = %v, want the refused WebSocket", fb)
	}
	if _, err := srv.Faults().AbortWatches("configmaps"); err != nil {
		t.Fatal(err)
	}
	if err := drain(w); err == nil {
		t.Error("a watch whose connection broke ended with Err() nil, as a clean end")
	}

	// The next one opens chunked HTTP directly, and the server ends it cleanly.
	w = watch()
	if fb := w.(fallbacker).Fallbacks(); len(fb) != 0 {
		t.Errorf("Fallbacks() of the second watch = %v, want none", fb)
	}
	if _, err := srv.Faults().CutWatches("configmaps"); err != nil {
		t.Fatal(err)
	}
	if err := drain(w); err != nil {
		t.Errorf("a watch the server ended cleanly: Err() = %v, want nil", err)
	}

	// A watch moved to new ranges watches again; that watch's end is the one told.
	w = watch()
	createConfigMaps(t, srv, "default", "after", 1) // an event: a resourceVersion to move at
	select {
	case <-w.ResultChan():
	case <-ctx.Done():
		t.Fatal("no event")
	}
	moved := srv.NextWatch("configmaps")
	sh.set(lower)
	waitWatch(ctx, t, moved)
	if _, err := srv.Faults().AbortWatches("configmaps"); err != nil {
		t.Fatal(err)
	}
	if err := drain(w); err == nil {
		t.Error("a moved watch whose connection broke ended with Err() nil, as a clean end")
	}
}

func waitWatch(ctx context.Context, t *testing.T, opened <-chan apitest.WatchInfo) {
	t.Helper()
	select {
	case <-opened:
	case <-ctx.Done():
		t.Fatal("no watch opened")
	}
}
