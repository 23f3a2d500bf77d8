package explore_test

import (
	"flag"
	"fmt"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/informerkit/informerkit/apiclient"
	"github.com/informerkit/informerkit/controller"
	"github.com/informerkit/informerkit/controller/controllertest/explore"
)

// The corpus: controllers with bugs of Sieve's three kinds, each beside its fixed version.
// make test checks that the explorer finds each bug within 30 runs from seed 1, shrinks it
// to a perturbation of the bug's kind and replays it, and raises no alarm on any fixed
// version with a short budget; make explore measures the search from 5 seeds
// (-corpus.figures) and explores the fixed versions with a long budget (-explore.runs).

var flagFigures = flag.Int("corpus.figures", 0, "search each corpus bug from this many seeds (1, 1001, 2001, ...) and print the runs and time to find it")

type corpusBug struct {
	name     string
	kind     explore.Kind
	setup    func(fixed bool) func(*controller.Manager) error
	workload explore.Workload
	// normalize drops what differs between runs without a bug (generated names, uids).
	normalize explore.Normalizer
}

func (b corpusBug) config(fixed bool, runs int, seed int64) explore.Config {
	return explore.Config{
		Target:    explore.Target{Setup: b.setup(fixed)},
		Workload:  b.workload,
		Normalize: b.normalize,
		Kinds:     []explore.Kind{b.kind},
		Runs:      runs,
		Seed:      seed,
	}
}

func dropAnnotations(keys ...string) explore.Normalizer {
	return func(_ string, obj map[string]any) {
		md, _ := obj["metadata"].(map[string]any)
		ann, _ := md["annotations"].(map[string]any)
		for _, k := range keys {
			delete(ann, k)
		}
		if ann != nil && len(ann) == 0 {
			delete(md, "annotations")
		}
	}
}

var corpus = []corpusBug{
	{name: "leak-on-crash", kind: explore.Intermediate, setup: leakOnCrash,
		workload:  explore.Workload{explore.Create("configmaps", parent("p"))},
		normalize: dropAnnotations("child")},
	{name: "stuck-upgrade", kind: explore.Intermediate, setup: stuckUpgrade,
		workload: explore.Workload{
			explore.Create("configmaps", parentWith("p", map[string]any{"version": "1"})),
			explore.Update("configmaps", "default", "p", "version 2", setKeys("version", "2")),
		}},
	{name: "finalizer-first", kind: explore.Intermediate, setup: finalizerFirst,
		workload: explore.Workload{
			explore.Create("configmaps", parent("p")),
			explore.Settle(), // registered before it is deleted, whatever the faults
			explore.Delete("configmaps", "default", "p"),
		}},
	{name: "ready-before-child", kind: explore.Intermediate, setup: readyBeforeChild,
		workload: explore.Workload{explore.Create("configmaps", parent("p"))}},
	{name: "stale-scale-down", kind: explore.Stale, setup: staleScaleDown,
		workload: explore.Workload{
			explore.Create("configmaps", parentWith("p", map[string]any{"replicas": "3"})),
			explore.Update("configmaps", "default", "p", "scale to 1", setKeys("replicas", "1")),
			explore.Update("configmaps", "default", "p", "scale to 3", setKeys("replicas", "3")),
		}},
	{name: "own-write-unseen", kind: explore.Stale, setup: ownWriteUnseen,
		workload: explore.Workload{
			explore.Create("configmaps", parent("p")),
			explore.Update("configmaps", "default", "p", "x=1", setKeys("x", "1")),
		}},
	{name: "stale-orphan-delete", kind: explore.Stale, setup: staleOrphanDelete,
		workload: explore.Workload{
			explore.Create("configmaps", parent("p")),
			explore.Delete("configmaps", "default", "p"),
			explore.Create("configmaps", parent("p")),
		}},
	{name: "missed-failure", kind: explore.Unobserved, setup: missedFailure,
		workload: explore.Workload{
			explore.Create("configmaps", parentWith("p", map[string]any{"phase": "Running", "restarts": "0"})),
			explore.Update("configmaps", "default", "p", "fails", setKeys("phase", "Failed")),
			explore.Update("configmaps", "default", "p", "restarted", setKeys("phase", "Running", "restarts", "1")),
		}},
	{name: "init-once", kind: explore.Unobserved, setup: initOnce,
		workload: explore.Workload{
			explore.Create("configmaps", parentWith("p", map[string]any{"seed": "a"})),
			explore.DeleteWith("configmaps", "default", "p", apiclient.DeleteOptions{}),
			explore.Create("configmaps", parentWith("p", map[string]any{"seed": "b"})),
		},
		normalize: dropAnnotations("parent-uid")},
	{name: "missed-blip", kind: explore.Unobserved, setup: missedBlip,
		workload: explore.Workload{
			explore.Create("configmaps", parentWith("p", map[string]any{"ready": "true", "transitions": "0"})),
			explore.Update("configmaps", "default", "p", "not ready", setKeys("ready", "false", "transitions", "1")),
			explore.Update("configmaps", "default", "p", "ready again", setKeys("ready", "true", "transitions", "2")),
		}},
}

