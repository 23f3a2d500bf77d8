package walkthrough

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
	"time"
)

// Figure is one stage of a MODIFIED event's way, measured over the figures' runs: the
// medians of the wall time and of the process's heap allocations from the report that ends
// the previous stage to the one that ends this one.
type Figure struct {
	Stage      string
	Nanos      int64
	Allocs     uint64
	AllocBytes uint64
}

// figureStages are the stages measured, each between two reports recognised by their lane
// and a prefix of their text.
var figureStages = []struct {
	stage    string
	from, to pick
}{
	{"apitest: the write, the event encoded and read off the watch stream", pick{laneScenario, "update walk/a"}, pick{laneWire, "MODIFIED walk/a"}},
	{"apiclient + reflector: decoded and handed to the DeltaFIFO", pick{laneWire, "MODIFIED walk/a"}, pick{laneReflector, "Updated walk/a"}},
	{"DeltaFIFO: queued → popped by the informer", pick{laneReflector, "Updated walk/a"}, pick{lanePopped, "PopBatch: Updated walk/a"}},
	{"informer: popped → cache written", pick{lanePopped, "PopBatch: Updated walk/a"}, pick{laneInformer, "cache update walk/a"}},
	{"informer: → queued for the controller's handler", pick{laneInformer, "cache update walk/a"}, pick{laneInformer, "listener queues update walk/a"}},
	{"listener: queued → handler called", pick{laneInformer, "listener queues update walk/a"}, pick{laneController, "OnUpdate(walk/a"}},
	{"controller handler: called → workqueue Add", pick{laneController, "OnUpdate(walk/a"}, pick{laneController, "Add walk/a"}},
	{"workqueue: Add → Get by the worker", pick{laneController, "Add walk/a"}, pick{laneWorker, "Get → walk/a"}},
	{"worker: Get → Reconcile called", pick{laneWorker, "Get → walk/a"}, pick{laneWorker, "Reconcile(walk/a): its trace begins"}},
	{"Reconcile: the cache read, GET and PUT of the copy", pick{laneWorker, "Reconcile(walk/a): its trace begins"}, pick{laneWorker, "Reconcile(walk/a) returns"}},
	{"the whole way: write → Reconcile called", pick{laneScenario, "update walk/a"}, pick{laneWorker, "Reconcile(walk/a): its trace begins"}},
}

// pick recognises a report: its lane, a prefix of its text, and for the informer's lane
// the listener it goes to (the slow handler's comes first).
type pick struct {
	lane   lane
	prefix string
}

func (p pick) find(rs []*report) *report {
	for _, r := range rs {
		if r.lane == p.lane && strings.HasPrefix(r.text, p.prefix) && (r.lane != laneInformer || r.to != actorSlow) {
			return r
		}
	}
	return nil
}

// figures runs the MODIFIED event of step 2 runs times measuring the clock, then runs
// times measuring allocations, and returns the medians of every stage.
func (s *scenario) figures(runs int) ([]Figure, error) {
	s.rc.beginStep(len(steps))
	defer s.rc.measure.Store(measureNothing)
	pass := func(what int32) ([][]*report, error) {
		s.rc.measure.Store(what)
		var groups [][]*report
		for i := range runs {
			first := s.rc.count()
			if err := s.change("a", fmt.Sprintf("run-%d-%d", what, i), nil); err != nil {
				return nil, err
			}
			groups = append(groups, s.rc.since(first))
		}
		return groups, nil
	}
	timed, err := pass(measureTime)
	if err != nil {
		return nil, err
	}
	counted, err := pass(measureAllocs)
	if err != nil {
		return nil, err
	}
	out := make([]Figure, 0, len(figureStages))
	for _, fs := range figureStages {
		var nanos []int64
		var allocs, bytes []uint64
		for _, g := range timed {
			from, to := fs.from.find(g), fs.to.find(g)
			if from == nil || to == nil {
				var texts []string
				for _, r := range g {
					texts = append(texts, r.text)
				}
				return nil, fmt.Errorf("figures: %q: a run lacks its reports: %q", fs.stage, texts)
			}
			nanos = append(nanos, to.in.nanos-from.out.nanos-recording(g, from, to, func(st stamp) int64 { return st.nanos }))
		}
		for _, g := range counted {
			from, to := fs.from.find(g), fs.to.find(g)
			if from == nil || to == nil {
				return nil, fmt.Errorf("figures: %q: a run lacks its reports", fs.stage)
			}
			allocs = append(allocs, to.in.mallocs-from.out.mallocs-uint64(recording(g, from, to, func(st stamp) int64 { return int64(st.mallocs) })))
			bytes = append(bytes, to.in.bytes-from.out.bytes-uint64(recording(g, from, to, func(st stamp) int64 { return int64(st.bytes) })))
		}
		out = append(out, Figure{Stage: fs.stage, Nanos: median(nanos), Allocs: median(allocs), AllocBytes: median(bytes)})
	}
	return out, nil
}

// recording returns what recording reports cost between from and to (by the measure m):
// the reports made in between, other stages' included, their overlapping spans merged. The
// counters only grow, so a merged span costs its last out less its first in.
func recording(g []*report, from, to *report, m func(stamp) int64) int64 {
	lo, hi := m(from.out), m(to.in)
	var spans [][2]int64
	for _, r := range g {
		if r != from && r != to && m(r.in) >= lo && m(r.out) <= hi {
			spans = append(spans, [2]int64{m(r.in), m(r.out)})
		}
	}
	slices.SortFunc(spans, func(a, b [2]int64) int { return cmp.Compare(a[0], b[0]) })
	var total int64
	for i := 0; i < len(spans); {
		start, end := spans[i][0], spans[i][1]
		for i++; i < len(spans) && spans[i][0] <= end; i++ {
			end = max(end, spans[i][1])
		}
		total += end - start
	}
	return total
}

func median[E int64 | uint64](xs []E) E {
	ys := slices.Clone(xs)
	slices.Sort(ys)
	return ys[len(ys)/2]
}

// formatNanos formats a duration of nanoseconds for the figures table.
func formatNanos(n int64) string {
	return time.Duration(n).Round(100 * time.Nanosecond).String()
}
