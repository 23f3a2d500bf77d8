package apiclient_test

import (
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/informerkit/informerkit/apiclient"
	"github.com/informerkit/informerkit/internal/testobj"
	"github.com/informerkit/informerkit/meta"
)

// Large objects (decoded in parallel from their size on) and small ones (decoded where they
// are read) come out of a LIST and a watch in the server's order with the same content as
// with DecodeWorkers 1, over protobuf and JSON and both watch transports.
func TestParallelDecodeKeepsTheServersOrder(t *testing.T) {
	for _, proto := range []apiclient.WatchProtocol{apiclient.WatchChunked, apiclient.WatchWebSocket} {
		for _, noProtobuf := range []bool{false, true} {
			t.Run(fmt.Sprintf("protocol=%d/json=%v", proto, noProtobuf), func(t *testing.T) {
				s, seqClient := newServer(t, proto)
				ctx := testCtx(t)
				clients := map[string]*apiclient.Client{}
				for name, workers := range map[string]int{"sequential": 1, "parallel": 4} {
					cfg := s.Config()
					cfg.WatchProtocol, cfg.DisableProtobuf, cfg.DecodeWorkers = proto, noProtobuf, workers
					c, err := apiclient.New(cfg)
					if err != nil {
						t.Fatal(err)
					}
					t.Cleanup(c.Close)
					clients[name] = c
				}
				writer := apiclient.NewResource[*testobj.ConfigMap](seqClient, testobj.ConfigMapGVR).Namespace("default")
				start, err := writer.List(ctx, apiclient.ListOptions{})
				if err != nil {
					t.Fatal(err)
				}
				watches := map[string]apiclient.Watcher[*testobj.ConfigMap]{}
				for name, c := range clients {
					w, err := apiclient.NewResource[*testobj.ConfigMap](c, testobj.ConfigMapGVR).Namespace("default").
						Watch(ctx, apiclient.ListOptions{ResourceVersion: start.ResourceVersion})
					if err != nil {
						t.Fatal(err)
					}
					defer w.Stop()
					watches[name] = w
				}
				const n = 24
				for i := range n {
					// Every third object is 100 KB (above both thresholds), the others small.
					size := 40
					if i%3 == 0 {
						size = 100 << 10
					}
					data := map[string]string{}
					for k := 0; k*100 < size; k++ {
						data[fmt.Sprintf("k%04d", k)] = fmt.Sprintf("%d-%d-%s", i, k, strings.Repeat("v", 90))
					}
					if _, err := writer.Create(ctx, &testobj.ConfigMap{ObjectMeta: meta.ObjectMeta{Name: fmt.Sprintf("cm-%02d", i)}, Data: data}, apiclient.CreateOptions{}); err != nil {
						t.Fatal(err)
					}
				}
				got := map[string][]*testobj.ConfigMap{}
				for name, w := range watches {
					for range n {
						ev := recv(t, w)
						if ev.Type != apiclient.Added {
							t.Fatalf("%s: %s event: %v", name, ev.Type, ev.Err)
						}
						got[name+" watch"] = append(got[name+" watch"], ev.Object)
					}
				}
				for name, c := range clients {
					if _, err := apiclient.NewResource[*testobj.ConfigMap](c, testobj.ConfigMapGVR).Namespace("default").
						ListEach(ctx, apiclient.ListOptions{}, func(cm *testobj.ConfigMap) error {
							got[name+" list"] = append(got[name+" list"], cm)
							return nil
						}); err != nil {
						t.Fatal(err)
					}
				}
				for _, what := range []string{"watch", "list"} {
					seq, par := got["sequential "+what], got["parallel "+what]
					if len(seq) != n || len(par) != n {
						t.Fatalf("%s: %d and %d objects, want %d", what, len(seq), len(par), n)
					}
					for i := range seq {
						if seq[i].Name != fmt.Sprintf("cm-%02d", i) || !reflect.DeepEqual(seq[i], par[i]) {
							t.Fatalf("%s: object %d: sequential %s (%d keys), parallel %s (%d keys)", what, i, seq[i].Name, len(seq[i].Data), par[i].Name, len(par[i].Data))
						}
					}
				}
			})
		}
	}
}
