package apiclient_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"strings"

	"github.com/informerkit/informerkit/apiclient"
	"github.com/informerkit/informerkit/apitest"
	"github.com/informerkit/informerkit/meta"
)

// Pod declares only what a controller reads; everything else in the server's JSON is
// skipped while decoding.
type Pod struct {
	meta.TypeMeta
	meta.ObjectMeta `json:"metadata"`
	Spec            struct {
		NodeName string `json:"nodeName"`
	} `json:"spec"`
}

// ConfigMap declares the fields of a ConfigMap the examples read: metadata and data.
type ConfigMap struct {
	meta.TypeMeta
	meta.ObjectMeta `json:"metadata"`
	Data            map[string]string `json:"data,omitempty"`
}

// Load the configuration the way kubectl does and list pods.
func ExampleLoadConfig() {
	cfg, err := apiclient.LoadConfig()
	if err != nil {
		log.Fatal(err)
	}
	c, err := apiclient.New(cfg)
	if err != nil {
		log.Fatal(err)
	}
	pods := apiclient.NewResource[*Pod](c, meta.GroupVersionResource{Version: "v1", Resource: "pods"}).Namespace(cfg.Namespace)
	for pod, err := range pods.All(context.Background(), apiclient.ListOptions{}) {
		if err != nil {
			log.Fatal(err)
		}
		fmt.Println(pod.Name, pod.Spec.NodeName)
	}
}

// CRUD and a watch against the in-process API server.
func ExampleNewResource() {
	srv := apitest.NewServer()
	defer srv.Close()
	c, err := apiclient.New(srv.Config())
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()
	ctx := context.Background()
	cms := apiclient.NewResource[*ConfigMap](c, meta.GroupVersionResource{Version: "v1", Resource: "configmaps"}).Namespace("default")

	created, err := cms.Create(ctx, &ConfigMap{ObjectMeta: meta.ObjectMeta{Name: "settings"}, Data: map[string]string{"mode": "fast"}}, apiclient.CreateOptions{})
	if err != nil {
		log.Fatal(err)
	}
	w, err := cms.Watch(ctx, apiclient.ListOptions{ResourceVersion: created.ResourceVersion})
	if err != nil {
		log.Fatal(err)
	}
	defer w.Stop()
	created.Data["mode"] = "safe"
	if _, err := cms.Update(ctx, created, apiclient.UpdateOptions{}); err != nil {
		log.Fatal(err)
	}
	ev := <-w.ResultChan()
	fmt.Println(ev.Type, ev.Object.Name, ev.Object.Data["mode"])

	_, err = cms.Update(ctx, created, apiclient.UpdateOptions{}) // created's resourceVersion is stale now
	fmt.Println("conflict:", meta.IsConflict(err))
	// Output:
	// MODIFIED settings safe
	// conflict: true
}

// Decode a recorded watch stream, as the watch of every Resource does.
func ExampleNewEventDecoder() {
	stream := `{"type":"ADDED","object":{"kind":"Pod","apiVersion":"v1","metadata":{"name":"a","resourceVersion":"5"}}}
{"type":"BOOKMARK","object":{"kind":"Pod","apiVersion":"v1","metadata":{"resourceVersion":"9"}}}
{"type":"ERROR","object":{"kind":"Status","apiVersion":"v1","status":"Failure","reason":"Expired","code":410,"message":"too old resource version"}}
`
	dec := apiclient.NewEventDecoder[*Pod](strings.NewReader(stream), 0, "Pod")
	for {
		ev, err := dec.Next()
		if err != nil {
			var de *apiclient.DecodeError
			fmt.Println("end:", err, errors.As(err, &de))
			return
		}
		switch ev.Type {
		case apiclient.Error:
			fmt.Println("error; relist:", meta.IsResourceExpired(ev.Err))
		default:
			fmt.Println(ev.Type, ev.Object.ResourceVersion)
		}
	}
	// Output:
	// ADDED 5
	// BOOKMARK 9
	// error; relist: true
	// end: EOF false
}

// Resolve what a user typed, as kubectl does, and work with objects that have no Go type.
func ExampleResourceFor() {
	srv := apitest.NewServer()
	defer srv.Close()
	c, _ := apiclient.New(srv.Config())
	defer c.Close()
	ctx := context.Background()
	cms, info, err := apiclient.ResourceFor[*meta.Unstructured](ctx, c, "cm")
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(info.GroupVersionResource, info.Kind, info.Namespaced)

	u := &meta.Unstructured{Object: map[string]any{}}
	u.SetAPIVersion("v1")
	u.SetKind("ConfigMap")
	u.SetName("dyn")
	_ = meta.SetNestedField(u.Object, "on", "data", "feature")
	out, err := cms.Namespace("default").Create(ctx, u, apiclient.CreateOptions{})
	if err != nil {
		log.Fatal(err)
	}
	v, _, _ := meta.NestedString(out.Object, "data", "feature")
	fmt.Println(out.GetName(), v)
	// Output:
	// configmaps.v1 ConfigMap true
	// dyn on
}

// Load the configuration of another kubeconfig context, as kubectl --context dev does.
func ExampleLoadConfigWithOptions() {
	cfg, err := apiclient.LoadConfigWithOptions(apiclient.LoadOptions{CurrentContext: "dev"})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(cfg.Host)
}
