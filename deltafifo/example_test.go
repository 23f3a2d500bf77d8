package deltafifo_test

import (
	"context"
	"errors"
	"fmt"

	"github.com/informerkit/informerkit/deltafifo"
	"github.com/informerkit/informerkit/indexer"
)

type Pod struct{ Namespace, Name, Phase string }

func (p *Pod) GetNamespace() string { return p.Namespace }
func (p *Pod) GetName() string      { return p.Name }

var podKey = indexer.MetaNamespaceKeyFunc[*Pod]

func Example() {
	// The consumer's cache is also the FIFO's KnownObjects.
	cache := indexer.New(podKey, nil)
	fifo := deltafifo.New(podKey, deltafifo.Options[*Pod]{KnownObjects: cache})

	// A reflector would do this: the initial list, then watch events.
	_ = fifo.Replace([]*Pod{{Namespace: "default", Name: "web", Phase: "Pending"}}, "100")
	_ = fifo.Update(&Pod{Namespace: "default", Name: "web", Phase: "Running"})
	_ = fifo.Add(&Pod{Namespace: "default", Name: "db", Phase: "Pending"})

	// The informer's loop: apply every delta to the cache, then notify handlers.
	ctx := context.Background()
	for fifo.Len() > 0 {
		_ = fifo.Pop(ctx, func(deltas deltafifo.Deltas[*Pod], isInInitialList bool) error {
			for _, d := range deltas {
				switch d.Type {
				case deltafifo.Deleted:
					_ = cache.Delete(d.Object)
				default:
					_ = cache.Update(d.Object)
				}
				fmt.Printf("%s %s/%s %s (initial list: %v)\n", d.Type, d.Object.Namespace, d.Object.Name, d.Object.Phase, isInInitialList)
			}
			return nil
		})
	}
	fmt.Println("synced:", fifo.HasSynced())
	// Output:
	// Replaced default/web Pending (initial list: true)
	// Updated default/web Running (initial list: true)
	// Added default/db Pending (initial list: false)
	// synced: true
}

func ExampleRequeue() {
	fifo := deltafifo.New(podKey, deltafifo.Options[*Pod]{})
	_ = fifo.Add(&Pod{Namespace: "a", Name: "x"})

	errBusy := errors.New("cache busy")
	err := fifo.Pop(context.Background(), func(deltafifo.Deltas[*Pod], bool) error {
		return deltafifo.Requeue(errBusy) // keep the deltas
	})
	var rq *deltafifo.RequeueError
	fmt.Println(errors.As(err, &rq), errors.Is(err, errBusy), fifo.Len())
	// Output: true true 1
}

// The consumer applies a ReplacedAll delta to its own store (package informer does it to its
// cache): here with the indexer's ReplaceAndDiff, which replaces the content and reports
// every change in one step.
func ExampleAtomicFIFO_Replace() {
	cache := indexer.New(podKey, nil)
	_ = cache.Add(&Pod{Namespace: "a", Name: "old", Phase: "Running"})
	_ = cache.Add(&Pod{Namespace: "a", Name: "kept", Phase: "Pending"})

	// In an AtomicFIFO a relist is one ReplacedAll delta, which the consumer diffs against
	// its own store.
	fifo := deltafifo.NewAtomicFIFO(podKey, deltafifo.AtomicFIFOOptions[*Pod]{})
	_ = fifo.Replace([]*Pod{{Namespace: "a", Name: "kept", Phase: "Running"}, {Namespace: "a", Name: "new"}}, "7")

	_ = fifo.Pop(context.Background(), func(deltas deltafifo.Deltas[*Pod], isInInitialList bool) error {
		d := deltas[0]
		if d.Type != deltafifo.ReplacedAll {
			return nil
		}
		return cache.ReplaceAndDiff(d.All.Objects, d.All.ResourceVersion, func(c indexer.Change[*Pod]) {
			switch {
			case c.Deleted:
				fmt.Println("OnDelete", c.Key, "final state unknown: true")
			case c.Existed:
				fmt.Println("OnUpdate", c.Key, c.Old.Phase, "->", c.New.Phase)
			default:
				fmt.Println("OnAdd", c.Key)
			}
		})
	})
	fmt.Println(cache.Len(), cache.LastSyncResourceVersion())
	// Output:
	// OnDelete a/old final state unknown: true
	// OnUpdate a/kept Pending -> Running
	// OnAdd a/new
	// 2 7
}

func ExampleAtomicFIFO_BeginReplace() {
	cache := indexer.New(podKey, nil)
	_ = cache.Add(&Pod{Namespace: "a", Name: "old", Phase: "Running"})
	_ = cache.Add(&Pod{Namespace: "a", Name: "kept", Phase: "Pending"})

	// A relist handed over object by object (as a reflector decodes it): in an AtomicFIFO the
	// objects travel in ReplacedChunk deltas, and a ReplacedEnd delta with the set of listed
	// keys ends the list. The FIFO never holds the whole list.
	fifo := deltafifo.NewAtomicFIFO(podKey, deltafifo.AtomicFIFOOptions[*Pod]{ChunkSize: 2})
	repl, _ := fifo.BeginReplace()
	_ = repl.Add(&Pod{Namespace: "a", Name: "kept", Phase: "Running"})
	_ = repl.Add(&Pod{Namespace: "a", Name: "new"})
	_ = repl.Add(&Pod{Namespace: "a", Name: "newer"})
	_ = repl.Finish("8")

	upsert := func(key string, obj *Pod) error {
		old, existed, err := cache.Upsert(obj)
		if err == nil && existed {
			fmt.Println("  OnUpdate", key, old.Phase, "->", obj.Phase)
		} else if err == nil {
			fmt.Println("  OnAdd", key)
		}
		return err
	}
	for fifo.Len() > 0 {
		_ = fifo.Pop(context.Background(), func(deltas deltafifo.Deltas[*Pod], isInInitialList bool) error {
			d := deltas[0]
			fmt.Println(d.Type)
			switch d.Type {
			case deltafifo.ReplacedChunk: // store each object; nothing is deleted yet
				for i, obj := range d.Chunk.Objects {
					if err := upsert(d.Chunk.Keys[i], obj); err != nil {
						return err
					}
				}
			case deltafifo.ReplacedEnd: // delete what the list did not have
				for _, key := range cache.ListKeys() {
					if _, listed := d.End.Keys[key]; !listed {
						cache.DeleteByKey(key)
						fmt.Println("  OnDelete", key, "final state unknown: true")
					}
				}
			}
			return nil
		})
	}
	fmt.Println(cache.Len(), "objects")
	// Output:
	// ReplacedChunk
	//   OnUpdate a/kept Pending -> Running
	//   OnAdd a/new
	// ReplacedChunk
	//   OnAdd a/newer
	// ReplacedEnd
	//   OnDelete a/old final state unknown: true
	// 3 objects
}

func ExampleRealFIFO_PopBatch() {
	fifo := deltafifo.NewRealFIFO(podKey, deltafifo.RealFIFOOptions[*Pod]{})
	for _, name := range []string{"a", "b", "a", "c"} {
		_ = fifo.Update(&Pod{Namespace: "ns", Name: name})
	}
	ctx := context.Background()
	for fifo.Len() > 0 {
		_ = fifo.PopBatch(ctx, 100, func(batch []deltafifo.Deltas[*Pod], _ bool) error {
			var names []string
			for _, deltas := range batch {
				names = append(names, deltas[0].Object.Name)
			}
			fmt.Println(names) // a batch never holds a key twice
			return nil
		})
	}
	// Output:
	// [a b]
	// [a c]
}
