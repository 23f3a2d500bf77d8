package ring

import (
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"math/bits"
	"slices"
	"strconv"

	"github.com/informerkit/informerkit/sharding"
)

// DefaultBuckets is the number of equal slices of the hash space that Assign deals out.
// With 256, a member of N gets 256/N buckets ± about 11% (N=4), and its selector ORs up
// to about 256/N ranges (a few kB in the query string at N=2).
const DefaultBuckets = 256

// Assignment maps each bucket of the hash space to one member. It is computed by Assign
// from the member names alone, so every replica that sees the same members computes the
// same Assignment.
type Assignment struct {
	shift  uint     // 64 - log2(len(owner)): a hash's bucket is hash >> shift
	owner  []string // bucket -> member ("" when there is no member)
	member []string // sorted members
}

// Assign deals buckets (a power of two from 1 to 65536; 0 means DefaultBuckets) to the
// members by rendezvous hashing: bucket b goes to the member with the highest
// score(member, b). A member's buckets do not depend on the other members except through
// the comparison, so a join takes about 1/(N+1) of the space from the others and a leave
// gives the leaver's buckets to the rest, and nothing else moves.
func Assign(members []string, buckets int) (*Assignment, error) {
	if buckets == 0 {
		buckets = DefaultBuckets
	}
	if buckets < 1 || buckets > 1<<16 || bits.OnesCount(uint(buckets)) != 1 {
		return nil, fmt.Errorf("ring: buckets must be a power of two from 1 to 65536, got %d", buckets)
	}
	ms := slices.Clone(members)
	slices.Sort(ms)
	ms = slices.Compact(ms)
	a := &Assignment{shift: uint(64 - bits.TrailingZeros(uint(buckets))), owner: make([]string, buckets), member: ms}
	if buckets == 1 {
		a.shift = 64
	}
	for b := range a.owner {
		var best uint64
		for i, m := range ms {
			if s := score(m, b); i == 0 || s > best || (s == best && m < a.owner[b]) {
				best, a.owner[b] = s, m
			}
		}
	}
	return a, nil
}

// score is the rendezvous weight of member for bucket: the first 8 bytes of
// SHA-256(member NUL bucket). A cryptographic hash because FNV-1a of names differing
// in their last characters is poorly spread; the cost (256 × N hashes per change of
// membership) is negligible.
func score(member string, bucket int) uint64 {
	buf := make([]byte, 0, len(member)+8)
	buf = append(buf, member...)
	buf = append(buf, 0)
	buf = strconv.AppendInt(buf, int64(bucket), 10)
	sum := sha256.Sum256(buf)
	return binary.BigEndian.Uint64(sum[:8])
}

// Members returns the members, sorted.
func (a *Assignment) Members() []string { return slices.Clone(a.member) }

// Buckets is the number of buckets.
func (a *Assignment) Buckets() int { return len(a.owner) }

// Owner returns the member that owns hash h ("" when there are no members).
func (a *Assignment) Owner(h uint64) string {
	if a.shift >= 64 {
		return a.owner[0]
	}
	return a.owner[h>>a.shift]
}

// Ranges returns the hash ranges member owns, adjacent buckets merged, in order; nil if
// it owns none.
func (a *Assignment) Ranges(member string) []sharding.Range {
	var out []sharding.Range
	for b, m := range a.owner {
		if m != member {
			continue
		}
		start, end := a.bucketRange(b)
		if n := len(out); n > 0 && out[n-1].End == start {
			out[n-1].End = end
			continue
		}
		out = append(out, sharding.Range{Start: start, End: end})
	}
	return out
}

// bucketRange is bucket b's [start, end), end 0 meaning 2^64.
func (a *Assignment) bucketRange(b int) (start, end uint64) {
	if a.shift >= 64 {
		return 0, 0
	}
	return uint64(b) << a.shift, uint64(b+1) << a.shift // the last bucket's end wraps to 0
}

// Selector returns member's ranges on field as a shard selector; ok is false when the
// member owns nothing (a shard selector needs at least one range). A member that owns
// everything gets the one full range.
func (a *Assignment) Selector(field sharding.Field, member string) (sel sharding.Selector, ok bool) {
	r := a.Ranges(member)
	if len(r) == 0 {
		return sharding.Selector{}, false
	}
	return sharding.NewSelector(field, r...), true
}
