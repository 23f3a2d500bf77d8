package apiclient_test

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"testing"

	"github.com/informerkit/informerkit/apiclient"
	"github.com/informerkit/informerkit/apitest"
	"github.com/informerkit/informerkit/internal/testobj"
	"github.com/informerkit/informerkit/meta"
)

// ListEach hands out exactly what List returns, page by page, with the same metadata.
func TestListEachAgreesWithList(t *testing.T) {
	s, c := newServer(t, apiclient.WatchChunked)
	ctx := testCtx(t)
	for i := range 7 {
		if _, err := s.Create("configmaps", map[string]any{
			"metadata": map[string]any{"namespace": "default", "name": fmt.Sprintf("cm-%d", i), "labels": map[string]any{"i": fmt.Sprint(i)}},
			"data":     map[string]any{"k": strings.Repeat("v", i)},
		}); err != nil {
			t.Fatal(err)
		}
	}
	cms := apiclient.NewResource[*testobj.ConfigMap](c, testobj.ConfigMapGVR)
	for _, opts := range []apiclient.ListOptions{{}, {ResourceVersion: "0"}, {Limit: 3}, {LabelSelector: "i in (1,4,6)", Limit: 2}} {
		for {
			page, err := cms.List(ctx, opts)
			if err != nil {
				t.Fatal(err)
			}
			var got []*testobj.ConfigMap
			lm, err := cms.ListEach(ctx, opts, func(cm *testobj.ConfigMap) error { got = append(got, cm); return nil })
			if err != nil {
				t.Fatal(err)
			}
			if lm.ResourceVersion != page.ResourceVersion || lm.Continue != page.Continue {
				t.Fatalf("%+v: ListEach metadata %+v, List %+v", opts, lm, page.ListMeta)
			}
			if len(got) != len(page.Items) {
				t.Fatalf("%+v: ListEach %d items, List %d", opts, len(got), len(page.Items))
			}
			for i := range got {
				a, b := got[i], page.Items[i]
				if a.Name != b.Name || a.ResourceVersion != b.ResourceVersion || a.Data["k"] != b.Data["k"] || a.Labels["i"] != b.Labels["i"] {
					t.Fatalf("%+v: item %d: ListEach %+v, List %+v", opts, i, a, b)
				}
			}
			if page.Continue == "" {
				break
			}
			opts.Continue, opts.ResourceVersion = page.Continue, ""
		}
	}
}

// A LIST refused by the server reaches a caller that turned retries off at once, with one
// request; with retries (the default) the client absorbs it.
func TestDisableRetriesAgainstServerFaults(t *testing.T) {
	s, c := newServer(t, apiclient.WatchChunked)
	ctx := testCtx(t)
	cms := apiclient.NewResource[*testobj.ConfigMap](c, testobj.ConfigMapGVR)
	cm, err := cms.Create(ctx, &testobj.ConfigMap{ObjectMeta: meta.ObjectMeta{Name: "a", Namespace: "default"}}, apiclient.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	inDefault := cms.Namespace("default")
	list := map[string]struct {
		verb apitest.Verb
		do   func(noRetries bool) error
	}{
		"List": {apitest.VerbList, func(no bool) error {
			_, err := cms.List(ctx, apiclient.ListOptions{DisableRetries: no})
			return err
		}},
		"ListEach": {apitest.VerbList, func(no bool) error {
			_, err := cms.ListEach(ctx, apiclient.ListOptions{DisableRetries: no}, func(*testobj.ConfigMap) error { return nil })
			return err
		}},
		"Get": {apitest.VerbGet, func(no bool) error {
			_, err := inDefault.Get(ctx, cm.Name, apiclient.GetOptions{DisableRetries: no})
			return err
		}},
		"Do": {apitest.VerbGet, func(no bool) error {
			_, err := c.Do(ctx, apiclient.Request{Path: "/api/v1/namespaces/default/configmaps/a", DisableRetries: no})
			return err
		}},
	}
	for name, tc := range list {
		t.Run(name, func(t *testing.T) {
			seq := s.LastRequestSeq()
			if err := s.Faults().FailRequests(tc.verb, "configmaps", 1, http.StatusInternalServerError, 0); err != nil {
				t.Fatal(err)
			}
			if err := tc.do(true); !meta.IsInternalError(err) {
				t.Fatalf("err = %v, want the 500", err)
			}
			if n := len(s.RequestsMatching(apitest.RequestFilter{Verb: tc.verb, After: seq})); n != 1 {
				t.Fatalf("%d %s requests, want 1", n, tc.verb)
			}
			seq = s.LastRequestSeq()
			if err := s.Faults().FailRequests(tc.verb, "configmaps", 1, http.StatusInternalServerError, 0); err != nil {
				t.Fatal(err)
			}
			if err := tc.do(false); err != nil {
				t.Fatalf("with retries: %v", err)
			}
			if n := len(s.RequestsMatching(apitest.RequestFilter{Verb: tc.verb, After: seq})); n != 2 {
				t.Fatalf("%d %s requests, want 2 (one retry)", n, tc.verb)
			}
		})
	}
}

// BenchmarkListEach compares the memory of decoding one unpaged LIST response whole (List)
// and item by item (ListEach, each item dropped after the callback, as an incremental store
// that updates in place lets it be) for 500 and 10,000 configmaps of about 1 KB.
func BenchmarkListEach(b *testing.B) {
	s := apitest.NewServerWithOptions(apitest.Options{Logger: slog.New(slog.DiscardHandler)})
	defer s.Close()
	c, err := apiclient.New(s.Config())
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	cms := apiclient.NewResource[*testobj.ConfigMap](c, testobj.ConfigMapGVR)
	ctx := context.Background()
	payload := strings.Repeat("x", 900)
	created := 0
	for _, n := range []int{500, 10000} {
		for ; created < n; created++ {
			if _, err := s.Create("configmaps", map[string]any{
				"metadata": map[string]any{"namespace": "default", "name": fmt.Sprintf("cm-%05d", created), "labels": map[string]any{"app": "bench"}},
				"data":     map[string]any{"payload": payload},
			}); err != nil {
				b.Fatal(err)
			}
		}
		b.Run(fmt.Sprintf("items=%d/op=List", n), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				l, err := cms.List(ctx, apiclient.ListOptions{})
				if err != nil || len(l.Items) != n {
					b.Fatal(len(l.Items), err)
				}
			}
		})
		b.Run(fmt.Sprintf("items=%d/op=ListEach", n), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				got := 0
				if _, err := cms.ListEach(ctx, apiclient.ListOptions{}, func(*testobj.ConfigMap) error { got++; return nil }); err != nil || got != n {
					b.Fatal(got, err)
				}
			}
		})
	}
}
