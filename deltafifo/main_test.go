package deltafifo

import (
	"errors"
	"fmt"
	"slices"
	"testing"

	"go.uber.org/goleak"

	"github.com/informerkit/informerkit/indexer"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

type testObj struct {
	ns, name string
	rv       string
	// transformed is set by the test transformer.
	transformed int
}

func (o *testObj) GetNamespace() string { return o.ns }
func (o *testObj) GetName() string      { return o.name }

func (o *testObj) String() string {
	if o == nil {
		return "<nil>"
	}
	return fmt.Sprintf("%s/%s@%s", o.ns, o.name, o.rv)
}

func obj(name, rv string) *testObj { return &testObj{ns: "ns", name: name, rv: rv} }

var keyFunc = indexer.MetaNamespaceKeyFunc[*testObj]

func newKnown(objs ...*testObj) indexer.Indexer[*testObj] {
	ix := indexer.New(keyFunc, nil)
	for _, o := range objs {
		_ = ix.Add(o)
	}
	return ix
}

// fifoMode names a layout, for the tests that run all three.
type fifoMode int

const (
	modeCoalescing fifoMode = iota // FIFO
	modeInOrder                    // RealFIFO
	modeAtomic                     // AtomicFIFO
)

// String returns the names the benchmarks have always used.
func (m fifoMode) String() string {
	return [...]string{"Coalescing", "InOrder", "Atomic"}[m]
}

// testOptions are the settings of every layout, for tests that build any of them; the
// constructor of mode ignores those it does not have.
type testOptions struct {
	key       indexer.KeyFunc[*testObj]
	mode      fifoMode
	known     KnownObjects[*testObj]
	transform func(*testObj) (*testObj, error)
	unlock    bool
	chunkSize int
}

// newQueue builds the layout o.mode names.
func newQueue(o testOptions) Queue[*testObj] {
	switch o.mode {
	case modeInOrder:
		return NewRealFIFO(o.key, RealFIFOOptions[*testObj]{KnownObjects: o.known, Transform: o.transform})
	case modeAtomic:
		return NewAtomicFIFO(o.key, AtomicFIFOOptions[*testObj]{Transform: o.transform, UnlockWhileProcessing: o.unlock, ChunkSize: o.chunkSize})
	}
	return New(o.key, Options[*testObj]{KnownObjects: o.known, Transform: o.transform})
}

func newFIFO(mode fifoMode, known KnownObjects[*testObj]) Queue[*testObj] {
	return newQueue(testOptions{key: keyFunc, known: known, mode: mode})
}

// popped is what one Pop handed out.
type popped struct {
	deltas Deltas[*testObj]
	init   bool
}

// mustPop pops once; an empty FIFO fails the test instead of blocking it.
func mustPop(t *testing.T, f Queue[*testObj]) popped {
	t.Helper()
	if f.Len() == 0 {
		t.Fatal("Pop on an empty FIFO")
	}
	var p popped
	err := f.Pop(t.Context(), func(d Deltas[*testObj], init bool) error {
		p = popped{d.Clone(), init}
		return nil
	})
	if err != nil {
		t.Fatalf("Pop: %v", err)
	}
	return p
}

// d builds a delta for the expectations.
func d(t DeltaType, o *testObj) Delta[*testObj] { return Delta[*testObj]{Type: t, Object: o} }

func tomb(o *testObj) Delta[*testObj] {
	return Delta[*testObj]{Type: Deleted, Object: o, FinalStateUnknown: true}
}

func deltasString(ds Deltas[*testObj]) string {
	s := "["
	for i, x := range ds {
		if i > 0 {
			s += " "
		}
		s += string(x.Type) + ":" + x.Object.String()
		if x.FinalStateUnknown {
			s += "(tombstone)"
		}
		if x.All != nil {
			s += fmt.Sprintf("(all %d @%s)", len(x.All.Objects), x.All.ResourceVersion)
		}
	}
	return s + "]"
}

func wantDeltas(t *testing.T, got Deltas[*testObj], want ...Delta[*testObj]) {
	t.Helper()
	if !slices.EqualFunc(got, want, func(a, b Delta[*testObj]) bool {
		return a.Type == b.Type && a.Object == b.Object && a.FinalStateUnknown == b.FinalStateUnknown
	}) {
		t.Fatalf("deltas = %s, want %s", deltasString(got), deltasString(want))
	}
}

func wantPop(t *testing.T, f Queue[*testObj], want ...Delta[*testObj]) popped {
	t.Helper()
	p := mustPop(t, f)
	wantDeltas(t, p.deltas, want...)
	return p
}

func wantEmpty(t *testing.T, f Queue[*testObj]) {
	t.Helper()
	if n := f.Len(); n != 0 {
		t.Fatalf("Len = %d, want 0 (keys %v)", n, f.ListKeys())
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// failingKnown is a KnownObjects whose GetByKey fails for the listed keys.
type failingKnown struct {
	indexer.Indexer[*testObj]
	fail map[string]bool
}

func (k failingKnown) GetByKey(key string) (*testObj, bool, error) {
	if k.fail[key] {
		return nil, false, errors.New("store unavailable")
	}
	return k.Indexer.GetByKey(key)
}
