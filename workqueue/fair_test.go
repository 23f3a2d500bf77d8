package workqueue

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"testing/synctest"
	"time"
)

func TestFairServesNamespacesRoundRobin(t *testing.T) {
	q := New[string](Config{Fairness: FairByNamespace()})
	defer q.ShutDown()
	for i := range 4 {
		q.Add(fmt.Sprintf("a/%d", i))
	}
	q.Add("b/0")
	q.Add("b/1")
	q.Add("cluster-scoped") // namespace ""
	want := []string{"a/0", "b/0", "cluster-scoped", "a/1", "b/1", "a/2", "a/3"}
	if got := drain(t, q); !slices.Equal(got, want) {
		t.Fatalf("order = %v, want %v", got, want)
	}
}

// Namespaces that share their first 16 bytes (what the tenant index compares in place), or
// that are as long, are told apart; "" (no slash, or a leading one) is a tenant too.
func TestFairTellsApartLongNamespaces(t *testing.T) {
	q := New[string](Config{Fairness: FairByNamespace()})
	defer q.ShutDown()
	nss := []string{"abcdefghijklmnop-1", "abcdefghijklmnop-2", "abcdefghijklmnop", "abcdefghijklmno", "abcdefghijklmnopq"}
	for i := range 2 {
		for _, ns := range nss {
			q.Add(fmt.Sprintf("%s/%d", ns, i))
		}
	}
	q.Add("/x")
	q.Add("y")
	var want []string
	for i := range 2 {
		for _, ns := range nss {
			want = append(want, fmt.Sprintf("%s/%d", ns, i))
		}
		if i == 0 {
			want = append(want, "/x")
		}
	}
	want = append(want, "y")
	if got := drain(t, q); !slices.Equal(got, want) {
		t.Fatalf("order = %v, want %v", got, want)
	}
}

func TestFairOneTenantIsFIFO(t *testing.T) {
	q := New[string](Config{Fairness: FairByNamespace()})
	defer q.ShutDown()
	want := []string{"ns/c", "ns/a", "ns/b"}
	for _, k := range want {
		q.Add(k)
	}
	if got := drain(t, q); !slices.Equal(got, want) {
		t.Fatalf("order = %v, want %v", got, want)
	}
}

// nsItem is an item with a GetNamespace method, as FairByNamespace reads.
type nsItem struct{ ns, name string }

func (i nsItem) GetNamespace() string { return i.ns }

func TestFairByNamespaceReadsGetNamespace(t *testing.T) {
	q := New[nsItem](Config{Fairness: FairByNamespace()})
	defer q.ShutDown()
	for _, it := range []nsItem{{"a", "1"}, {"a", "2"}, {"b", "1"}} {
		q.Add(it)
	}
	want := []nsItem{{"a", "1"}, {"b", "1"}, {"a", "2"}}
	if got := drain(t, q); !slices.Equal(got, want) {
		t.Fatalf("order = %v, want %v", got, want)
	}
}

func TestFairByKeyFunction(t *testing.T) {
	type req struct {
		cluster, ns, name string
	}
	q := NewRateLimiting[req](nil, Config{Fairness: FairBy(func(r req) string { return r.cluster })})
	defer q.ShutDown()
	for _, r := range []req{{"east", "a", "1"}, {"east", "b", "1"}, {"west", "a", "1"}} {
		q.Add(r)
	}
	want := []req{{"east", "a", "1"}, {"west", "a", "1"}, {"east", "b", "1"}}
	if got := drain[req](t, q); !slices.Equal(got, want) {
		t.Fatalf("order = %v, want %v", got, want)
	}
}

func TestFairnessOfAnotherTypePanics(t *testing.T) {
	for name, tc := range map[string]struct {
		fairness Fairness
		want     string
	}{
		"FairBy":          {FairBy(func(s string) string { return s }), "made by FairBy for items of type string; this queue's items are int"},
		"FairByNamespace": {FairByNamespace(), "int has neither: use FairBy"},
	} {
		t.Run(name, func(t *testing.T) {
			defer func() {
				if r := recover(); r == nil || !strings.Contains(fmt.Sprint(r), tc.want) {
					t.Fatalf("panic = %v, want one containing %q", r, tc.want)
				}
			}()
			New[int](Config{Fairness: tc.fairness})
		})
	}
}

func TestFairKeepsPrioritiesFirst(t *testing.T) {
	q := New[string](Config{Priorities: true, Fairness: FairByNamespace()})
	defer q.ShutDown()
	q.AddWithPriority("a/low", -100)
	q.AddWithPriority("b/low", -100)
	q.Add("a/0")
	q.Add("a/1")
	q.Add("b/0")
	want := []string{"a/0", "b/0", "a/1", "a/low", "b/low"}
	if got := drain(t, q); !slices.Equal(got, want) {
		t.Fatalf("order = %v, want %v", got, want)
	}
}

