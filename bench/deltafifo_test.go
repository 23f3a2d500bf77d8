package bench

// DeltaFIFO comparison: informerkit's three deltafifo layouts for *corev1.ConfigMap and
// client-go's DeltaFIFO and RealFIFO, on the same ConfigMaps, through the same small interface.
//
// The fifo= element names the client-go queue and its options; the informerkit side is the
// matching layout:
//
//	fifo=DeltaFIFO                  FIFO                            NewDeltaFIFOWithOptions (EmitDeltaTypeReplaced)
//	fifo=RealFIFO                   RealFIFO                        NewRealFIFOWithOptions (KnownObjects)
//	fifo=RealFIFO-batch             RealFIFO, PopBatch(1000)        RealFIFO.PopBatch (batch size 1000)
//	fifo=RealFIFO-atomic            AtomicFIFO                      RealFIFO AtomicEvents
//	fifo=RealFIFO-atomic-batch      AtomicFIFO, PopBatch(1000)      RealFIFO AtomicEvents, PopBatch
//	fifo=RealFIFO-atomic-unlocked   AtomicFIFO, Unlock…Processing   RealFIFO AtomicEvents + UnlockWhileProcessing
//
// consumer=none pops and does nothing; consumer=store applies every delta to an indexer with
// two indexes (namespace, "app") the way an informer does — client-go: Get then Add or Update,
// or Delete (processDeltas); informerkit: Upsert or DeleteByKey — and that indexer is the FIFO's
// KnownObjects (except in the atomic modes, where a ReplacedAll delta is applied by diffing
// against it: client-go's processReplacedAllInfo and informerkit's informer, with the indexer's
// ReplaceAndDiff).

import (
	"context"
	"fmt"
	"sync"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/tools/cache"

	"github.com/informerkit/informerkit/deltafifo"
	"github.com/informerkit/informerkit/indexer"
)

const (
	fifoBacklog   = 1000 // deltas queued before the consumer drains them
	fifoBatchSize = 1000
)

var fifoVariants = []string{"DeltaFIFO", "RealFIFO", "RealFIFO-batch", "RealFIFO-atomic", "RealFIFO-atomic-batch", "RealFIFO-atomic-unlocked"}

// benchFIFO is one FIFO plus its consumer.
type benchFIFO interface {
	Add(*corev1.ConfigMap) error
	// Replace takes the typed list; the client-go side uses the []interface{} prepared for it.
	Replace(list []*corev1.ConfigMap, rv string) error
	// Drain pops until n deltas (a ReplacedAll counts as one) have been processed, and
	// returns how many objects the consumer saw.
	Drain(n int) int
	// Reset replaces the FIFO by a new, empty one of the same variant, keeping the
	// consumer's store.
	Reset()
	Close()
}

type fifoImpl struct {
	name string
	// new returns a FIFO of the given variant whose consumer applies to store (nil: none).
	// known holds the objects the consumer starts with.
	new func(variant string, apply bool, known []*corev1.ConfigMap) benchFIFO
}

var fifoImpls = []fifoImpl{
	{"informerkit", func(v string, apply bool, known []*corev1.ConfigMap) benchFIFO { return newOurFIFO(v, apply, known) }},
	{"client-go", func(v string, apply bool, known []*corev1.ConfigMap) benchFIFO { return newTheirFIFO(v, apply, known) }},
}

// ---- informerkit

type ourFIFO struct {
	variant    string
	f          deltafifo.Queue[*corev1.ConfigMap]
	store      indexer.Indexer[*corev1.ConfigMap]
	apply      bool
	batch      bool
	seen, done int
	// The process functions, as method values made once (both sides do the same).
	popOne   func(deltafifo.Deltas[*corev1.ConfigMap], bool) error
	popBatch func([]deltafifo.Deltas[*corev1.ConfigMap], bool) error
}

var ourKey = indexer.MetaNamespaceKeyFunc[*corev1.ConfigMap]

func newOurFIFO(variant string, apply bool, known []*corev1.ConfigMap) *ourFIFO {
	o := &ourFIFO{store: newOurIndexer().ix, apply: apply, variant: variant}
	if len(known) > 0 {
		_ = o.store.Replace(known, "0")
	}
	o.Reset()
	o.popOne, o.popBatch = o.processOne, o.processBatch
	return o
}

