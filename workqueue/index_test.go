package workqueue

import (
	"math/rand/v2"
	"testing"
)

// checkIndex verifies that every entry in use is found by lookup and that every slot is
// reachable from its home without crossing an empty slot (the linear-probing invariant that
// backward-shift deletion must keep).
func checkIndex[T comparable](t *testing.T, q *queue[T], want map[T]uint32) {
	t.Helper()
	if q.used != len(want) {
		t.Fatalf("index holds %d items, want %d", q.used, len(want))
	}
	for item, idx := range want {
		got, _, ok := q.lookup(item)
		if !ok || got != idx {
			t.Fatalf("lookup(%v) = %d, %v; want %d", item, got, ok, idx)
		}
	}
	mask := uint32(len(q.slots) - 1)
	for i, s := range q.slots {
		if s == 0 {
			continue
		}
		for j := uint32(s>>32) & mask; j != uint32(i); j = (j + 1) & mask {
			if q.slots[j] == 0 {
				t.Fatalf("slot %d is cut off from its home by empty slot %d", i, j)
			}
		}
	}
}

func TestIndexMatchesMapUnderChurn(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for _, items := range []int{3, 20, 100, 3000} {
		q := newQueue[int](Config{}, nil)
		want := map[int]uint32{}
		for step := range 20 * items {
			item := r.IntN(items)
			if idx, ok := want[item]; ok {
				if _, _, found := q.lookup(item); !found {
					t.Fatalf("step %d: %d not found", step, item)
				}
				q.release(idx, q.hash(item))
				delete(want, item)
			} else {
				if _, _, found := q.lookup(item); found {
					t.Fatalf("step %d: %d found before it was added", step, item)
				}
				_, h, _ := q.lookup(item)
				want[item] = q.alloc(item, h)
			}
			if step%97 == 0 || items < 50 {
				checkIndex(t, q, want)
			}
		}
		checkIndex(t, q, want)
	}
}

func TestIndexWithStructAndInterfaceItems(t *testing.T) {
	type key struct {
		ns, name string
		gen      int
	}
	q := New[key](Config{})
	defer q.ShutDown()
	q.Add(key{"a", "b", 1})
	q.Add(key{"a", "b", 1})
	q.Add(key{"a", "b", 2})
	wantLen(t, q, 2)

	qa := New[any](Config{})
	defer qa.ShutDown()
	qa.Add(1)
	qa.Add("1")
	qa.Add(1)
	qa.Add(int64(1)) // a different dynamic type: a different item
	wantLen(t, qa, 3)
	item, _ := qa.Get()
	qa.Done(item)
	wantLen(t, qa, 2)
}
