package sharding_test

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"testing"
	"time"

	"github.com/informerkit/informerkit/meta"

	"github.com/informerkit/informerkit/apiclient"
	"github.com/informerkit/informerkit/apitest"
	"github.com/informerkit/informerkit/e2e/cluster"
	"github.com/informerkit/informerkit/sharding"
)

type configMap struct {
	meta.TypeMeta
	meta.ObjectMeta `json:"metadata"`
}

var (
	configMapsGVR = meta.GroupVersionResource{Version: "v1", Resource: "configmaps"}
	namespacesGVR = meta.GroupVersionResource{Version: "v1", Resource: "namespaces"}
)

// side is one of the two servers compared: the real kube-apiserver or apitest.
type side struct {
	name string
	cms  *apiclient.Resource[*configMap] // all namespaces
	c    *apiclient.Client
}

func realSide(t *testing.T) side {
	c := cluster.ForTest(t)
	cfg, err := apiclient.LoadConfigWithOptions(apiclient.LoadOptions{Kubeconfig: c.KubeconfigPath})
	if err != nil {
		t.Fatal(err)
	}
	return newSide(t, "kube-apiserver", cfg)
}

func apitestSide(t *testing.T) side {
	s := apitest.NewServer()
	t.Cleanup(s.Close)
	return newSide(t, "apitest", s.Config())
}

func newSide(t *testing.T, name string, cfg *apiclient.Config) side {
	cfg.WatchProtocol = apiclient.WatchChunked
	cfg.MaxRetries = -1 // a 500 is an answer here, not something to retry
	c, err := apiclient.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	return side{name: name, c: c, cms: apiclient.NewResource[*configMap](c, configMapsGVR)}
}

func ctxFor(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(t.Context(), 3*time.Minute)
	t.Cleanup(cancel)
	return ctx
}

// seed creates the same namespaces and configmaps (labelled set=<label>) on s and returns
// each object's uid by "namespace/name".
func seed(t *testing.T, ctx context.Context, s side, label string, nss, perNS int) map[string]string {
	t.Helper()
	uids := map[string]string{}
	for i := range nss {
		ns := &configMap{ObjectMeta: meta.ObjectMeta{Name: fmt.Sprintf("%s-%d", label, i)}}
		ns.APIVersion, ns.Kind = "v1", "Namespace"
		if _, err := apiclient.NewResource[*configMap](s.c, namespacesGVR).Create(ctx, ns, apiclient.CreateOptions{}); err != nil {
			t.Fatalf("%s: %v", s.name, err)
		}
		for j := range perNS {
			cm := &configMap{ObjectMeta: meta.ObjectMeta{Name: fmt.Sprintf("cm-%d", j), Labels: map[string]string{"set": label}}}
			cm.APIVersion, cm.Kind = "v1", "ConfigMap"
			out, err := s.cms.Namespace(ns.Name).Create(ctx, cm, apiclient.CreateOptions{})
			if err != nil {
				t.Fatalf("%s: %v", s.name, err)
			}
			uids[out.Namespace+"/"+out.Name] = out.UID
		}
	}
	return uids
}

// listAll pages through a sharded list and returns the keys, checking shardInfo.
func listAll(t *testing.T, ctx context.Context, s side, opts apiclient.ListOptions) []string {
	t.Helper()
	var keys []string
	for {
		l, err := s.cms.List(ctx, opts)
		if err != nil {
			t.Fatalf("%s: list %q: %v", s.name, opts.ShardSelector, err)
		}
		if l.ShardInfo == nil || l.ShardInfo.Selector != opts.ShardSelector {
			t.Errorf("%s: shardInfo %+v, want the selector echoed", s.name, l.ShardInfo)
		}
		for _, o := range l.Items {
			keys = append(keys, o.Namespace+"/"+o.Name)
		}
		if l.Continue == "" {
			return keys
		}
		opts.Continue = l.Continue
	}
}

// eighths splits the hash space in eight ranges, with a selector that ORs two of them.
func selectors(f sharding.Field) []sharding.Selector {
	var out []sharding.Selector
	for i := range uint64(8) {
		out = append(out, sharding.NewSelector(f, sharding.Range{Start: i << 61, End: (i + 1) << 61}))
	}
	out = append(out, sharding.NewSelector(f, sharding.Range{Start: 0, End: 1 << 61}, sharding.Range{Start: 7 << 61}))
	return out
}

// TestShardSelectorSameRanges: for selectors on uid and on namespace, OR-ed ranges, paging and
// a label selector next to it, kube-apiserver lists exactly the objects informerkit's matcher
// (the one apitest serves with) puts in the range; by namespace, both servers list the same
// objects by name.
func TestShardSelectorSameRanges(t *testing.T) {
	ctx := ctxFor(t)
	real, fake := realSide(t), apitestSide(t)
	realUIDs := seed(t, ctx, real, "ranges", 12, 8)
	fakeUIDs := seed(t, ctx, fake, "ranges", 12, 8)
	for _, f := range []sharding.Field{sharding.FieldUID, sharding.FieldNamespace} {
		covered := map[string]int{}
		for _, sel := range selectors(f) {
			opts := apiclient.ListOptions{ShardSelector: sel.String(), LabelSelector: "set=ranges", Limit: 5}
			got := listAll(t, ctx, real, opts)
			fakeGot := listAll(t, ctx, fake, opts)
			var want []string
			for key, uid := range realUIDs {
				ns := key[:len(key)-len("/cm-0")]
				if sel.MatchesObject(uid, ns) {
					want = append(want, key)
				}
			}
			slices.Sort(got)
			slices.Sort(want)
			if !slices.Equal(want, got) {
				t.Errorf("kube-apiserver %s:\n informerkit's matcher: %v\n server:                %v", sel, want, got)
			}
			if len(sel.Ranges) == 1 {
				for _, k := range got {
					covered[k]++
				}
			}
			if f == sharding.FieldNamespace {
				slices.Sort(fakeGot)
				if !slices.Equal(got, fakeGot) {
					t.Errorf("%s:\n kube-apiserver: %v\n apitest:        %v", sel, got, fakeGot)
				}
			}
		}
		for _, k := range slices.Sorted(maps.Keys(realUIDs)) {
			if covered[k] != 1 {
				t.Errorf("%s: %s in %d of the eight ranges", f, k, covered[k])
			}
		}
	}
	if len(fakeUIDs) != len(realUIDs) {
		t.Fatalf("seeded %d and %d", len(fakeUIDs), len(realUIDs))
	}
}

