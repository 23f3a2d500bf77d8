package apiclient_test

import (
	"strings"
	"sync"
	"testing"

	"github.com/informerkit/informerkit/apiclient"
	"github.com/informerkit/informerkit/internal/testobj"
)

// TestDecodeOptions: a Resource with OmitManagedFields decodes objects without their
// managedFields (Get, List, ListEach, Watch), the Strings hook supplies every string it
// decodes, from protobuf and from JSON, and JSONStandard (encoding/json) ignores both for
// JSON responses.
func TestDecodeOptions(t *testing.T) {
	for _, tc := range []struct {
		dec     apiclient.JSONDecoder
		json    bool // DisableProtobuf
		omitted bool
	}{
		{apiclient.JSONCompiled, false, true},
		{apiclient.JSONStandard, false, true}, // protobuf: the JSON decoder plays no part
		{apiclient.JSONCompiled, true, true},
		{apiclient.JSONStandard, true, false},
	} {
		dec := tc.dec
		s, _ := newServer(t, apiclient.WatchChunked)
		cfg := s.Config()
		cfg.JSONDecoder = dec
		cfg.DisableProtobuf = tc.json
		c, err := apiclient.New(cfg)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		ctx := testCtx(t)
		mf := []any{map[string]any{"manager": "kubectl", "operation": "Update", "apiVersion": "v1", "fieldsType": "FieldsV1", "fieldsV1": map[string]any{"f:data": map[string]any{}}}}
		if _, err := s.Create("configmaps", map[string]any{"metadata": map[string]any{"namespace": "default", "name": "a", "managedFields": mf}, "data": map[string]any{"k": "v"}}); err != nil {
			t.Fatal(err)
		}
		var mu sync.Mutex
		asked := map[string]int{}
		plain := apiclient.NewResource[*testobj.ConfigMap](c, testobj.ConfigMapGVR).Namespace("default")
		tuned := plain.WithDecodeOptions(apiclient.DecodeOptions{OmitManagedFields: true, Strings: func(b []byte) string {
			mu.Lock()
			asked[string(b)]++
			mu.Unlock()
			return string(b)
		}}).(*apiclient.Resource[*testobj.ConfigMap])
		omitted := tc.omitted

		check := func(what string, cm *testobj.ConfigMap) {
			t.Helper()
			if cm.Name != "a" || cm.Data["k"] != "v" {
				t.Fatalf("%v %s: %+v", dec, what, cm)
			}
			if has := strings.Contains(string(cm.ManagedFields), "FieldsV1"); has == omitted {
				t.Fatalf("%v %s: managedFields %q (want them omitted: %v)", dec, what, cm.ManagedFields, omitted)
			}
		}
		cm, err := tuned.Get(ctx, "a", apiclient.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		check("Get", cm)
		l, err := tuned.List(ctx, apiclient.ListOptions{})
		if err != nil || len(l.Items) != 1 {
			t.Fatalf("List: %v, %v", l, err)
		}
		check("List", l.Items[0])
		if _, err := tuned.ListEach(ctx, apiclient.ListOptions{}, func(cm *testobj.ConfigMap) error { check("ListEach", cm); return nil }); err != nil {
			t.Fatal(err)
		}
		w, err := tuned.Watch(ctx, apiclient.ListOptions{ResourceVersion: "0"})
		if err != nil {
			t.Fatal(err)
		}
		check("Watch", recv(t, w).Object)
		w.Stop()
		if cm, err := plain.Get(ctx, "a", apiclient.GetOptions{}); err != nil || !strings.Contains(string(cm.ManagedFields), "FieldsV1") {
			t.Fatalf("%v: the Resource WithDecodeOptions copied changed: %v %q", dec, err, cm.ManagedFields)
		}
		mu.Lock()
		if omitted && (asked["a"] < 4 || asked["v"] < 4 || asked["FieldsV1"] != 0) {
			t.Fatalf("strings asked for: %v", asked)
		}
		if !omitted && len(asked) != 0 {
			t.Fatalf("encoding/json asked for strings: %v", asked)
		}
		mu.Unlock()
	}
}
