package ring

import (
	"maps"
	"slices"
	"testing"
	"testing/synctest"
	"time"

	"github.com/informerkit/informerkit/leaderelection"
	"github.com/informerkit/informerkit/meta"
)

// lease is a member Lease as read from the server.
func lease(holder string, renew time.Time, secs int32, claimed string) *leaderelection.Lease {
	return &leaderelection.Lease{
		ObjectMeta: meta.ObjectMeta{Name: "ring-" + holder, Annotations: map[string]string{AnnotationClaimed: claimed}},
		Spec: leaderelection.LeaseSpec{
			HolderIdentity: &holder, LeaseDurationSeconds: &secs, RenewTime: leaderelection.NewMicroTime(renew),
		},
	}
}

// TestObserveJudgesExpiryByLocalObservation: a member stays live while its Lease changes;
// it expires leaseDurationSeconds after the last change this member saw, on this member's
// clock, whatever the Lease's timestamps say; a released Lease is not live; a renewal
// brings the member back.
func TestObserveJudgesExpiryByLocalObservation(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := &Ring{leaseName: "ring-me", view: map[string]*observed{}, opts: Options{LeaseDuration: 15 * time.Second}}
		members := func(ls ...*leaderelection.Lease) []string {
			return slices.Sorted(maps.Keys(r.observe(ls, time.Now())))
		}
		// Timestamps far in the past (a skewed clock) do not matter: the change does.
		skewed := time.Now().Add(-time.Hour)
		a := lease("a", skewed, 10, "0x0000000000000000-0x8000000000000000")
		if got := members(a, lease("me", skewed, 10, "")); !slices.Equal(got, []string{"a"}) {
			t.Fatalf("live %v, want [a] (own Lease left out)", got)
		}
		// Renewed every 2 s: live all along.
		for i := 1; i <= 10; i++ {
			time.Sleep(2 * time.Second)
			a = lease("a", skewed.Add(time.Duration(i)*time.Second), 10, a.Annotations[AnnotationClaimed])
			if got := members(a); !slices.Equal(got, []string{"a"}) {
				t.Fatalf("after renewal %d: live %v", i, got)
			}
		}
		// No change any more: live until 10 s after the last change was first seen.
		time.Sleep(9 * time.Second)
		if got := members(a); !slices.Equal(got, []string{"a"}) {
			t.Fatalf("9 s after the last change: live %v, want [a]", got)
		}
		time.Sleep(time.Second)
		if got := members(a); len(got) != 0 {
			t.Fatalf("10 s after the last change: live %v, want none", got)
		}
		// It renews again: live at once, with its claims.
		a = lease("a", skewed.Add(time.Minute), 10, "0x8000000000000000-0x10000000000000000")
		live := r.observe([]*leaderelection.Lease{a}, time.Now())
		if c := live["a"]; len(c) != 1 || c[0].Start != 1<<63 || c[0].End != 0 {
			t.Fatalf("renewed member's claims %v", live)
		}
		// Released (holder ""): not live, even though it just changed.
		empty := lease("", time.Now(), 1, "")
		empty.Name = a.Name
		if got := members(empty); len(got) != 0 {
			t.Fatalf("released: live %v", got)
		}
		// Deleted: forgotten.
		members()
		if len(r.view) != 0 {
			t.Fatalf("view keeps %v after the Lease is gone", slices.Collect(maps.Keys(r.view)))
		}
	})
}
