package apitest_test

import (
	"fmt"
	"sort"
	"testing"

	"github.com/informerkit/informerkit/apiclient"
	"github.com/informerkit/informerkit/apitest"
	"github.com/informerkit/informerkit/meta"
	"github.com/informerkit/informerkit/sharding"
)

// quarters splits the hash space in four, as a ring of four replicas would.
func quarters(f sharding.Field) []sharding.Selector {
	var out []sharding.Selector
	for i := range uint64(4) {
		r := sharding.Range{Start: i << 62, End: (i + 1) << 62} // the last End wraps to 0: 2^64
		out = append(out, sharding.NewSelector(f, r))
	}
	return out
}

func seedShardObjects(t *testing.T, e *env, n int) map[string]string {
	t.Helper()
	uids := map[string]string{}
	for i := range n {
		o, err := e.s.Create("configmaps", cm(fmt.Sprintf("cm-%03d", i), nil, nil))
		if err != nil {
			t.Fatal(err)
		}
		uids[o.Name()] = o.UID()
	}
	return uids
}

func TestShardSelectorListPartitionsByUID(t *testing.T) {
	for _, release := range []string{"v1.36.3", "v1.37.2"} {
		t.Run(release, func(t *testing.T) { testShardSelectorListPartitionsByUID(t, release) })
	}
}

func testShardSelectorListPartitionsByUID(t *testing.T, release string) {
	e := newEnvWithOptions(t, apitest.Options{KubernetesVersion: release})
	uids := seedShardObjects(t, e, 200)
	seen := map[string]int{}
	for _, sel := range quarters(sharding.FieldUID) {
		var names []string
		opts := apiclient.ListOptions{ShardSelector: sel.String(), Limit: 7}
		for {
			l, err := e.cms.List(e.ctx, opts)
			if err != nil {
				t.Fatal(err)
			}
			if l.ShardInfo == nil || l.ShardInfo.Selector != sel.String() {
				t.Fatalf("shardInfo = %+v, want the selector %q", l.ShardInfo, sel)
			}
			// As kube-apiserver 1.37: a shard selector filters, so no count of the
			// remaining items; 1.36 counted the whole collection's.
			switch {
			case release >= "v1.37" && l.RemainingItemCount != nil:
				t.Errorf("a sharded page carries remainingItemCount %d", *l.RemainingItemCount)
			case release < "v1.37" && l.Continue != "" && (l.RemainingItemCount == nil || *l.RemainingItemCount <= 0):
				t.Errorf("a sharded page with more to come carries remainingItemCount %v", l.RemainingItemCount)
			}
			for _, o := range l.Items {
				if !sel.Matches(o.UID) {
					t.Errorf("%s (uid %s, hash %#x) listed for %s", o.Name, o.UID, sharding.Hash(o.UID), sel.Ranges[0])
				}
				seen[o.Name]++
				names = append(names, o.Name)
			}
			if l.Continue == "" {
				break
			}
			opts.Continue = l.Continue
		}
		if !sort.StringsAreSorted(names) {
			t.Errorf("pages of %s out of order", sel)
		}
	}
	for name := range uids {
		if seen[name] != 1 {
			t.Errorf("%s listed %d times over the four quarters, want once", name, seen[name])
		}
	}
	// 200 uids over 4 quarters: each gets some (a quarter empty has odds 4*(3/4)^200).
	if len(seen) != len(uids) {
		t.Errorf("%d of %d objects listed", len(seen), len(uids))
	}
}

func TestShardSelectorByNamespace(t *testing.T) {
	e := newEnv(t)
	nss := []string{"default", "kube-system", "kube-public"}
	for i, ns := range nss {
		for j := range 3 {
			c := cm(fmt.Sprintf("cm-%d-%d", i, j), nil, nil)
			c.Namespace = ns
			if _, err := e.s.Create("configmaps", c); err != nil {
				t.Fatal(err)
			}
		}
	}
	all := e.cms.Namespace("")
	for _, sel := range quarters(sharding.FieldNamespace) {
		l, err := all.List(e.ctx, apiclient.ListOptions{ShardSelector: sel.String()})
		if err != nil {
			t.Fatal(err)
		}
		want := 0
		for _, ns := range nss {
			if sel.Matches(ns) {
				want += 3
			}
		}
		if len(l.Items) != want {
			t.Errorf("%s: %d items, want %d", sel, len(l.Items), want)
		}
		for _, o := range l.Items {
			if !sel.Matches(o.Namespace) {
				t.Errorf("%s/%s listed for %s", o.Namespace, o.Name, sel)
			}
		}
	}
}

