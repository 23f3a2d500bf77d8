package ring

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/informerkit/informerkit/apiclient"
	"github.com/informerkit/informerkit/leaderelection"
	"github.com/informerkit/informerkit/meta"
	"github.com/informerkit/informerkit/sharding"
)

// Run is the member's life: it joins the ring (holds its Lease), keeps its held ranges in
// line with the assignment, and on the end of ctx drains everything and releases its Lease.
// A member that loses its Lease (it could not renew) drops all ranges and joins again.
// Run returns when ctx is done.
func (r *Ring) Run(ctx context.Context) error {
	for ctx.Err() == nil {
		e, err := r.elector()
		if err != nil {
			return err
		}
		if err := e.Run(ctx); err != nil && ctx.Err() == nil {
			r.log.Warn("lost the member lease; joining again", "err", err)
		}
	}
	return nil
}

// member runs while this replica holds its Lease.
func (r *Ring) member(ctx context.Context) {
	defer func() {
		// Leaving (or lost): everything goes, drained before the Lease is released.
		r.setHeld(make([]bool, r.buckets), context.WithoutCancel(ctx))
		r.mu.Lock()
		r.members = nil
		r.mu.Unlock()
	}()
	// A member that joins again may have left a claim from its previous life.
	for ctx.Err() == nil {
		if err := r.publish(ctx, make([]bool, r.buckets)); err == nil {
			break
		}
		if !sleep(ctx, r.opts.RetryPeriod) {
			return
		}
	}
	for {
		if err := r.step(ctx); err != nil && ctx.Err() == nil {
			r.log.Debug("ring step failed", "err", err)
		}
		if !sleep(ctx, r.opts.RetryPeriod) {
			return
		}
	}
}

func sleep(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}

