package expectations_test

import (
	"slices"
	"sort"
	"testing"

	"github.com/informerkit/informerkit/controller/expectations"
)

// model is the reference for UIDTracking: per key, whether expectations exist, the
// creations still expected, and the uids whose deletion is still expected.
type model struct {
	exists bool
	add    int64
	uids   map[string]bool
}

// FuzzUIDTracking runs random operation sequences against UIDTracking (without a TTL) and a
// simple model, and compares every key's state after each operation.
func FuzzUIDTracking(f *testing.F) {
	f.Add([]byte{0, 0, 2, 2, 0, 2, 0, 1, 0, 3, 3, 0, 1, 4, 0, 1, 5, 0})
	f.Add([]byte{1, 1, 7, 3, 1, 0, 3, 1, 0, 3, 1, 1, 3, 1, 2, 2, 1, 0})
	f.Add([]byte{0, 2, 5, 4, 2, 9, 2, 2, 0, 5, 2, 0, 1, 2, 3, 3, 2, 1})
	f.Fuzz(func(t *testing.T, ops []byte) {
		u := expectations.NewUIDTracking[int](expectations.Options{TTL: -1})
		m := map[int]*model{}
		get := func(k int) *model {
			if m[k] == nil {
				m[k] = &model{}
			}
			return m[k]
		}
		uid := func(b byte) string { return string(rune('a' + b%4)) }
		for len(ops) >= 3 {
			op, key, arg := ops[0]%6, int(ops[1]%3), ops[2]
			ops = ops[3:]
			k := get(key)
			switch op {
			case 0: // ExpectCreations
				n := int(arg % 4)
				u.ExpectCreations(key, n)
				*k = model{exists: true, add: int64(n), uids: map[string]bool{}}
			case 1: // ExpectDeletions of up to 4 uids chosen by arg's bits
				var uids []string
				set := map[string]bool{}
				for i := range 4 {
					if arg&(1<<i) != 0 {
						uids = append(uids, uid(byte(i)), uid(byte(i))) // repeats count once
						set[uid(byte(i))] = true
					}
				}
				u.ExpectDeletions(key, uids)
				*k = model{exists: true, uids: set}
			case 2: // CreationObserved
				u.CreationObserved(key)
				if k.exists {
					k.add--
				}
			case 3: // DeletionObserved
				u.DeletionObserved(key, uid(arg))
				if k.exists {
					delete(k.uids, uid(arg))
				}
			case 4: // LowerExpectations
				u.LowerExpectations(key, int(arg%3))
				if k.exists {
					k.add -= int64(arg % 3)
				}
			case 5: // DeleteExpectations
				u.DeleteExpectations(key)
				*k = model{}
			}
			for key, k := range m {
				p, ok := u.Get(key)
				if ok != k.exists {
					t.Fatalf("key %d: exists %v, model %v", key, ok, k.exists)
				}
				want := !k.exists || (k.add <= 0 && len(k.uids) == 0)
				if got := u.SatisfiedExpectations(key); got != want {
					t.Fatalf("key %d: satisfied %v, model %v (%+v, model %+v)", key, got, want, p, *k)
				}
				if !k.exists {
					continue
				}
				var uids []string
				for id := range k.uids {
					uids = append(uids, id)
				}
				sort.Strings(uids)
				pending := u.PendingDeletions(key)
				sort.Strings(pending)
				if p.Add != k.add || p.Del != int64(len(k.uids)) || !slices.Equal(pending, uids) {
					t.Fatalf("key %d: %+v pending %v, model add=%d uids=%v", key, p, pending, k.add, uids)
				}
			}
		}
	})
}
