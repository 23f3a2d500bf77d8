package sharding_test

import (
	"errors"
	"fmt"
	"hash/fnv"
	"math/big"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/informerkit/informerkit/sharding"
)

func TestHashIsFNV1a64(t *testing.T) {
	for _, v := range []string{"", "default", "kube-system", "0b1d9a58-4bb5-4a5e-9a2f-1d6c2f0c7e11"} {
		h := fnv.New64a()
		h.Write([]byte(v))
		if got, want := sharding.Hash(v), h.Sum64(); got != want {
			t.Errorf("Hash(%q) = %#x, want %#x", v, got, want)
		}
	}
	// The offset basis: the hash of "" (cluster-scoped objects sharded by namespace).
	if got := sharding.Hash(""); got != 0xcbf29ce484222325 {
		t.Errorf("Hash(\"\") = %#x", got)
	}
}

func TestParse(t *testing.T) {
	const half = "0x8000000000000000"
	for _, tc := range []struct {
		in   string
		want sharding.Selector
		norm string
	}{
		{
			in:   "shardRange(object.metadata.uid, '0x0000000000000000', '0x8000000000000000')",
			want: sharding.NewSelector(sharding.FieldUID, sharding.Range{Start: 0, End: 1 << 63}),
		},
		{
			in:   `shardRange(object.metadata.namespace,"0x8000000000000000","0x10000000000000000")`,
			want: sharding.NewSelector(sharding.FieldNamespace, sharding.Range{Start: 1 << 63}),
			norm: "shardRange(object.metadata.namespace, '0x8000000000000000', '0x10000000000000000')",
		},
		{
			in: " ( shardRange( object . metadata . uid ,'0x0000000000000000','" + half + "') ) ||\n" +
				"(shardRange(object.metadata.uid, '0xc000000000000000', '0x10000000000000000') || shardRange(object.metadata.uid, '0x0000000000000000', '0x0000000000000001'))",
			want: sharding.NewSelector(sharding.FieldUID, sharding.Range{End: 1 << 63}, sharding.Range{Start: 0xc000000000000000}, sharding.Range{End: 1}),
			norm: "shardRange(object.metadata.uid, '0x0000000000000000', '0x8000000000000000') || shardRange(object.metadata.uid, '0xc000000000000000', '0x10000000000000000') || shardRange(object.metadata.uid, '0x0000000000000000', '0x0000000000000001')",
		},
	} {
		got, err := sharding.Parse(tc.in)
		if err != nil {
			t.Fatalf("Parse(%q): %v", tc.in, err)
		}
		if diff := cmp.Diff(tc.want, got); diff != "" {
			t.Errorf("Parse(%q) (-want +got):\n%s", tc.in, diff)
		}
		norm := tc.norm
		if norm == "" {
			norm = tc.in
		}
		if got.String() != norm {
			t.Errorf("String() = %q, want %q", got.String(), norm)
		}
	}
}

func TestParseErrors(t *testing.T) {
	ok := "'0x0000000000000000'"
	end := "'0x8000000000000000'"
	for _, tc := range []struct{ in, msg string }{
		{"", "empty shard selector"},
		{"   ", "empty shard selector"},
		{"shardRange(object.metadata.name, " + ok + ", " + end + ")", "unsupported field path \"object.metadata.name\""},
		{"shardRange(metadata.uid, " + ok + ", " + end + ")", "unsupported field path"},
		{"shardRange(object.metadata.uid, '0x0', " + end + ")", "did you mean \"0x0000000000000000\""},
		{"shardRange(object.metadata.uid, " + ok + ", '0x8000000000000000'", "missing ')'"},
		{"shardRange(object.metadata.uid, " + ok + ")", "requires exactly 3 arguments, got 2"},
		{"shardRange(object.metadata.uid)", "requires exactly 3 arguments, got 1"},
		{"shardRange(object.metadata.uid, " + ok + ", " + end + ", f(1, 2), 'x')", "requires exactly 3 arguments, got 5"},
		{"shardRange(object.metadata.uid, " + end + ", " + ok + ")", "must be less than end"},
		{"shardRange(object.metadata.uid, " + end + ", " + end + ")", "must be less than end"},
		{"shardRange(object.metadata.uid, '0x10000000000000000', '0x10000000000000000')", "must be less than end"},
		{"shardRange(object.metadata.uid, '0x11000000000000000', " + end + ")", "17-digit"},
		{"shardRange(object.metadata.uid, '0X0000000000000000', " + end + ")", "'0x' prefix"},
		{"shardRange(object.metadata.uid, '0x000000000000000A', " + end + ")", "invalid hex character"},
		{"shardRange(object.metadata.uid, '0x', " + end + ")", "hex value is required"},
		{"shardRange(object.metadata.uid, '0x000000000000000000', " + end + ")", "too long"},
		{"shardRange(object.metadata.uid, 0, " + end + ")", "must be a string literal"},
		{"shardRange(object.metadata.uid, " + ok + ", " + end + ") && true", `unsupported function "_&&_"`},
		{"shardRange(object.metadata.uid, " + ok + ", " + end + ") + 1", "unexpected"},
		{"shardRange(object.metadata.uid, " + ok + ", " + end + ") || shardRange(object.metadata.namespace, " + ok + ", " + end + ")", "same field"},
		{"labels(object.metadata.uid, " + ok + ", " + end + ")", `unsupported function "labels"`},
		{"object", "unexpected identifier"},
		{"(shardRange(object.metadata.uid, " + ok + ", " + end + ")", "expected ')'"},
		{strings.Repeat("(", 200), "too deeply nested"},
	} {
		_, err := sharding.Parse(tc.in)
		if err == nil || !errors.Is(err, sharding.ErrInvalid) || !strings.Contains(err.Error(), tc.msg) {
			t.Errorf("Parse(%q) = %v, want ErrInvalid with %q", tc.in, err, tc.msg)
		}
	}
}

