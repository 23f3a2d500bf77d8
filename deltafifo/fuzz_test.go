package deltafifo

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sort"
	"testing"

	"github.com/informerkit/informerkit/indexer"
)

// The fuzz targets drive a FIFO and a model of the rules (a deliberately naive re-statement of
// them over plain slices and maps) with the same operation sequence, and compare after every
// operation: the result of the operation, HasSynced, Len, ListKeys, and everything Pop and
// PopBatch hand out. A consumer applies popped deltas to a store on both sides, which is the
// FIFO's KnownObjects in modes Coalescing and InOrder. The operations include incremental
// replacements (BeginReplace, Relist.Add, Finish, Abort), interleaved with pops.

var errFuzzTransform = errors.New("transformer refuses")

func fuzzKey(o *testObj) (string, error) {
	if o.name == "x" {
		return "", errors.New("poisoned key")
	}
	return keyFunc(o)
}

func fuzzTransform(o *testObj) (*testObj, error) {
	if o.name == "t" {
		return nil, errFuzzTransform
	}
	return o, nil
}

// sortedKnown lists keys in sorted order, so that the model can predict the order of the
// deltas Replace and Resync derive from KnownObjects.
type sortedKnown struct{ indexer.Indexer[*testObj] }

func (k sortedKnown) ListKeys() []string {
	keys := k.Indexer.ListKeys()
	sort.Strings(keys)
	return keys
}

type modelItem struct {
	key string
	d   Delta[*testObj]
}

type fifoModel struct {
	mode  fifoMode
	known map[string]*testObj // the consumer's store; the FIFO sees it unless mode Atomic
	// Coalescing: keys in queue order and their deltas. InOrder/Atomic: items.
	keys   []string
	deltas map[string]Deltas[*testObj]
	items  []modelItem

	populated, synced, closed bool
	initial                   int

	// The open incremental replacement, if any, and the size of Atomic chunks.
	repl      *modelRepl
	chunkSize int
}

type modelRepl struct {
	seen   map[string]struct{}
	staged []modelItem // the added objects, queued at Finish
}

func (m *fifoModel) sees() bool { return m.mode != modeAtomic }