// read lists the ring's Leases (a quorum read) and updates the view; it returns the live
// members other than this one with their claims.
func (r *Ring) read(ctx context.Context) (map[string][]sharding.Range, error) {
	l, err := r.leases.List(ctx, apiclient.ListOptions{LabelSelector: LabelRing + "=" + r.name})
	if err != nil {
		return nil, err
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.observe(l.Items, time.Now()), nil
}

// observe updates the view with the ring's Leases as read at now and returns the live
// members other than this one with their claims. A member is live while its holder is set
// and its Lease record has changed within its leaseDurationSeconds, measured on this
// member's clock from when it first saw that record (as leader election judges a leader).
// r.mu held.
func (r *Ring) observe(leases []*leaderelection.Lease, now time.Time) map[string][]sharding.Range {
	seen := map[string]bool{}
	live := map[string][]sharding.Range{}
	for _, lease := range leases {
		seen[lease.Name] = true
		if lease.Name == r.leaseName {
			continue
		}
		rec := leaseRecord(lease)
		o := r.view[lease.Name]
		if o == nil || o.renew != rec {
			o = &observed{renew: rec, at: now}
			r.view[lease.Name] = o
		}
		o.holder = lease.Spec.Holder()
		o.dur = lease.Spec.Duration()
		if o.dur <= 0 {
			o.dur = r.opts.LeaseDuration
		}
		o.claimed = ParseClaimed(lease.Annotations[AnnotationClaimed])
		if o.holder != "" && now.Before(o.at.Add(o.dur)) {
			live[o.holder] = append(live[o.holder], o.claimed...)
		}
	}
	for name := range r.view {
		if !seen[name] {
			delete(r.view, name)
		}
	}
	return live
}

func leaseRecord(l *leaderelection.Lease) string {
	var b strings.Builder
	b.WriteString(l.Spec.Holder())
	if l.Spec.RenewTime != nil {
		b.WriteString("|" + l.Spec.RenewTime.Format(time.RFC3339Nano))
	}
	if l.Spec.AcquireTime != nil {
		b.WriteString("|" + l.Spec.AcquireTime.Format(time.RFC3339Nano))
	}
	b.WriteString("|" + strconv.Itoa(int(l.Spec.Transitions())))
	return b.String()
}

// step moves the held ranges one step towards this member's share of the assignment.
func (r *Ring) step(ctx context.Context) error {
	live, err := r.read(ctx)
	if err != nil {
		return err
	}
	members := []string{r.identity}
	for m := range live {
		members = append(members, m)
	}
	a, err := Assign(members, r.buckets)
	if err != nil {
		return err
	}
	r.mu.Lock()
	r.members = a.Members()
	held := slices.Clone(r.held)
	r.mu.Unlock()

	target := make([]bool, r.buckets)
	for b := range target {
		start := r.bucketRange(b).Start
		target[b] = a.Owner(start) == r.identity
	}
	// Losses first: stop taking them, drain, then say so.
	kept := make([]bool, r.buckets)
	lost := false
	for b := range held {
		kept[b] = held[b] && target[b]
		lost = lost || (held[b] && !target[b])
	}
	if lost {
		if err := r.setHeld(kept, ctx); err != nil {
			return err
		}
		if err := r.publish(ctx, kept); err != nil {
			return err
		}
	}
	// Gains: claim, then read again; a bucket claimed by a live member meanwhile is not taken.
	claim := slices.Clone(kept)
	gain := false
	for b := range target {
		if target[b] && !kept[b] && !claimedByOthers(r, live, b) {
			claim[b], gain = true, true
		}
	}
	if !gain {
		return nil
	}
	if err := r.publish(ctx, claim); err != nil {
		return err
	}
	live, err = r.read(ctx)
	if err != nil {
		// Unknown whether someone claimed meanwhile: keep the claim unused; the next step
		// retracts or confirms it.
		return err
	}
	granted := slices.Clone(kept)
	retract := false
	for b := range claim {
		if !claim[b] || kept[b] {
			continue
		}
		if claimedByOthers(r, live, b) {
			retract = true
			continue
		}
		granted[b] = true
	}
	if retract {
		if err := r.publish(ctx, granted); err != nil {
			return err
		}
	}
	return r.setHeld(granted, ctx)
}

func claimedByOthers(r *Ring, live map[string][]sharding.Range, b int) bool {
	br := r.bucketRange(b)
	for _, ranges := range live {
		for _, c := range ranges {
			if overlaps(c, br) {
				return true
			}
		}
	}
	return false
}

// overlaps reports whether two non-empty ranges share a hash.
func overlaps(a, b sharding.Range) bool {
	// a.Start < b.End && b.Start < a.End, with End 0 meaning 2^64.
	less := func(x, end uint64) bool { return end == 0 || x < end }
	return less(a.Start, b.End) && less(b.Start, a.End)
}

// setHeld replaces the held set. Buckets given up are drained before it returns.
func (r *Ring) setHeld(next []bool, ctx context.Context) error {
	r.mu.Lock()
	var lost []sharding.Range
	lostSet := make([]bool, len(next))
	changed := false
	for b := range next {
		if r.held[b] && !next[b] {
			lost = append(lost, r.bucketRange(b))
			lostSet[b] = true
		}
		changed = changed || r.held[b] != next[b]
	}
	r.held = slices.Clone(next)
	if changed {
		close(r.changed)
		r.changed = make(chan struct{})
	}
	sel, ok := sharding.Selector{}, false
	if hs := r.rangesOf(r.held); len(hs) > 0 {
		sel, ok = sharding.NewSelector(r.opts.Field, hs...), true
	}
	r.mu.Unlock()
	if changed && r.opts.OnChange != nil {
		r.opts.OnChange(sel, ok)
	}
	if len(lost) == 0 {
		return nil
	}
	if err := r.waitWork(ctx, lostSet); err != nil {
		return err
	}
	if r.opts.Drain != nil {
		return r.opts.Drain(ctx, lost)
	}
	return nil
}

// publish writes the claimed set on this member's Lease (retrying on conflicts with the
// elector's renewals).
func (r *Ring) publish(ctx context.Context, claim []bool) error {
	val := formatClaimed(r.rangesOf(claim))
	for attempt := 0; ; attempt++ {
		lease, err := r.leases.Get(ctx, r.leaseName, apiclient.GetOptions{})
		if err != nil {
			return err
		}
		if lease.Spec.Holder() != r.identity {
			return fmt.Errorf("ring: member lease %s is held by %q", r.leaseName, lease.Spec.Holder())
		}
		if cur, ok := lease.Annotations[AnnotationClaimed]; ok && cur == val {
			return nil
		}
		if lease.Annotations == nil {
			lease.Annotations = map[string]string{}
		}
		lease.Annotations[AnnotationClaimed] = val
		_, err = r.leases.Update(ctx, lease, apiclient.UpdateOptions{})
		if err == nil {
			return nil
		}
		if !meta.IsConflict(err) || attempt >= 5 {
			return err
		}
	}
}

func formatClaimed(rs []sharding.Range) string {
	parts := make([]string, len(rs))
	for i, x := range rs {
		end := "0x10000000000000000"
		if x.End != 0 {
			end = fmt.Sprintf("0x%016x", x.End)
		}
		parts[i] = fmt.Sprintf("0x%016x-%s", x.Start, end)
	}
	return strings.Join(parts, ",")
}

// ParseClaimed reads the value of AnnotationClaimed. A value it cannot read claims
// everything: a member never starts a range it cannot prove free.
func ParseClaimed(s string) []sharding.Range {
	if s == "" {
		return nil
	}
	var out []sharding.Range
	for _, p := range strings.Split(s, ",") {
		a, b, ok := strings.Cut(p, "-")
		if !ok || !strings.HasPrefix(a, "0x") || !strings.HasPrefix(b, "0x") {
			return []sharding.Range{sharding.FullRange}
		}
		start, err1 := strconv.ParseUint(a[2:], 16, 64)
		var end uint64
		var err2 error
		if b != "0x10000000000000000" {
			end, err2 = strconv.ParseUint(b[2:], 16, 64)
		}
		if err1 != nil || err2 != nil {
			return []sharding.Range{sharding.FullRange}
		}
		out = append(out, sharding.Range{Start: start, End: end})
	}
	return out
}
