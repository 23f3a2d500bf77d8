package informer

import (
	"reflect"
	"testing"

	"github.com/informerkit/informerkit/internal/testobj"
)

// EstimatedBytes grows with what the objects hold: 20 ConfigMaps of 1 KiB of data each
// are estimated at 20 KiB at least, and at less than twice that (the per-object overhead of
// metadata and map slots stays well under 1 KiB); ObjectType names T.
func TestEstimatedBytesFollowsTheCachedData(t *testing.T) {
	s := newServer(t)
	inf := New[*testobj.ConfigMap](configMaps(newClient(t, s)), fastOptions(t))
	if inf.EstimatedBytes() != 0 {
		t.Fatal("bytes before the first list")
	}
	big := string(make([]byte, 1024))
	for i := range 20 {
		mkCM(t, s, "default", "cm"+string(rune('a'+i)), map[string]string{"k": big})
	}
	start(t, inf)
	wait(t, inf.Synced(), "sync")
	if n := inf.EstimatedBytes(); n < 20*1024 || n > 40*1024 {
		t.Fatalf("estimated %d bytes for 20 ConfigMaps of 1 KiB", n)
	}
	if inf.ObjectType() != reflect.TypeFor[*testobj.ConfigMap]() {
		t.Fatalf("ObjectType %v", inf.ObjectType())
	}
}

// deepSize counts a pointed-to value once, however often it is reached, and follows
// slices, maps and interfaces.
func TestDeepSize(t *testing.T) {
	type node struct {
		Name string
		Next *node
		Tags []string
		Meta map[string]string
		Any  any
	}
	n := &node{Name: "abcd", Tags: []string{"xy"}, Meta: map[string]string{"k": "v"}, Any: "zzz"}
	n.Next = n // a cycle
	got := deepSize(reflect.ValueOf(n), map[uintptr]bool{})
	min := int64(reflect.TypeFor[node]().Size()) + 4 + 16 + 2 + 2 + 16 + 3
	if got < min || got > min+256 {
		t.Fatalf("deepSize %d, want about %d", got, min)
	}
}
