package apitest_test

import (
	"context"
	"fmt"

	"github.com/informerkit/informerkit/apiclient"
	"github.com/informerkit/informerkit/apitest"
	"github.com/informerkit/informerkit/meta"
)

// A test starts a server, seeds it from Go, and talks to it with apiclient; a fault and the
// request log make the client's behaviour observable.
func Example() {
	s := apitest.NewServer()
	defer s.Close()
	s.Create("configmaps", map[string]any{"metadata": map[string]any{"name": "settings", "namespace": "default"}, "data": map[string]any{"mode": "fast"}})

	cfg := s.Config()
	cfg.MaxRetries = -1
	c, _ := apiclient.New(cfg)
	defer c.Close()
	cms := apiclient.NewResource[*ConfigMap](c, meta.GroupVersionResource{Version: "v1", Resource: "configmaps"}).Namespace("default")
	ctx := context.Background()

	s.Faults().FailRequests(apitest.VerbList, "configmaps", 1, 429, 0)
	_, err := cms.List(ctx, apiclient.ListOptions{ResourceVersion: "0", Limit: 500})
	fmt.Println("first list:", meta.IsTooManyRequests(err))
	list, _ := cms.List(ctx, apiclient.ListOptions{ResourceVersion: "0", Limit: 500})
	fmt.Println("second list:", list.Items[0].Name, list.Items[0].Data["mode"])

	for _, r := range s.RequestsFor(apitest.VerbList, "configmaps") {
		fmt.Println(r.Verb, r.Resource, "resourceVersion="+r.Param("resourceVersion"), "limit="+r.Param("limit"), r.Code)
	}
	fmt.Println("faults:", len(s.Faults().RecordsOf(apitest.FaultFailRequest)))
	// Output:
	// first list: true
	// second list: settings fast
	// list configmaps resourceVersion=0 limit=500 429
	// list configmaps resourceVersion=0 limit=500 200
	// faults: 1
}