func (m *fifoModel) knownKeys() []string {
	if !m.sees() {
		return nil
	}
	keys := make([]string, 0, len(m.known))
	for k := range m.known {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

func (m *fifoModel) check() {
	if !m.synced && m.populated && m.initial == 0 {
		m.synced = true
	}
}

func (m *fifoModel) length() int {
	if m.mode == modeCoalescing {
		return len(m.keys)
	}
	return len(m.items)
}

func (m *fifoModel) queueKeys() []string {
	if m.mode == modeCoalescing {
		return slices.Clone(m.keys)
	}
	var out []string
	for _, it := range m.items {
		if !it.d.Type.keyless() && !slices.Contains(out, it.key) {
			out = append(out, it.key)
		}
	}
	return out
}

// appendCoalescing applies the two-consecutive-deletes rule.
func (m *fifoModel) appendCoalescing(key string, d Delta[*testObj]) {
	ds, queued := m.deltas[key]
	if !queued {
		m.keys = append(m.keys, key)
	}
	if n := len(ds); n > 0 && d.Type == Deleted && ds[n-1].Type == Deleted {
		if ds[n-1].FinalStateUnknown {
			ds[n-1] = d
		}
		m.deltas[key] = ds
		return
	}
	m.deltas[key] = append(ds, d)
}

func (m *fifoModel) enqueue(t DeltaType, o *testObj) error {
	key, err := fuzzKey(o)
	if err != nil {
		return err
	}
	if _, err := fuzzTransform(o); err != nil {
		return err
	}
	if m.repl != nil {
		return ErrReplaceInProgress
	}
	m.populated = true
	m.check()
	d := Delta[*testObj]{Type: t, Object: o}
	if m.mode != modeCoalescing {
		m.items = append(m.items, modelItem{key, d})
		return nil
	}
	if t == Deleted {
		_, queued := m.deltas[key]
		_, known := m.known[key]
		if !queued && !known {
			return nil
		}
	}
	m.appendCoalescing(key, d)
	return nil
}

func (m *fifoModel) replace(list []*testObj, rv string) error {
	keys := make([]string, len(list))
	for i, o := range list {
		var err error
		if m.mode != modeAtomic {
			if keys[i], err = fuzzKey(o); err != nil {
				return err
			}
		}
		if _, err = fuzzTransform(o); err != nil {
			return err
		}
	}
	if m.repl != nil {
		return ErrReplaceInProgress
	}
	listed := map[string]bool{}
	for _, k := range keys {
		listed[k] = true
	}
	count := 0
	switch m.mode {
	case modeAtomic:
		m.items = append(m.items, modelItem{"", Delta[*testObj]{Type: ReplacedAll, All: &ReplacedAllInfo[*testObj]{ResourceVersion: rv, Objects: list}}})
		count = len(m.items)
	case modeCoalescing:
		distinct := map[string]bool{}
		for i, k := range keys {
			m.appendCoalescing(k, Delta[*testObj]{Type: Replaced, Object: list[i]})
			distinct[k] = true
		}
		count = len(distinct)
		for _, k := range slices.Clone(m.keys) {
			if !listed[k] {
				count++
				m.appendCoalescing(k, tomb(m.deltas[k].Newest().Object))
			}
		}
		for _, k := range m.knownKeys() {
			if _, queued := m.deltas[k]; !queued {
				count++
				m.appendCoalescing(k, tomb(m.known[k]))
			}
		}
	case modeInOrder:
		var order []string
		last := map[string]Delta[*testObj]{}
		for _, it := range m.items {
			if _, seen := last[it.key]; !seen {
				order = append(order, it.key)
			}
			last[it.key] = it.d
		}
		for _, k := range order {
			if !listed[k] && last[k].Type != Deleted {
				m.items = append(m.items, modelItem{k, tomb(last[k].Object)})
			}
		}
		for _, k := range m.knownKeys() {
			if _, queued := last[k]; !queued && !listed[k] {
				m.items = append(m.items, modelItem{k, tomb(m.known[k])})
			}
		}
		for i, k := range keys {
			m.items = append(m.items, modelItem{k, Delta[*testObj]{Type: Replaced, Object: list[i]}})
		}
		count = len(m.items)
	}
	if !m.populated {
		m.populated = true
		m.initial = count
		m.check()
	}
	return nil
}

func (m *fifoModel) resync() error {
	if m.repl != nil {
		return ErrReplaceInProgress
	}
	switch m.mode {
	case modeAtomic:
		if n := len(m.items); n == 0 || m.items[n-1].d.Type != SyncAll {
			m.items = append(m.items, modelItem{"", Delta[*testObj]{Type: SyncAll}})
		}
	case modeCoalescing:
		for _, k := range m.knownKeys() {
			if _, queued := m.deltas[k]; !queued {
				m.appendCoalescing(k, Delta[*testObj]{Type: Sync, Object: m.known[k]})
			}
		}
	case modeInOrder:
		queued := map[string]bool{}
		for _, it := range m.items {
			queued[it.key] = true
		}
		for _, k := range m.knownKeys() {
			if !queued[k] {
				m.items = append(m.items, modelItem{k, Delta[*testObj]{Type: Sync, Object: m.known[k]}})
				queued[k] = true
			}
		}
	}
	return nil
}

func (m *fifoModel) beginReplace() error {
	if m.repl != nil {
		return ErrReplaceInProgress
	}
	m.repl = &modelRepl{seen: map[string]struct{}{}}
	return nil
}

func (m *fifoModel) replAdd(o *testObj) error {
	key, err := fuzzKey(o)
	if err != nil {
		return err
	}
	if _, err := fuzzTransform(o); err != nil {
		return err
	}
	m.repl.seen[key] = struct{}{}
	m.repl.staged = append(m.repl.staged, modelItem{key, Delta[*testObj]{Type: Replaced, Object: o}})
	return nil
}

func (m *fifoModel) replKeep(key string) {
	m.repl.seen[key] = struct{}{}
}

func (m *fifoModel) finishReplace(rv string) {
	seen, staged := m.repl.seen, m.repl.staged
	m.repl = nil
	// The added objects first, in the order they were added.
	var chunk *ReplacedChunkInfo[*testObj]
	for _, it := range staged {
		switch m.mode {
		case modeCoalescing:
			m.appendCoalescing(it.key, it.d)
		case modeInOrder:
			m.items = append(m.items, it)
		case modeAtomic:
			if chunk == nil || len(chunk.Objects) >= m.chunkSize {
				chunk = &ReplacedChunkInfo[*testObj]{}
				m.items = append(m.items, modelItem{"", Delta[*testObj]{Type: ReplacedChunk, Chunk: chunk}})
			}
			chunk.Objects = append(chunk.Objects, it.d.Object)
			chunk.Keys = append(chunk.Keys, it.key)
		}
	}
	switch m.mode {
	case modeCoalescing:
		for _, k := range slices.Clone(m.keys) {
			if _, ok := seen[k]; !ok {
				m.appendCoalescing(k, tomb(m.deltas[k].Newest().Object))
			}
		}
		for _, k := range m.knownKeys() {
			_, queued := m.deltas[k]
			if _, ok := seen[k]; !ok && !queued {
				m.appendCoalescing(k, tomb(m.known[k]))
			}
		}
	case modeInOrder:
		var order []string
		last := map[string]Delta[*testObj]{}
		for _, it := range m.items {
			if _, ok := seen[it.key]; ok {
				continue
			}
			if _, dup := last[it.key]; !dup {
				order = append(order, it.key)
			}
			last[it.key] = it.d
		}
		for _, k := range order {
			if last[k].Type != Deleted {
				m.items = append(m.items, modelItem{k, tomb(last[k].Object)})
			}
		}
		for _, k := range m.knownKeys() {
			_, queued := last[k]
			if _, ok := seen[k]; !ok && !queued {
				m.items = append(m.items, modelItem{k, tomb(m.known[k])})
			}
		}
	case modeAtomic:
		m.items = append(m.items, modelItem{"", Delta[*testObj]{Type: ReplacedEnd, End: &ReplacedEndInfo{ResourceVersion: rv, Keys: seen}}})
	}
	if !m.populated {
		m.populated = true
		m.initial = m.length()
		m.check()
	}
}

// pop removes and returns the next batch of at most limit positions.
func (m *fifoModel) pop(limit int) (batch []Deltas[*testObj], keys []string, init bool) {
	init = !m.synced
	if m.initial > 0 {
		limit = min(limit, m.initial)
	}
	if m.mode == modeCoalescing {
		n := min(limit, len(m.keys))
		for _, k := range m.keys[:n] {
			batch = append(batch, m.deltas[k])
			delete(m.deltas, k)
		}
		keys = slices.Clone(m.keys[:n])
		m.keys = m.keys[n:]
		return batch, keys, init
	}
	n := 0
	for n < len(m.items) && n < limit {
		it := m.items[n]
		if it.d.Type.keyless() {
			if n == 0 {
				n = 1
			}
			break
		}
		if slices.Contains(keys, it.key) {
			break
		}
		keys = append(keys, it.key)
		n++
	}
	keys = keys[:0]
	for _, it := range m.items[:n] {
		batch = append(batch, Deltas[*testObj]{it.d})
		keys = append(keys, it.key)
	}
	m.items = m.items[n:]
	return batch, keys, init
}

// unpop puts a requeued batch back at the front.
func (m *fifoModel) unpop(batch []Deltas[*testObj], keys []string) {
	if m.mode == modeCoalescing {
		m.keys = append(slices.Clone(keys), m.keys...)
		for i, k := range keys {
			m.deltas[k] = batch[i]
		}
		return
	}
	var front []modelItem
	for i, k := range keys {
		front = append(front, modelItem{k, batch[i][0]})
	}
	m.items = append(front, m.items...)
}

func (m *fifoModel) done(n int) {
	if m.initial > 0 {
		m.initial = max(m.initial-n, 0)
		m.check()
	}
}

// apply is the model consumer. A ReplacedAll whose list holds an object without a key fails
// and changes nothing.
func (m *fifoModel) apply(ds Deltas[*testObj]) error {
	for _, d := range ds {
		switch d.Type {
		case ReplacedAll:
			next := map[string]*testObj{}
			for _, o := range d.All.Objects {
				k, err := fuzzKey(o)
				if err != nil {
					return err
				}
				next[k] = o
			}
			m.known = next
		case SyncAll:
		case ReplacedChunk:
			for i, o := range d.Chunk.Objects {
				m.known[d.Chunk.Keys[i]] = o
			}
		case ReplacedEnd:
			for k := range m.known {
				if _, ok := d.End.Keys[k]; !ok {
					delete(m.known, k)
				}
			}
		case Deleted:
			k, err := fuzzKey(d.Object)
			if d.Object == nil || err != nil {
				continue
			}
			delete(m.known, k)
		default:
			k, _ := fuzzKey(d.Object)
			m.known[k] = d.Object
		}
	}
	return nil
}

// implApply is the consumer of the FIFO under test, applying to an indexer.
func implApply(store indexer.Indexer[*testObj], ds Deltas[*testObj]) error {
	for _, d := range ds {
		switch d.Type {
		case ReplacedAll:
			if err := applyReplacedAll(store, d.All, func(string, Delta[*testObj], *testObj, bool) {}); err != nil {
				return err
			}
		case ReplacedChunk:
			if err := applyReplacedChunk(store, d.Chunk, func(string, Delta[*testObj], *testObj, bool) {}); err != nil {
				return err
			}
		case ReplacedEnd:
			applyReplacedEnd(store, d.End, func(string, Delta[*testObj], *testObj, bool) {})
		case SyncAll:
		case Deleted:
			if d.Object == nil {
				continue
			}
			if err := store.Delete(d.Object); err != nil {
				return err
			}
		default:
			if err := store.Add(d.Object); err != nil {
				return err
			}
		}
	}
	return nil
}

func sameDelta(a, b Delta[*testObj]) bool {
	if a.Type != b.Type || a.Object != b.Object || a.FinalStateUnknown != b.FinalStateUnknown ||
		(a.All == nil) != (b.All == nil) || (a.Chunk == nil) != (b.Chunk == nil) || (a.End == nil) != (b.End == nil) {
		return false
	}
	if a.All != nil && (a.All.ResourceVersion != b.All.ResourceVersion || !slices.Equal(a.All.Objects, b.All.Objects)) {
		return false
	}
	if a.Chunk != nil && (!slices.Equal(a.Chunk.Objects, b.Chunk.Objects) || !slices.Equal(a.Chunk.Keys, b.Chunk.Keys)) {
		return false
	}
	return a.End == nil || (a.End.ResourceVersion == b.End.ResourceVersion && maps.Equal(a.End.Keys, b.End.Keys))
}

type fuzzReader struct {
	data []byte
	pos  int
}

func (r *fuzzReader) more() bool { return r.pos < len(r.data) }

func (r *fuzzReader) next() byte {
	if r.pos >= len(r.data) {
		return 0
	}
	b := r.data[r.pos]
	r.pos++
	return b
}

var fuzzNames = []string{"0", "1", "2", "3", "4", "x", "t"}

func (r *fuzzReader) object(step int) *testObj {
	b := r.next()
	name := fuzzNames[int(b)%len(fuzzNames)]
	if b >= 128 && (name == "x" || name == "t") {
		name = "0" // keep poisoned objects rarer
	}
	return &testObj{ns: "ns", name: name, rv: fmt.Sprint(step)}
}

func fuzzFIFO(t *testing.T, mode fifoMode, data []byte) {
	r := &fuzzReader{data: data}
	store := indexer.New(fuzzKey, nil)
	// Chunks of 1 to 3 objects, so that short sequences fill several; no input byte is used,
	// so the seeds found before replacements existed keep their meaning.
	chunkSize := 1 + len(data)%3
	m := &fifoModel{mode: mode, known: map[string]*testObj{}, deltas: map[string]Deltas[*testObj]{}, chunkSize: chunkSize}
	// Objects the consumer already has before the FIFO starts.
	for i := range int(r.next() % 4) {
		o := &testObj{ns: "ns", name: fmt.Sprint(i), rv: "init"}
		must(t, store.Add(o))
		m.known[fmt.Sprint("ns/", i)] = o
	}
	opts := testOptions{key: fuzzKey, mode: mode, transform: fuzzTransform, chunkSize: chunkSize}
	if mode != modeAtomic {
		opts.known = sortedKnown{store}
	}
	if mode == modeAtomic && r.next()%2 == 1 {
		opts.unlock = true
	}
	f := newQueue(opts)
	ctx := context.Background()
	// repl is the open replacement, stale the last one that ended (its methods must fail).
	var repl, stale *Relist[*testObj]

	for step := 0; r.more() && step < 100; step++ {
		// Operation bytes below 216 keep the meaning they had before replacements existed;
		// the others are the replacement's operations. While a replacement is open, Add and
		// Update become Relist.Add (the reflector writes nothing else during a list).
		b := r.next()
		op := int(b % 9)
		if b >= 216 {
			op = 9 + int(b-216)%5
		}
		if repl != nil && op <= 1 {
			op = 10
		}
		var desc string
		var err, werr error
		switch op {
		case 9:
			desc = "BeginReplace"
			var nr *Relist[*testObj]
			nr, err = f.BeginReplace()
			werr = m.beginReplace()
			if err == nil {
				repl = nr
			}
		case 10, 11, 12, 13:
			target := repl
			if target == nil {
				target = stale
			}
			if target == nil {
				continue
			}
			switch op {
			case 10:
				o := r.object(step)
				desc = fmt.Sprintf("Relist.Add %v", o)
				err = target.Add(o)
				if repl == nil {
					// The object is checked before the replacement (outside the FIFO's lock).
					werr = ErrRelistEnded
					if _, kerr := fuzzKey(o); kerr != nil {
						werr = kerr
					} else if _, terr := fuzzTransform(o); terr != nil {
						werr = terr
					}
				} else {
					werr = m.replAdd(o)
				}
			case 11:
				rv := fmt.Sprint("rv", step)
				desc = "Relist.Finish " + rv
				err = target.Finish(rv)
				if repl == nil {
					werr = ErrRelistEnded
				} else {
					m.finishReplace(rv)
					stale, repl = repl, nil
				}
			case 12:
				desc = "Relist.Abort"
				target.Abort()
				if repl != nil {
					m.repl = nil
					stale, repl = repl, nil
				}
			case 13:
				key, _ := keyFunc(r.object(step))
				desc = "Relist.Keep " + key
				err = target.Keep(key)
				if repl == nil {
					werr = ErrRelistEnded
				} else {
					m.replKeep(key)
				}
			}
		case 0, 1, 2:
			o := r.object(step)
			typ := []DeltaType{Added, Updated, Deleted}[op]
			desc = fmt.Sprintf("%s %v", typ, o)
			err = []func(*testObj) error{f.Add, f.Update, f.Delete}[op](o)
			werr = m.enqueue(typ, o)
		case 3:
			n := int(r.next() % 5)
			list := make([]*testObj, 0, n)
			for range n {
				list = append(list, r.object(step))
			}
			desc = fmt.Sprintf("Replace %v", list)
			rv := fmt.Sprint("rv", step)
			err = f.Replace(list, rv)
			werr = m.replace(list, rv)
		case 4:
			desc = "Resync"
			err = f.Resync()
			werr = m.resync()
		case 5, 6:
			limit := 1
			if op == 6 {
				limit = int(r.next()%4) + 1
			}
			outcome := r.next() % 8
			desc = fmt.Sprintf("Pop(limit %d, outcome %d)", limit, outcome)
			if m.length() == 0 {
				if !m.closed {
					continue // would block
				}
				if err := f.Pop(ctx, func(Deltas[*testObj], bool) error { return nil }); !errors.Is(err, ErrClosed) {
					t.Fatalf("step %d: Pop on a closed empty FIFO = %v", step, err)
				}
				break
			}
			wantBatch, wantKeys, wantInit := m.pop(limit)
			var got []Deltas[*testObj]
			var gotInit bool
			process := func(batch []Deltas[*testObj], init bool) error {
				gotInit = init
				for _, ds := range batch {
					got = append(got, ds.Clone())
				}
				switch outcome {
				case 6:
					return Requeue(nil)
				case 7:
					return errors.New("consumer failed")
				}
				for _, ds := range batch {
					if err := implApply(store, ds); err != nil {
						return err
					}
				}
				return nil
			}
			var perr error
			if op == 5 {
				perr = f.Pop(ctx, func(ds Deltas[*testObj], init bool) error { return process([]Deltas[*testObj]{ds}, init) })
			} else {
				perr = f.PopBatch(ctx, limit, process)
			}
			if len(got) != len(wantBatch) || gotInit != wantInit {
				t.Fatalf("step %d %s: popped %d positions (initial %v), model %d (initial %v)", step, desc, len(got), gotInit, len(wantBatch), wantInit)
			}
			for i := range got {
				if !slices.EqualFunc(got[i], wantBatch[i], sameDelta) {
					t.Fatalf("step %d %s: position %d = %s, model %s", step, desc, i, deltasString(got[i]), deltasString(wantBatch[i]))
				}
			}
			switch outcome {
			case 6:
				if !errors.As(perr, new(*RequeueError)) {
					t.Fatalf("step %d: Pop = %v, want a RequeueError", step, perr)
				}
				m.unpop(wantBatch, wantKeys)
			case 7:
				if perr == nil {
					t.Fatalf("step %d: Pop lost the process error", step)
				}
				m.done(len(wantBatch))
			default:
				var merr error
				for _, ds := range wantBatch {
					if merr = m.apply(ds); merr != nil {
						break
					}
				}
				if (perr == nil) != (merr == nil) {
					t.Fatalf("step %d %s: Pop = %v, model consumer %v", step, desc, perr, merr)
				}
				m.done(len(wantBatch))
			}
		case 7:
			desc = "Close"
			f.Close()
			m.closed = true
		case 8:
			// The consumer's store changes behind the FIFO's back (e.g. a second writer).
			o := r.object(step)
			k, kerr := fuzzKey(o)
			if kerr != nil {
				continue
			}
			desc = "store write " + k
			if r.next()%2 == 0 {
				must(t, store.Add(o))
				m.known[k] = o
			} else {
				store.DeleteByKey(k)
				delete(m.known, k)
			}
		}
		if (err == nil) != (werr == nil) || (werr != nil && (errors.Is(werr, errFuzzTransform) != errors.Is(err, errFuzzTransform) ||
			errors.Is(werr, ErrReplaceInProgress) != errors.Is(err, ErrReplaceInProgress) ||
			errors.Is(werr, ErrRelistEnded) != errors.Is(err, ErrRelistEnded))) {
			t.Fatalf("step %d %s: err = %v, model %v", step, desc, err, werr)
		}
		if got := f.HasSynced(); got != m.synced {
			t.Fatalf("step %d %s: HasSynced = %v, model %v", step, desc, got, m.synced)
		}
		if got, want := f.Len(), m.length(); got != want {
			t.Fatalf("step %d %s: Len = %d, model %d", step, desc, got, want)
		}
		if got, want := f.ListKeys(), m.queueKeys(); !slices.Equal(got, want) && len(got)+len(want) > 0 {
			t.Fatalf("step %d %s: ListKeys = %v, model %v", step, desc, got, want)
		}
		if got := len(store.ListKeys()); got != len(m.known) {
			t.Fatalf("step %d %s: consumer store has %d objects, model %d", step, desc, got, len(m.known))
		}
	}
}

func FuzzCoalescing(f *testing.F) {
	f.Add([]byte{2, 0, 1, 5, 0, 2, 1, 3, 2, 1, 3, 5, 0, 0, 5, 0, 0, 5, 0, 0})
	f.Add([]byte{3, 4, 3, 3, 1, 2, 4, 6, 3, 6, 6, 2, 2, 5, 0, 6, 5, 0, 5, 0, 0})
	f.Add(replacementSeed(false))
	f.Add(replacementSeed(false)[:20])
	f.Fuzz(func(t *testing.T, data []byte) { fuzzFIFO(t, modeCoalescing, data) })
}

func FuzzInOrder(f *testing.F) {
	f.Add([]byte{2, 0, 1, 5, 0, 2, 1, 3, 2, 1, 3, 5, 0, 0, 5, 0, 0, 5, 0, 0})
	f.Add([]byte{3, 4, 3, 3, 1, 2, 4, 6, 3, 6, 6, 2, 2, 5, 0, 6, 5, 0, 5, 0, 0})
	f.Add(replacementSeed(false))
	f.Add(replacementSeed(false)[:20])
	f.Fuzz(func(t *testing.T, data []byte) { fuzzFIFO(t, modeInOrder, data) })
}

func FuzzAtomic(f *testing.F) {
	f.Add([]byte{2, 0, 0, 1, 5, 0, 3, 2, 1, 3, 5, 0, 0, 4, 5, 0, 0, 5, 0, 0})
	f.Add([]byte{3, 1, 3, 3, 1, 2, 4, 6, 3, 6, 6, 2, 2, 5, 0, 6, 5, 0, 4, 4, 5, 0, 0})
	f.Add(replacementSeed(true))
	f.Add(replacementSeed(true)[:21])
	f.Fuzz(func(t *testing.T, data []byte) { fuzzFIFO(t, modeAtomic, data) })
}

// Operation bytes of the replacement operations (see fuzzFIFO).
const (
	opBeginReplace = 216
	opReplAdd      = 217
	opReplFinish   = 218
	opReplAbort    = 219
	opReplKeep     = 220
)

// replacementSeed is a schedule with incremental replacements: pops while one is open (of
// what was queued before it: nothing it holds is queued before Finish), a kept key,
// writes refused during the replacement, a poisoned object, an aborted replacement and calls
// on an ended one. atomic adds the byte mode Atomic reads for UnlockWhileProcessing.
func replacementSeed(atomic bool) []byte {
	seed := []byte{2} // the consumer already has ns/0 and ns/1
	if atomic {
		seed = append(seed, 1)
	}
	return append(seed,
		0, 2, // Add ns/2 (a watch event before the relist)
		opBeginReplace,
		0, 3, // (redirected to) Relist.Add ns/3
		5, 0, // Pop
		opReplAdd, 1, // Relist.Add ns/1
		2, 0, // Delete ns/0: refused
		4,       // Resync: refused
		3, 1, 4, // Replace [ns/4]: refused
		opReplAdd, 5, // Relist.Add of a poisoned key
		opReplFinish,
		6, 3, 0, // PopBatch(4)
		5, 0, 5, 0, 5, 0,
		opBeginReplace,
		opReplAdd, 4,
		opReplAbort,
		opReplAdd, 2, // on the aborted replacement
		opReplFinish, // likewise
		5, 6,         // Pop and requeue
		opBeginReplace,
		1, 4, 1, 2, // Relist.Add ns/4, ns/2
		opReplKeep, 1, // Relist.Keep ns/1
		5, 0,
		opReplFinish,
		5, 0, 5, 0, 5, 0, 5, 0,
	)
}