// TestShardSelectorWatchSameObjects: a sharded watch on each server delivers the objects
// created in its range and nothing else.
func TestShardSelectorWatchSameObjects(t *testing.T) {
	ctx := ctxFor(t)
	for _, s := range []side{realSide(t), apitestSide(t)} {
		t.Run(s.name, func(t *testing.T) {
			sel := sharding.NewSelector(sharding.FieldUID, sharding.Range{Start: 1 << 62, End: 3 << 62})
			ns := "watch-" + map[string]string{"kube-apiserver": "real", "apitest": "fake"}[s.name]
			nsObj := &configMap{ObjectMeta: meta.ObjectMeta{Name: ns}}
			nsObj.APIVersion, nsObj.Kind = "v1", "Namespace"
			if _, err := apiclient.NewResource[*configMap](s.c, namespacesGVR).Create(ctx, nsObj, apiclient.CreateOptions{}); err != nil {
				t.Fatal(err)
			}
			cms := s.cms.Namespace(ns)
			l, err := cms.List(ctx, apiclient.ListOptions{})
			if err != nil {
				t.Fatal(err)
			}
			w, err := cms.Watch(ctx, apiclient.ListOptions{ShardSelector: sel.String(), ResourceVersion: l.ResourceVersion, AllowWatchBookmarks: true})
			if err != nil {
				t.Fatal(err)
			}
			defer w.Stop()
			var want []string
			for i := 0; len(want) < 5; i++ {
				cm := &configMap{ObjectMeta: meta.ObjectMeta{Name: fmt.Sprintf("w-%03d", i)}}
				cm.APIVersion, cm.Kind = "v1", "ConfigMap"
				out, err := cms.Create(ctx, cm, apiclient.CreateOptions{})
				if err != nil {
					t.Fatal(err)
				}
				if sel.Matches(out.UID) {
					want = append(want, out.Name)
				}
			}
			var got []string
			for len(got) < len(want) {
				select {
				case ev, ok := <-w.ResultChan():
					if !ok {
						t.Fatalf("watch closed after %v", got)
					}
					if ev.Type == apiclient.Bookmark {
						continue
					}
					if ev.Type != apiclient.Added {
						t.Fatalf("%s event %+v", ev.Type, ev)
					}
					got = append(got, ev.Object.Name)
				case <-time.After(time.Minute):
					t.Fatalf("after %v: no event within a minute", got)
				}
			}
			if !slices.Equal(want, got) {
				t.Errorf("created in range %v, delivered %v", want, got)
			}
		})
	}
}

// TestShardSelectorErrorsSame: both servers refuse the same bad selectors with the same
// status code and, where the message does not come from the CEL parser, the same message.
func TestShardSelectorErrorsSame(t *testing.T) {
	ctx := ctxFor(t)
	real, fake := realSide(t), apitestSide(t)
	const z, h = "'0x0000000000000000'", "'0x8000000000000000'"
	for _, tc := range []struct {
		sel         string
		sameMessage bool
	}{
		{"shardRange(object.metadata.uid, '0x0', " + h + ")", true},
		{"shardRange(object.metadata.name, " + z + ", " + h + ")", true},
		{"shardRange(object.metadata.uid, " + h + ", " + z + ")", true},
		{"shardRange(object.metadata.uid, '0x000000000000000G', " + h + ")", true},
		{"shardRange(object.metadata.uid, '0x20000000000000000', " + h + ")", true},
		{"shardRange(object.metadata.uid, 'ff', " + h + ")", true},
		{"shardRange(object.metadata.uid, " + z + ", " + h + ") || shardRange(object.metadata.namespace, " + z + ", " + h + ")", true},
		{"shardRange(object.metadata.uid, " + z + ")", true},
		{"shardRange(object.metadata.uid, " + z + ", " + h + ", " + h + ")", true},
		{"labels(object.metadata.uid, " + z + ", " + h + ")", true},
		{"shardRange(object.metadata.uid, " + z + ", " + h + ") && true", true},
		{"shardRange(object.metadata.uid, " + z + ", " + h, false},
	} {
		var st [2]*meta.Status
		for i, s := range []side{real, fake} {
			_, err := s.cms.List(ctx, apiclient.ListOptions{ShardSelector: tc.sel})
			var ok bool
			if st[i], ok = meta.AsStatus(err); !ok {
				t.Fatalf("%s: %q: got %v, want a Status", s.name, tc.sel, err)
			}
		}
		if st[0].Code != st[1].Code || st[0].Reason != st[1].Reason {
			t.Errorf("%q: kube-apiserver %d %q, apitest %d %q", tc.sel, st[0].Code, st[0].Reason, st[1].Code, st[1].Reason)
		}
		if tc.sameMessage && st[0].Message != st[1].Message {
			t.Errorf("%q:\nkube-apiserver: %s\napitest:        %s", tc.sel, st[0].Message, st[1].Message)
		}
		t.Logf("%q: %d %s", tc.sel, st[0].Code, st[0].Message)
	}
}
