package ring_test

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/informerkit/informerkit/apiclient"
	"github.com/informerkit/informerkit/apitest"
	"github.com/informerkit/informerkit/informer"
	"github.com/informerkit/informerkit/meta"
	"github.com/informerkit/informerkit/sharding"
	"github.com/informerkit/informerkit/sharding/listwatch"
	"github.com/informerkit/informerkit/sharding/ring"
)

func ExampleAssign() {
	// Two replicas split 4 buckets; every replica computes the same split.
	a, err := ring.Assign([]string{"ctrl-a", "ctrl-b"}, 4)
	if err != nil {
		panic(err)
	}
	for _, m := range a.Members() {
		sel, _ := a.Selector(sharding.FieldUID, m)
		fmt.Printf("%s: %v\n", m, sel.Ranges)
	}
	fmt.Println("owner of hash 0:", a.Owner(0))
	// Output:
	// ctrl-a: [[0x8000000000000000, 0x10000000000000000)]
	// ctrl-b: [[0x0000000000000000, 0x8000000000000000)]
	// owner of hash 0: ctrl-b
}

// ConfigMap declares the fields of a ConfigMap the example's informer keeps: metadata.
type ConfigMap struct {
	meta.TypeMeta
	meta.ObjectMeta `json:"metadata"`
}

// A replica of a sharded controller: its Ring holds the member Lease and the share; its
// informer lists and watches only that share; its workers reconcile under Begin.
func Example_replica() {
	srv := apitest.NewServer()
	defer srv.Close()
	cfg := srv.Config()
	cfg.MaxRetries = -1
	client, err := apiclient.New(cfg)
	if err != nil {
		panic(err)
	}
	defer client.Close()

	r, err := ring.New(client, "default", "my-controller", "replica-a", ring.Options{
		LeaseDuration: 2 * time.Second, RenewDeadline: 1500 * time.Millisecond, RetryPeriod: 100 * time.Millisecond,
		Logger: slog.New(slog.DiscardHandler),
	})
	if err != nil {
		panic(err)
	}
	cms := apiclient.NewResource[*ConfigMap](client, meta.GroupVersionResource{Version: "v1", Resource: "configmaps"}).Namespace("default")
	lw, err := listwatch.New[*ConfigMap](cms, r, listwatch.Options{})
	if err != nil {
		panic(err)
	}
	inf := informer.New(lw, informer.Options[*ConfigMap]{Logger: slog.New(slog.DiscardHandler)})

	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Go(func() { _ = r.Run(ctx) })
	wg.Go(func() { inf.Run(ctx) })

	// Alone in the ring, the replica comes to hold the whole hash space.
	for {
		changed := r.Changed() // before reading Held: a change in between still wakes us
		if len(r.Held()) > 0 {
			break
		}
		<-changed
	}
	sel, _ := r.Selector()
	fmt.Println(sel)

	// A reconcile of an object runs only while its range is held; giving the range up
	// waits for it.
	if done, ok := r.BeginObject("6f1c1f0e-7a52-4c5e-8a4b-0c2b9f0e5d11", "default"); ok {
		fmt.Println("reconciling")
		done()
	}
	cancel() // drains, then releases the Lease
	wg.Wait()
	// Output:
	// shardRange(object.metadata.uid, '0x0000000000000000', '0x10000000000000000')
	// reconciling
}