func TestRange(t *testing.T) {
	r := sharding.Range{Start: 10, End: 20}
	for h, want := range map[uint64]bool{9: false, 10: true, 19: true, 20: false} {
		if r.Contains(h) != want {
			t.Errorf("%v.Contains(%d) = %v", r, h, !want)
		}
	}
	if !sharding.FullRange.Contains(0) || !sharding.FullRange.Contains(^uint64(0)) {
		t.Error("FullRange misses an end of the space")
	}
	if n, full := sharding.FullRange.Size(); n != 0 || !full {
		t.Errorf("FullRange.Size() = %d, %v", n, full)
	}
	if n, _ := (sharding.Range{Start: 1 << 63}).Size(); n != 1<<63 {
		t.Errorf("upper half size %d", n)
	}
	if got := (sharding.Range{Start: 1 << 63}).String(); got != "[0x8000000000000000, 0x10000000000000000)" {
		t.Errorf("String() = %s", got)
	}
	if (sharding.Selector{Field: sharding.FieldUID}).Validate() == nil {
		t.Error("a selector without ranges validates")
	}
	if (sharding.Selector{Field: sharding.FieldUID, Ranges: []sharding.Range{{Start: 5, End: 5}}}).Validate() == nil {
		t.Error("an empty range validates")
	}
}

func TestMatchesObject(t *testing.T) {
	uid, ns := "uid-1", "team-a"
	byUID := sharding.NewSelector(sharding.FieldUID, sharding.Range{Start: sharding.Hash(uid), End: sharding.Hash(uid) + 1})
	if !byUID.MatchesObject(uid, ns) || byUID.MatchesObject("uid-2", ns) {
		t.Error("uid selector")
	}
	byNS := sharding.NewSelector(sharding.FieldNamespace, sharding.Range{Start: sharding.Hash(ns), End: sharding.Hash(ns) + 1})
	if !byNS.MatchesObject("any", ns) || byNS.MatchesObject(uid, "team-b") {
		t.Error("namespace selector")
	}
}

// refMatch is the server's comparison written plainly: the hash as a number, bounds
// as big integers read from their hex text.
func refMatch(value, start, end string) bool {
	h := fnv.New64a()
	h.Write([]byte(value))
	hv := new(big.Int).SetUint64(h.Sum64())
	s, _ := new(big.Int).SetString(start[2:], 16)
	e, _ := new(big.Int).SetString(end[2:], 16)
	return hv.Cmp(s) >= 0 && hv.Cmp(e) < 0
}

func FuzzMatch(f *testing.F) {
	f.Add("default", uint64(0), uint64(1<<63), false)
	f.Add("", uint64(0xcbf29ce484222325), uint64(0), true)
	f.Add("x", uint64(1<<63), uint64(0), true)
	f.Fuzz(func(t *testing.T, value string, start, end uint64, toEnd bool) {
		startHex := fmt.Sprintf("0x%016x", start)
		endHex := fmt.Sprintf("0x%016x", end)
		if toEnd {
			endHex = "0x10000000000000000"
		}
		in := "shardRange(object.metadata.uid, '" + startHex + "', '" + endHex + "')"
		sel, err := sharding.Parse(in)
		if !toEnd && start >= end {
			if err == nil {
				t.Fatalf("Parse(%q) accepted an empty range", in)
			}
			return
		}
		if err != nil {
			t.Fatalf("Parse(%q): %v", in, err)
		}
		if got, want := sel.Matches(value), refMatch(value, startHex, endHex); got != want {
			t.Fatalf("%s Matches(%q) = %v, reference %v", in, value, got, want)
		}
		if sel.String() != in {
			t.Fatalf("String() = %q, want %q", sel.String(), in)
		}
	})
}

func FuzzParse(f *testing.F) {
	f.Add("shardRange(object.metadata.uid, '0x0000000000000000', '0x8000000000000000')")
	f.Add("(shardRange(object.metadata.namespace, \"0x8000000000000000\", '0x10000000000000000')) || shardRange(object.metadata.namespace, '0x0000000000000000', '0x0000000000000010')")
	f.Add("shardRange(object.metadata.uid, '0x0', '0x8')")
	f.Fuzz(func(t *testing.T, in string) {
		sel, err := sharding.Parse(in)
		if err != nil {
			if !errors.Is(err, sharding.ErrInvalid) {
				t.Fatalf("error %v does not wrap ErrInvalid", err)
			}
			return
		}
		if err := sel.Validate(); err != nil {
			t.Fatalf("Parse(%q) returned an invalid selector: %v", in, err)
		}
		again, err := sharding.Parse(sel.String())
		if err != nil {
			t.Fatalf("normal form %q does not parse: %v", sel.String(), err)
		}
		if diff := cmp.Diff(sel, again); diff != "" {
			t.Fatalf("round trip of %q (-first +second):\n%s", in, diff)
		}
	})
}
