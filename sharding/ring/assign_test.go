package ring_test

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/informerkit/informerkit/sharding"
	"github.com/informerkit/informerkit/sharding/ring"
)

func names(prefix string, n int) []string {
	var out []string
	for i := range n {
		out = append(out, fmt.Sprintf("%s-%d", prefix, i))
	}
	return out
}

func mustAssign(t *testing.T, members []string, buckets int) *ring.Assignment {
	t.Helper()
	a, err := ring.Assign(members, buckets)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// owners returns each bucket's owner, read through Owner at the bucket's first hash.
func owners(a *ring.Assignment) []string {
	shift := 64 - uint(len(fmt.Sprintf("%b", a.Buckets()))-1)
	out := make([]string, a.Buckets())
	for b := range out {
		var h uint64
		if shift < 64 {
			h = uint64(b) << shift
		}
		out[b] = a.Owner(h)
	}
	return out
}

func TestAssignPartitionsTheSpace(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, buckets := range []int{1, 2, 16, 256, 4096} {
		for n := 1; n <= 6; n++ {
			a := mustAssign(t, names("replica", n), buckets)
			var total uint64
			full := false
			for _, m := range a.Members() {
				rs := a.Ranges(m)
				for i, r := range rs {
					if r.Empty() {
						t.Fatalf("%d buckets, %s: empty range %v", buckets, m, r)
					}
					if i > 0 && rs[i-1].End >= r.Start && rs[i-1].End != 0 {
						if rs[i-1].End == r.Start {
							t.Fatalf("%s: adjacent ranges %v %v not merged", m, rs[i-1], r)
						}
						t.Fatalf("%s: ranges out of order %v", m, rs)
					}
					sz, f := r.Size()
					full = full || f
					total += sz
				}
			}
			// The sizes add up to 2^64, which wraps to 0 (the full range counts 0 too).
			if total != 0 || (buckets == 1 && !full) {
				t.Fatalf("%d buckets, %d members: ranges cover %#x of 2^64", buckets, n, total)
			}
			// Random hashes: Owner agrees with the ranges, and exactly one member contains h.
			sels := map[string]sharding.Selector{}
			for _, m := range a.Members() {
				if sel, ok := a.Selector(sharding.FieldUID, m); ok {
					sels[m] = sel
				}
			}
			for range 500 {
				h := rng.Uint64()
				var in []string
				for m, sel := range sels {
					if sel.MatchesHash(h) {
						in = append(in, m)
					}
				}
				if len(in) != 1 || in[0] != a.Owner(h) {
					t.Fatalf("%d buckets, %d members: hash %#x in %v, Owner %q", buckets, n, h, in, a.Owner(h))
				}
			}
		}
	}
}

func TestAssignIsDeterministic(t *testing.T) {
	m := names("r", 5)
	a := mustAssign(t, m, 0)
	rev := slices.Clone(m)
	slices.Reverse(rev)
	b := mustAssign(t, append(rev, "r-2"), 0) // order and duplicates do not matter
	if !slices.Equal(owners(a), owners(b)) {
		t.Fatal("the same members in another order give another assignment")
	}
	if a.Buckets() != ring.DefaultBuckets {
		t.Fatalf("default buckets %d", a.Buckets())
	}
	for _, bad := range []int{-1, 3, 100, 1 << 17} {
		if _, err := ring.Assign(m, bad); err == nil {
			t.Errorf("Assign with %d buckets accepted", bad)
		}
	}
	empty := mustAssign(t, nil, 16)
	if empty.Owner(12345) != "" || empty.Ranges("x") != nil {
		t.Error("an empty ring owns something")
	}
	one := mustAssign(t, []string{"solo"}, 0)
	if sel, ok := one.Selector(sharding.FieldUID, "solo"); !ok || len(sel.Ranges) != 1 || sel.Ranges[0] != sharding.FullRange {
		t.Errorf("a ring of one: %v %v", sel, ok)
	}
}

// TestAssignBalance: over many member-name sets, each member's share of the buckets stays
// near 1/N (rendezvous over 256 buckets: a binomial spread, about ±11% at N=4).
func TestAssignBalance(t *testing.T) {
	for n := 2; n <= 8; n++ {
		var worst float64
		for set := range 20 {
			a := mustAssign(t, names(fmt.Sprintf("pod-%d", set), n), 0)
			count := map[string]int{}
			for _, o := range owners(a) {
				count[o]++
			}
			for _, m := range a.Members() {
				dev := float64(count[m])/(256/float64(n)) - 1
				worst = max(worst, dev, -dev)
			}
		}
		// 3.5 standard deviations of the binomial share over 20×N draws.
		limit := 3.5 * sqrtf(float64(n-1)/256)
		if worst > limit {
			t.Errorf("N=%d: worst share deviates %.0f%% from 1/N (limit %.0f%%)", n, 100*worst, 100*limit)
		}
		t.Logf("N=%d: worst deviation from 1/N over 20 name sets: %.0f%%", n, 100*worst)
	}
}

func sqrtf(x float64) float64 {
	z := x
	for range 30 {
		z = (z + x/z) / 2
	}
	return z
}

// TestAssignMovesOnlyWhatMust: a join moves buckets only to the joiner, about 1/(N+1) of
// them; a leave moves only the leaver's buckets.
func TestAssignMovesOnlyWhatMust(t *testing.T) {
	for n := 1; n <= 8; n++ {
		before := mustAssign(t, names("m", n), 0)
		after := mustAssign(t, names("m", n+1), 0)
		joiner := fmt.Sprintf("m-%d", n)
		moved := 0
		for b, o := range owners(before) {
			now := owners(after)[b]
			if now != o {
				if now != joiner {
					t.Fatalf("N=%d join: bucket %d moved from %s to %s, not to the joiner", n, b, o, now)
				}
				moved++
			}
		}
		want := 256.0 / float64(n+1)
		if float64(moved) < 0.5*want || float64(moved) > 1.5*want {
			t.Errorf("N=%d join moved %d buckets, want about %.0f", n, moved, want)
		}
		// The leave is the same pair read backwards: only the leaver's buckets move.
		for b, o := range owners(after) {
			if o != joiner && owners(before)[b] != o {
				t.Fatalf("N=%d leave: bucket %d of %s moved", n+1, b, o)
			}
		}
	}
}
