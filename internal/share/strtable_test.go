package share

import (
	"fmt"
	"math/rand/v2"
	"runtime"
	"strings"
	"sync"
	"testing"
	"unsafe"
)

// strModel is what a strTable must behave like: a map from hash to the last string inserted
// with it (its address and length, which do not keep it alive), minus the strings freed.
type strModel map[uint64]strAt

type strAt struct {
	p uintptr
	n int
}

// TestStrTableModel drives a strTable and the model with the same random inserts (hashes
// drawn from a small range, so that entries of one hash are replaced and probe chains
// collide), sweeps and string deaths, and compares every lookup.
func TestStrTableModel(t *testing.T) {
	for seed := range uint64(6) {
		r := rand.New(rand.NewPCG(seed, 7))
		var tab strTable
		model := strModel{}
		keep := map[uint64]*string{} // the strings kept alive
		check := func(step int) {
			for h := range uint64(600) {
				c, n := tab.lookup(h)
				want, ok := model[h]
				if !ok {
					if c != nil {
						t.Fatalf("seed %d step %d: hash %d: a string the model does not hold", seed, step, h)
					}
					continue
				}
				if _, alive := keep[h]; !alive && c == nil {
					continue // dropped by the owner; the collector may have freed it
				}
				if uintptr(c) != want.p || n != want.n {
					t.Fatalf("seed %d step %d: hash %d: got %p/%d, want %#x/%d", seed, step, h, c, n, want.p, want.n)
				}
			}
		}
		for step := range 1500 {
			switch x := r.IntN(100); {
			case x < 70:
				h := r.Uint64N(600)
				s := strings.Clone(fmt.Sprint("a string of seed ", seed, " step ", step)) // not a tiny object
				tab.insert(h, unsafe.Pointer(unsafe.StringData(s)), len(s))
				model[h], keep[h] = strAt{uintptr(unsafe.Pointer(unsafe.StringData(s))), len(s)}, &s
			case x < 95:
				// A string dies: the model forgets it once the collector has freed it.
				for h := range keep {
					delete(keep, h)
					break
				}
			case x < 97:
				// A string that dies is swept out, not only at a sweep: until then a lookup
				// of it finds nothing either.
				for h := range keep {
					delete(keep, h)
					delete(model, h)
					runtime.GC()
					if c, _ := tab.lookup(h); c != nil {
						t.Fatalf("seed %d step %d: hash %d: a freed string found", seed, step, h)
					}
					break
				}
			default:
				runtime.GC()
				for h := range model {
					if _, ok := keep[h]; !ok {
						delete(model, h)
					}
				}
				tab.sweep()
				if tab.len() != len(model) {
					t.Fatalf("seed %d step %d: %d entries after a sweep, %d live", seed, step, tab.len(), len(model))
				}
				check(step)
			}
		}
		check(-1)
		runtime.KeepAlive(keep)
	}
}

// TestStringReadsWhileSharing has decoders call Sharer.String while another goroutine shares
// objects (inserts, sweeps and rebuilds of the string table): under -race, it checks that
// the read path needs no lock, and that every string it returns is equal to the bytes given.
func TestStringReadsWhileSharing(t *testing.T) {
	s := New[*sPod]()
	var pods []*sPod
	for i := range 50 {
		pods = append(pods, s.Share(decodePod(t, deploymentPodJSON(i%5, i))))
	}
	var words [][]byte
	for _, p := range pods {
		words = append(words, []byte(p.Name), []byte(p.Namespace), []byte(p.Spec.NodeName))
		for k, v := range p.Labels {
			words = append(words, []byte(k), []byte(v))
		}
	}
	var wg sync.WaitGroup
	stop := make(chan struct{})
	for range 2 {
		wg.Go(func() {
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				b := words[i%len(words)]
				if got := s.String(b); got != string(b) {
					t.Errorf("String(%q) = %q", b, got)
					return
				}
			}
		})
	}
	for i := range 3000 {
		pods[i%len(pods)] = s.Share(decodePod(t, deploymentPodJSON(i%7, i)))
		if i%500 == 0 {
			s.s.sweep()
		}
	}
	close(stop)
	wg.Wait()
	// A string of the table comes back as the table's own.
	name := pods[0].Namespace
	if got := s.String([]byte(name)); unsafe.StringData(got) != unsafe.StringData(name) {
		t.Fatal("String did not return the canonical namespace")
	}
}

// BenchmarkSharerString measures Sharer.String from GOMAXPROCS goroutines while nothing else
// holds the sharer (the lookups of a parallel decode).
func BenchmarkSharerString(b *testing.B) {
	s := New[*sPod]()
	var pods []*sPod
	for i := range 20 {
		pods = append(pods, s.Share(decodePod(b, deploymentPodJSON(i%3, i))))
	}
	var words [][]byte
	for _, p := range pods {
		words = append(words, []byte(p.Namespace), []byte(p.Spec.NodeName), []byte(p.Spec.Containers[0].Image))
	}
	b.RunParallel(func(pb *testing.PB) {
		i := 0
		for pb.Next() {
			_ = s.String(words[i%len(words)])
			i++
		}
	})
	runtime.KeepAlive(pods)
}