// Every corpus bug is found by a perturbation of its kind, and the finding replays.
func TestCorpusBugsFound(t *testing.T) {
	for _, b := range corpus {
		t.Run(b.name, func(t *testing.T) {
			rep := explore.Find(t, b.config(false, 30, 1))
			if rep.Finding == nil {
				t.Fatalf("not found: %s", rep)
			}
			if !rep.Finding.Replayed {
				t.Errorf("the finding did not replay:\n%s", rep)
			}
			if !slices.Contains(rep.Finding.Shrunk.Kinds(), b.kind) {
				t.Errorf("found by %s (%v), not a perturbation of kind %s\n%s", rep.Finding.Shrunk, rep.Finding.Shrunk.Kinds(), b.kind, rep)
			}
			t.Logf("found after %d runs (%v): %s: %s", rep.Runs, rep.Elapsed.Round(time.Millisecond), rep.Finding.Shrunk, rep.Finding.Failure.Summary())
		})
	}
}

// No fixed version of a corpus controller fails a perturbation of any kind.
func TestCorpusFixedVersionsPass(t *testing.T) {
	for _, b := range corpus {
		t.Run(b.name, func(t *testing.T) {
			cfg := b.config(true, 6, 1)
			cfg.Kinds = nil
			rep := explore.Run(t, cfg)
			t.Logf("%s", rep)
		})
	}
}

// TestCorpusFigures (make explore) searches each bug from -corpus.figures seeds, with its
// kind of perturbation and with every kind, and prints the median runs and wall time to a
// shrunk, replayed report: the figures of bench/README.md.
func TestCorpusFigures(t *testing.T) {
	if *flagFigures <= 0 {
		t.Skip("run with -corpus.figures=5 (make explore)")
	}
	lines := []string{"| bug | kind | runs to find, its kind (median) | time | runs to find, every kind (median) | time | slowest of all |"}
	for _, b := range corpus {
		line := fmt.Sprintf("| %s | %s |", b.name, b.kind)
		var slowest time.Duration
		for _, every := range []bool{false, true} {
			var runs []int
			var took []time.Duration
			for i := range *flagFigures {
				cfg := b.config(false, 200, int64(1+1000*i))
				if every {
					cfg.Kinds = nil
				}
				rep := explore.Find(t, cfg)
				if rep.Finding == nil {
					t.Errorf("%s: not found in %d runs from seed %d (every kind %v)", b.name, rep.Runs, 1+1000*i, every)
					continue
				}
				runs = append(runs, rep.Runs)
				took = append(took, rep.Elapsed)
			}
			if len(runs) == 0 {
				line += " - | - |"
				continue
			}
			sort.Ints(runs)
			slices.Sort(took)
			slowest = max(slowest, took[len(took)-1])
			line += fmt.Sprintf(" %d | %v |", runs[len(runs)/2], took[len(took)/2].Round(10*time.Millisecond))
		}
		lines = append(lines, line+fmt.Sprintf(" %v |", slowest.Round(10*time.Millisecond)))
	}
	t.Logf("corpus figures, %d seeds each:\n%s", *flagFigures, strings.Join(lines, "\n"))
}