func TestShardSelectorWatch(t *testing.T) {
	e := newEnv(t)
	lower := sharding.NewSelector(sharding.FieldUID, sharding.Range{End: 1 << 63})
	l, err := e.cms.List(e.ctx, apiclient.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	w, err := e.cms.Watch(e.ctx, apiclient.ListOptions{ShardSelector: lower.String(), ResourceVersion: l.ResourceVersion})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	// Create until one object of each half exists; the watch must deliver only the lower's.
	var in, out []string
	for i := 0; len(in) < 3 || len(out) < 3; i++ {
		o, err := e.s.Create("configmaps", cm(fmt.Sprintf("w-%03d", i), nil, nil))
		if err != nil {
			t.Fatal(err)
		}
		if lower.Matches(o.UID()) {
			in = append(in, o.Name())
		} else {
			out = append(out, o.Name())
		}
	}
	for _, name := range out {
		if err := e.s.Delete("configmaps", "default", name); err != nil {
			t.Fatal(err)
		}
	}
	for _, name := range in {
		if err := e.s.Delete("configmaps", "default", name); err != nil {
			t.Fatal(err)
		}
	}
	// The stream is ordered: the lower half's ADDED events, then their DELETED ones, and
	// nothing of the upper half in between.
	for _, typ := range []apiclient.EventType{apiclient.Added, apiclient.Deleted} {
		for _, name := range in {
			ev := next(t, w)
			if ev.Type != typ || ev.Object.Name != name {
				t.Fatalf("got %s %s, want %s %s", ev.Type, ev.Object.Name, typ, name)
			}
		}
	}
}

func TestShardSelectorInvalid(t *testing.T) {
	e := newEnv(t)
	for _, sel := range []string{
		"shardRange(object.metadata.uid, '0x0', '0x8000000000000000')",
		"shardRange(object.metadata.name, '0x0000000000000000', '0x8000000000000000')",
	} {
		_, err := e.cms.List(e.ctx, apiclient.ListOptions{ShardSelector: sel})
		// The kube-apiserver's body has no reason; apiclient classifies a 500 as InternalError.
		st := mustStatus(t, err, 500, meta.StatusReasonInternalError)
		if want := "invalid shard selector: "; len(st.Message) < len(want) || st.Message[:len(want)] != want {
			t.Errorf("message %q", st.Message)
		}
		_, err = e.cms.Watch(e.ctx, apiclient.ListOptions{ShardSelector: sel})
		mustStatus(t, err, 500, meta.StatusReasonInternalError)
	}
}

func TestShardSelectorIgnoredWithoutGate(t *testing.T) {
	e := newEnvWithOptions(t, apitest.Options{NoShardSelector: true})
	seedShardObjects(t, e, 20)
	for _, sel := range []string{
		sharding.NewSelector(sharding.FieldUID, sharding.Range{Start: 0, End: 1}).String(),
		"not a selector", // ignored too: the server never parses it
	} {
		l, err := e.cms.List(e.ctx, apiclient.ListOptions{ShardSelector: sel})
		if err != nil {
			t.Fatal(err)
		}
		if len(l.Items) != 20 || l.ShardInfo != nil {
			t.Errorf("%q without the gate: %d items, shardInfo %+v; want 20 and none", sel, len(l.Items), l.ShardInfo)
		}
	}
}

// TestShardSelectorDeleteCollection: a deletecollection with a shard selector deletes only
// the objects in range (the kube-apiserver's DeleteCollection lists with the selector).
func TestShardSelectorDeleteCollection(t *testing.T) {
	e := newEnv(t)
	uids := seedShardObjects(t, e, 40)
	lower := sharding.NewSelector(sharding.FieldUID, sharding.Range{End: 1 << 63})
	if err := e.cms.DeleteCollection(e.ctx, apiclient.DeleteOptions{}, apiclient.ListOptions{ShardSelector: lower.String()}); err != nil {
		t.Fatal(err)
	}
	l, err := e.cms.List(e.ctx, apiclient.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	left := map[string]bool{}
	for _, o := range l.Items {
		left[o.Name] = true
	}
	for name, uid := range uids {
		if left[name] == lower.Matches(uid) {
			t.Errorf("%s (in range: %v) left: %v", name, lower.Matches(uid), left[name])
		}
	}
}