// Reset replaces the FIFO by a new, empty one; the consumer's store is kept.
func (o *ourFIFO) Reset() {
	switch o.variant {
	case "DeltaFIFO":
		o.f = deltafifo.New(ourKey, deltafifo.Options[*corev1.ConfigMap]{KnownObjects: o.store})
	case "RealFIFO", "RealFIFO-batch":
		o.f = deltafifo.NewRealFIFO(ourKey, deltafifo.RealFIFOOptions[*corev1.ConfigMap]{KnownObjects: o.store})
		o.batch = o.variant == "RealFIFO-batch"
	case "RealFIFO-atomic", "RealFIFO-atomic-batch", "RealFIFO-atomic-unlocked":
		o.f = deltafifo.NewAtomicFIFO(ourKey, deltafifo.AtomicFIFOOptions[*corev1.ConfigMap]{UnlockWhileProcessing: o.variant == "RealFIFO-atomic-unlocked"})
		o.batch = o.variant == "RealFIFO-atomic-batch"
	default:
		panic(o.variant)
	}
}

func (o *ourFIFO) Add(cm *corev1.ConfigMap) error { return o.f.Add(cm) }
func (o *ourFIFO) Replace(list []*corev1.ConfigMap, rv string) error {
	return o.f.Replace(list, rv)
}
func (o *ourFIFO) Close() { o.f.Close() }

func (o *ourFIFO) consume(ds deltafifo.Deltas[*corev1.ConfigMap]) error {
	for i := range ds {
		d := &ds[i]
		switch {
		case d.Type == deltafifo.ReplacedAll:
			o.seen += len(d.All.Objects)
			if o.apply {
				if err := o.store.ReplaceAndDiff(d.All.Objects, d.All.ResourceVersion, func(indexer.Change[*corev1.ConfigMap]) {}); err != nil {
					return err
				}
			}
		case !o.apply:
			o.seen++
		case d.Type == deltafifo.Deleted:
			o.seen++
			k, err := ourKey(d.Object)
			if err != nil {
				return err
			}
			o.store.DeleteByKey(k)
		default:
			o.seen++
			if _, _, err := o.store.Upsert(d.Object); err != nil {
				return err
			}
		}
	}
	return nil
}

func (o *ourFIFO) processOne(ds deltafifo.Deltas[*corev1.ConfigMap], _ bool) error {
	o.done += len(ds)
	return o.consume(ds)
}

func (o *ourFIFO) processBatch(batch []deltafifo.Deltas[*corev1.ConfigMap], _ bool) error {
	for _, ds := range batch {
		o.done += len(ds)
		if err := o.consume(ds); err != nil {
			return err
		}
	}
	return nil
}

func (o *ourFIFO) Drain(n int) int {
	o.seen, o.done = 0, 0
	ctx := context.Background()
	for o.done < n {
		var err error
		if o.batch {
			err = o.f.PopBatch(ctx, fifoBatchSize, o.popBatch)
		} else {
			err = o.f.Pop(ctx, o.popOne)
		}
		if err != nil {
			panic(err)
		}
	}
	return o.seen
}

// ---- client-go

type theirFIFO struct {
	variant    string
	q          cache.Queue
	real       *cache.RealFIFO
	store      cache.Indexer
	apply      bool
	batch      bool
	seen, done int
	prepared   map[*corev1.ConfigMap][]interface{}
	popOne     cache.PopProcessFunc
	popBatch   cache.ProcessBatchFunc
}

func newTheirFIFO(variant string, apply bool, known []*corev1.ConfigMap) *theirFIFO {
	t := &theirFIFO{store: newTheirIndexer().ix, apply: apply, variant: variant, prepared: map[*corev1.ConfigMap][]interface{}{}}
	if len(known) > 0 {
		_ = t.store.Replace(t.prepare(known), "0")
	}
	t.Reset()
	t.popOne, t.popBatch = t.processOne, t.processBatch
	return t
}

