package leaderelection_test

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/informerkit/informerkit/apiclient"
	"github.com/informerkit/informerkit/apitest"
	"github.com/informerkit/informerkit/leaderelection"
)

// One candidate leads, does its work, and releases the Lease when it is done.
func Example() {
	srv := apitest.NewServer()
	defer srv.Close()
	client, err := apiclient.New(srv.Config())
	if err != nil {
		panic(err)
	}
	defer client.Close()

	ctx, cancel := context.WithCancel(context.Background())
	el, err := leaderelection.New(leaderelection.Config{
		Client:          client,
		Namespace:       "kube-system",
		Name:            "example-controller",
		Identity:        "replica-1",
		LeaseDuration:   15 * time.Second,
		RenewDeadline:   10 * time.Second,
		RetryPeriod:     2 * time.Second,
		ReleaseOnCancel: true,
		Logger:          slog.New(slog.DiscardHandler),
		Callbacks: leaderelection.Callbacks{
			OnStartedLeading: func(ctx context.Context) {
				fmt.Println("leading: doing the work")
				cancel() // the work is done; a real controller runs until ctx is done
			},
			OnStoppedLeading: func() { fmt.Println("stopped leading") },
		},
	})
	if err != nil {
		panic(err)
	}
	fmt.Println("Run:", el.Run(ctx))

	lease, _ := srv.Get("leases", "kube-system", "example-controller")
	fmt.Printf("holder after release: %q\n", lease["spec"].(map[string]any)["holderIdentity"])
	// Output:
	// leading: doing the work
	// stopped leading
	// Run: <nil>
	// holder after release: ""
}
