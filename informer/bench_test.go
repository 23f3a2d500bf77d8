package informer

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"github.com/informerkit/informerkit/apiclient"
	"github.com/informerkit/informerkit/apitest"
	"github.com/informerkit/informerkit/internal/testobj"
	"github.com/informerkit/informerkit/reflector"
)

const benchObjects = 20000

var benchServer = sync.OnceValues(func() (*apitest.Server, error) {
	s, err := apitest.Start(apitest.Options{})
	if err != nil {
		return nil, err
	}
	for i := range benchObjects {
		if _, err := s.Create("configmaps", map[string]any{
			"metadata": map[string]any{"namespace": "default", "name": fmt.Sprintf("cm-%05d", i), "labels": map[string]any{"app": fmt.Sprint("a", i%10)}},
			"data":     map[string]any{"k": "v"},
		}); err != nil {
			s.Close()
			return nil, err
		}
	}
	return s, nil
})

// BenchmarkSync measures the time from Run to HasSynced of an informer over 20,000 small
// objects (so that the informer's own work, not decoding, dominates), for each DeltaFIFO
// mode and for LIST and WatchList. It is what the choice of the default mode rests on.
func BenchmarkSync(b *testing.B) {
	s, err := benchServer()
	if err != nil {
		b.Fatal(err)
	}
	c, err := apiclient.New(s.Config())
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	for _, wl := range []reflector.WatchListMode{reflector.WatchListOff, reflector.WatchListOn} {
		for _, mode := range []fifoMode{fifoCoalescing, fifoInOrder, fifoAtomic} {
			b.Run(fmt.Sprintf("watchList=%v/mode=%v", wl, mode), func(b *testing.B) {
				for range b.N {
					inf := New(configMaps(c), Options[*testobj.ConfigMap]{mode: mode, WatchList: wl, Logger: discardLogger()})
					reg, _ := inf.AddEventHandler(ResourceEventHandlerFuncs[*testobj.ConfigMap]{})
					ctx, cancel := context.WithCancel(context.Background())
					go inf.Run(ctx)
					<-reg.Synced()
					b.StopTimer()
					if inf.GetStore().Len() != benchObjects {
						b.Fatalf("cached %d", inf.GetStore().Len())
					}
					cancel()
					<-inf.Done()
					b.StartTimer()
				}
				b.ReportMetric(float64(benchObjects*b.N)/b.Elapsed().Seconds(), "objects/s")
			})
		}
	}
}