// Reset replaces the FIFO by a new, empty one; the consumer's store is kept.
func (t *theirFIFO) Reset() {
	variant := t.variant
	switch variant {
	case "DeltaFIFO":
		t.q = cache.NewDeltaFIFOWithOptions(cache.DeltaFIFOOptions{
			KeyFunction: cache.MetaNamespaceKeyFunc, KnownObjects: t.store, EmitDeltaTypeReplaced: true,
		})
	case "RealFIFO", "RealFIFO-batch":
		t.real = cache.NewRealFIFOWithOptions(cache.RealFIFOOptions{KeyFunction: cache.MetaNamespaceKeyFunc, KnownObjects: t.store})
		t.q, t.batch = t.real, variant == "RealFIFO-batch"
	case "RealFIFO-atomic", "RealFIFO-atomic-batch", "RealFIFO-atomic-unlocked":
		t.real = cache.NewRealFIFOWithOptions(cache.RealFIFOOptions{
			KeyFunction: cache.MetaNamespaceKeyFunc, AtomicEvents: true,
			UnlockWhileProcessing: variant == "RealFIFO-atomic-unlocked",
		})
		t.q, t.batch = t.real, variant == "RealFIFO-atomic-batch"
	default:
		panic(variant)
	}
}

func (t *theirFIFO) prepare(list []*corev1.ConfigMap) []interface{} {
	if len(list) == 0 {
		return nil
	}
	if p, ok := t.prepared[list[0]]; ok && len(p) == len(list) {
		return p
	}
	p := make([]interface{}, len(list))
	for i, cm := range list {
		p[i] = cm
	}
	t.prepared[list[0]] = p
	return p
}

func (t *theirFIFO) Add(cm *corev1.ConfigMap) error { return t.q.Add(cm) }
func (t *theirFIFO) Replace(list []*corev1.ConfigMap, rv string) error {
	return t.q.Replace(t.prepare(list), rv)
}
func (t *theirFIFO) Close() { t.q.Close() }

// consume is client-go's processDeltas for the delta types these workloads produce, and its
// processReplacedAllInfo (the same store operations) for ReplacedAll.
func (t *theirFIFO) consume(deltas cache.Deltas) error {
	for _, d := range deltas {
		switch {
		case d.Type == cache.ReplacedAll:
			info := d.Object.(cache.ReplacedAllInfo)
			t.seen += len(info.Objects)
			if t.apply {
				if err := theirApplyReplacedAll(t.store, info); err != nil {
					return err
				}
			}
		case !t.apply:
			t.seen++
		case d.Type == cache.Deleted:
			t.seen++
			if err := t.store.Delete(d.Object); err != nil {
				return err
			}
		default:
			t.seen++
			if _, exists, err := t.store.Get(d.Object); err == nil && exists {
				if err := t.store.Update(d.Object); err != nil {
					return err
				}
			} else if err := t.store.Add(d.Object); err != nil {
				return err
			}
		}
	}
	return nil
}

// theirApplyReplacedAll does what client-go's unexported processReplacedAllInfo does to the
// store: key every listed object, look up each one's old state, list the store's keys to find
// the deletions (looking each up), then Replace.
func theirApplyReplacedAll(store cache.Indexer, info cache.ReplacedAllInfo) error {
	listed := make(map[string]struct{}, len(info.Objects))
	for _, obj := range info.Objects {
		k, err := cache.MetaNamespaceKeyFunc(obj)
		if err != nil {
			return err
		}
		listed[k] = struct{}{}
	}
	var deleted []interface{}
	for _, k := range store.ListKeys() {
		if _, ok := listed[k]; !ok {
			obj, _, _ := store.GetByKey(k)
			deleted = append(deleted, cache.DeletedFinalStateUnknown{Key: k, Obj: obj})
		}
	}
	type replacement struct{ old, new interface{} }
	replacements := make([]replacement, 0, len(info.Objects))
	for _, obj := range info.Objects {
		old, _, _ := store.Get(obj)
		replacements = append(replacements, replacement{old, obj})
	}
	_ = deleted
	return store.Replace(info.Objects, info.ResourceVersion)
}

func (t *theirFIFO) processOne(obj interface{}, _ bool) error {
	ds := obj.(cache.Deltas)
	t.done += len(ds)
	return t.consume(ds)
}

func (t *theirFIFO) processBatch(deltas []cache.Delta, _ bool) error {
	for _, d := range deltas {
		t.done++
		if err := t.consume(cache.Deltas{d}); err != nil {
			return err
		}
	}
	return nil
}

func (t *theirFIFO) Drain(n int) int {
	t.seen, t.done = 0, 0
	for t.done < n {
		var err error
		if t.batch {
			err = t.real.PopBatch(t.popBatch, t.popOne)
		} else {
			_, err = t.q.Pop(t.popOne)
		}
		if err != nil {
			panic(err)
		}
	}
	return t.seen
}