func TestFairAddWhileProcessingRequeuesOnDone(t *testing.T) {
	q := New[string](Config{Fairness: FairByNamespace()})
	defer q.ShutDown()
	q.Add("a/0")
	item := getNow(t, q)
	q.Add("a/0") // dirty while processing: not queued
	q.Add("b/0")
	wantLen(t, q, 1)
	q.Done(item)
	wantLen(t, q, 2)
	if got, want := drain(t, q), []string{"b/0", "a/0"}; !slices.Equal(got, want) {
		t.Fatalf("order = %v, want %v", got, want)
	}
}

// TestFairForgetsIdleTenants: a queue that has seen many namespaces come and go keeps a
// bounded table of tenants, and forgets each namespace's key string.
func TestFairForgetsIdleTenants(t *testing.T) {
	q := New[string](Config{Fairness: FairByNamespace()}).(*queue[string])
	defer q.ShutDown()
	q.Add("pinned/0") // keeps the queue from compacting
	for i := range 20 * tenantIdleKeep {
		k := fmt.Sprintf("ns-%d/x", i)
		q.Add(k)
		for q.Len() > 1 {
			item, _ := q.Get()
			q.Done(item)
			if item == "pinned/0" {
				q.Add(item)
			}
		}
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	if n := q.fair.index.used; n > 2*tenantIdleKeep+2 {
		t.Fatalf("%d tenants known after 20k namespaces passed through, want at most %d", n, 2*tenantIdleKeep+2)
	}
	if q.fair.idle > 2*tenantIdleKeep+1 || q.fair.idle < 0 {
		t.Fatalf("idle tenants = %d", q.fair.idle)
	}
}

// TestAgingServesStarvedLowPriority is controller-runtime#3496: a worker kept busy by live
// (priority 0) work never reaches an initial-list item (priority -100) with strict
// priorities; with Aging it is handed out by the second Get after it has waited Aging.
func TestAgingServesStarvedLowPriority(t *testing.T) {
	for _, aging := range []time.Duration{0, time.Second} {
		t.Run(fmt.Sprintf("aging=%v", aging), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				q := New[string](Config{Priorities: true, Aging: aging, Fairness: FairByNamespace()})
				defer q.ShutDown()
				q.AddWithPriority("ns/initial", -100)
				q.Add("ns/live-0")
				served := -1
				for i := range 1000 { // 10 s of reconciles of 10 ms each
					item, _ := q.Get()
					time.Sleep(10 * time.Millisecond)
					q.Done(item)
					if item == "ns/initial" {
						served = i
						break
					}
					q.Add(fmt.Sprintf("ns/live-%d", i+1)) // the live work never ends
				}
				switch {
				case aging == 0 && served >= 0:
					t.Fatalf("strict priorities served the low item at Get %d", served)
				case aging > 0 && (served < 100 || served > 101):
					t.Fatalf("low item served at Get %d, want 100 or 101 (1 s of 10 ms reconciles, then the second Get at most)", served)
				}
			})
		})
	}
}

// TestAgingAlternatesWithLiveWork: while items are aged, every second Get serves them, so
// live work keeps half the Gets.
func TestAgingAlternatesWithLiveWork(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := New[string](Config{Priorities: true, Aging: time.Second})
		defer q.ShutDown()
		for i := range 3 {
			q.AddWithPriority(fmt.Sprintf("low-%d", i), -1)
		}
		time.Sleep(time.Second)
		for i := range 4 {
			q.Add(fmt.Sprintf("live-%d", i))
		}
		want := []string{"low-0", "live-0", "low-1", "live-1", "low-2", "live-2", "live-3"}
		if got := drain(t, q); !slices.Equal(got, want) {
			t.Fatalf("order = %v, want %v", got, want)
		}
	})
}

func TestAgingIgnoredWithoutPriorities(t *testing.T) {
	q := New[string](Config{Aging: time.Nanosecond}).(*queue[string])
	defer q.ShutDown()
	if q.aging != 0 {
		t.Fatalf("aging = %d without Priorities", q.aging)
	}
	q.AddWithPriority("b", -1)
	q.Add("a")
	if got, want := drain(t, q), []string{"b", "a"}; !slices.Equal(got, want) {
		t.Fatalf("order = %v, want %v", got, want)
	}
}

func TestFairQueueReleasesTablesWhenIdle(t *testing.T) {
	q := New[string](Config{Priorities: true, Aging: time.Hour, Fairness: FairByNamespace()}).(*queue[string])
	defer q.ShutDown()
	for i := range 2 * compactAbove {
		q.AddWithPriority(fmt.Sprintf("ns-%d/x-%d", i%50, i), i%3)
	}
	drain(t, q)
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.slab != nil || q.fair.tenants != nil || q.fair.index.used != 0 || q.enqueuedAt != nil {
		t.Fatalf("idle queue kept its tables: %d entries, %d tenants", len(q.slab), len(q.fair.tenants))
	}
}
