package apitest_test

import (
	"context"
	"errors"
	"syscall"
	"testing"
	"testing/synctest"
	"time"

	"github.com/informerkit/informerkit/apiclient"
	"github.com/informerkit/informerkit/apitest"
	"github.com/informerkit/informerkit/internal/testobj"
)

// netClient starts a server on a new in-memory network and returns it with a client of it.
func netClient(t *testing.T, tls bool, proto apiclient.WatchProtocol) (*apitest.Network, *apitest.Server, *apiclient.Resource[*testobj.ConfigMap]) {
	t.Helper()
	netw := apitest.NewNetwork()
	srv := apitest.NewServerWithOptions(apitest.Options{Network: netw, TLS: tls})
	t.Cleanup(srv.Close)
	cfg := srv.Config()
	cfg.WatchProtocol, cfg.MaxRetries = proto, -1
	c, err := apiclient.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	return netw, srv, apiclient.NewResource[*testobj.ConfigMap](c, testobj.ConfigMapGVR).Namespace("default")
}

func TestNetworkPartitionHoldsTrafficUntilItHeals(t *testing.T) {
	for _, tc := range []struct {
		name  string
		tls   bool
		proto apiclient.WatchProtocol
	}{{"http2", true, apiclient.WatchChunked}, {"websocket", false, apiclient.WatchWebSocket}} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				netw, srv, cms := netClient(t, tc.tls, tc.proto)
				ctx := context.Background()
				l, err := cms.List(ctx, apiclient.ListOptions{})
				if err != nil {
					t.Fatal(err)
				}
				w, err := cms.Watch(ctx, apiclient.ListOptions{ResourceVersion: l.ResourceVersion})
				if err != nil {
					t.Fatal(err)
				}
				defer w.Stop()

				heal := netw.Partition()
				srv.Create("configmaps", map[string]any{"metadata": map[string]any{"name": "during", "namespace": "default"}})
				// Nothing gets through while partitioned: not the event, not a new request.
				gctx, cancel := context.WithTimeout(ctx, 5*time.Second)
				_, err = cms.Get(gctx, "during", apiclient.GetOptions{})
				cancel()
				if !errors.Is(err, context.DeadlineExceeded) {
					t.Errorf("Get during the partition: %v, want the context's deadline", err)
				}
				select {
				case ev := <-w.ResultChan():
					t.Fatalf("event during the partition: %+v", ev)
				default:
				}
				heal()
				// The held stream resumes with the event written meanwhile.
				if ev := <-w.ResultChan(); ev.Type != apiclient.Added || ev.Object.Name != "during" {
					t.Errorf("after healing: %+v", ev)
				}
			})
		})
	}
}

func TestNetworkDialDuringPartitionNeverCompletes(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		netw := apitest.NewNetwork()
		ln, err := netw.Listen("127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		defer ln.Close()
		heal := netw.Partition()
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		errc := make(chan error, 1)
		go func() {
			_, err := netw.Dial(ctx, "tcp", ln.Addr().String())
			errc <- err
		}()
		synctest.Wait()
		heal() // too late for that SYN
		if err := <-errc; !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("dial begun during the partition: %v, want its deadline", err)
		}
		c, err := netw.Dial(context.Background(), "tcp", ln.Addr().String())
		if err != nil {
			t.Fatalf("dial after healing: %v", err)
		}
		c.Close()
	})
}

func TestNetworkDisconnectResetsAndRefuses(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		netw, _, cms := netClient(t, true, apiclient.WatchAuto)
		ctx := context.Background()
		w, err := cms.Watch(ctx, apiclient.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		defer w.Stop()
		restore := netw.Disconnect()
		for range w.ResultChan() {
		}
		if err := w.(interface{ Err() error }).Err(); !errors.Is(err, syscall.ECONNRESET) {
			t.Errorf("watch ended with %v, want a reset", err)
		}
		if _, err := cms.List(ctx, apiclient.ListOptions{}); !errors.Is(err, syscall.ECONNREFUSED) {
			t.Errorf("List while disconnected: %v, want connection refused", err)
		}
		restore()
		if _, err := cms.List(ctx, apiclient.ListOptions{}); err != nil {
			t.Errorf("List after restoring: %v", err)
		}
	})
}

func TestHangRequests(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		_, srv, cms := netClient(t, true, apiclient.WatchAuto)
		if err := srv.Faults().HangRequests(apitest.VerbList, "configmaps", 1); err != nil {
			t.Fatal(err)
		}
		start := time.Now()
		_, err := cms.List(context.Background(), apiclient.ListOptions{})
		var te *apiclient.TimeoutError
		if !errors.As(err, &te) || time.Since(start) != apiclient.DefaultResponseHeaderTimeout {
			t.Errorf("hung List: %v after %v", err, time.Since(start))
		}
		if _, err := cms.List(context.Background(), apiclient.ListOptions{}); err != nil {
			t.Errorf("next List: %v", err)
		}
		reqs := srv.RequestsFor(apitest.VerbList, "configmaps")
		if len(reqs) != 2 || reqs[0].Code != apitest.CodeHung || reqs[1].Code != 200 {
			t.Errorf("request log %+v", reqs)
		}
		if f := srv.Faults().RecordsOf(apitest.FaultHangRequest); len(f) != 1 {
			t.Errorf("fault log %+v", f)
		}
		// ReleaseHungRequests resets the requests held.
		if err := srv.Faults().HangRequests(apitest.VerbList, "configmaps", 1); err != nil {
			t.Fatal(err)
		}
		errc := make(chan error, 1)
		go func() {
			_, err := cms.List(context.Background(), apiclient.ListOptions{})
			errc <- err
		}()
		synctest.Wait()
		if n := srv.Faults().ReleaseHungRequests(); n != 1 {
			t.Errorf("released %d hung requests, want 1", n)
		}
		if err := <-errc; err == nil || errors.As(err, &te) {
			t.Errorf("released List: %v, want a reset", err)
		}
	})
}