// BenchmarkDeltaFIFO measures, per FIFO variant (see the file comment):
//   - op=AddPop: throughput of Add followed by Pop, one op = one Add and one delta popped, with
//     a backlog of fifoBacklog (the consumer drains every fifoBacklog adds) over a pool of
//     indexerN distinct objects, so no two queued deltas share a key.
//   - op=AddPopConcurrent: a producer goroutine adds while the consumer pops, the way a
//     reflector and an informer run; one op = one delta through.
//   - op=Replace: one Replace of indexerN objects into an empty FIFO whose consumer already
//     knows indexerN objects (a relist of an unchanged cache); the queue is not drained.
//   - op=Relist: Replace of indexerN objects then draining everything into the store: the
//     whole cost of a relist for an informer.
func BenchmarkDeltaFIFO(b *testing.B) {
	pool := configMaps(indexerN, 0, "1")
	relist := configMaps(indexerN, 0, "2")
	n := fmt.Sprintf("n=%dk", indexerN/1000)

	for _, consumer := range []string{"none", "store"} {
		apply := consumer == "store"
		for _, v := range fifoVariants {
			for _, impl := range fifoImpls {
				b.Run(fmt.Sprintf("op=AddPop/consumer=%s/fifo=%s/impl=%s", consumer, v, impl.name), func(b *testing.B) {
					f := impl.new(v, apply, nil)
					defer f.Close()
					b.ReportAllocs()
					i, queued := 0, 0
					for b.Loop() {
						if err := f.Add(pool[i%indexerN]); err != nil {
							b.Fatal(err)
						}
						i++
						if queued++; queued == fifoBacklog {
							f.Drain(queued)
							queued = 0
						}
					}
					f.Drain(queued)
				})
			}
		}
	}
	for _, v := range fifoVariants {
		for _, impl := range fifoImpls {
			b.Run(fmt.Sprintf("op=AddPopConcurrent/consumer=none/fifo=%s/impl=%s", v, impl.name), func(b *testing.B) {
				f := impl.new(v, false, nil)
				defer f.Close()
				b.ReportAllocs()
				var wg sync.WaitGroup
				total := b.N
				b.ResetTimer()
				wg.Go(func() {
					for i := range total {
						if err := f.Add(pool[i%indexerN]); err != nil {
							panic(err)
						}
					}
				})
				f.Drain(total)
				wg.Wait()
			})
		}
	}
	for _, v := range []string{"DeltaFIFO", "RealFIFO", "RealFIFO-atomic"} {
		for _, impl := range fifoImpls {
			b.Run(fmt.Sprintf("op=Replace/%s/fifo=%s/impl=%s", n, v, impl.name), func(b *testing.B) {
				f := impl.new(v, false, pool)
				if t, ok := f.(*theirFIFO); ok {
					t.prepare(relist)
				}
				b.ReportAllocs()
				for b.Loop() {
					b.StopTimer()
					f.Reset()
					b.StartTimer()
					if err := f.Replace(relist, "2"); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
	for _, v := range []string{"DeltaFIFO", "RealFIFO", "RealFIFO-batch", "RealFIFO-atomic"} {
		for _, impl := range fifoImpls {
			b.Run(fmt.Sprintf("op=Relist/%s/consumer=store/fifo=%s/impl=%s", n, v, impl.name), func(b *testing.B) {
				// Every iteration relists the other version of the same indexerN objects into a
				// fresh FIFO, and drains it into the store.
				f := impl.new(v, true, pool)
				lists := [2][]*corev1.ConfigMap{relist, pool}
				if t, ok := f.(*theirFIFO); ok {
					t.prepare(relist)
					t.prepare(pool)
				}
				positions := indexerN
				if v == "RealFIFO-atomic" {
					positions = 1
				}
				b.ReportAllocs()
				i := 0
				for b.Loop() {
					b.StopTimer()
					f.Reset()
					b.StartTimer()
					if err := f.Replace(lists[i%2], "2"); err != nil {
						b.Fatal(err)
					}
					if seen := f.Drain(positions); seen != indexerN {
						b.Fatalf("consumer saw %d objects", seen)
					}
					i++
				}
			})
		}
	}
}
