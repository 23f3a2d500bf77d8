package deepcopy

import (
	"encoding/json"
	"math/rand/v2"
	"reflect"
	"testing"
	"time"

	"github.com/informerkit/informerkit/meta"
)

func TestCopyZooRandom(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range 2000 {
		data := make([]byte, rng.IntN(600))
		for j := range data {
			data[j] = byte(rng.Uint32())
		}
		z := newZoo(data)
		if err := checkCopy(z, Copy(z)); err != nil {
			t.Fatalf("input %d: %v", i, err)
		}
		// The value type too, not only the pointer.
		if err := checkCopy(*z, Copy(*z)); err != nil {
			t.Fatalf("input %d (value): %v", i, err)
		}
	}
}

func TestCopyKeepsNilAndEmpty(t *testing.T) {
	z := zoo{S: []leaf{}, M: map[string]string{}, Bytes: []byte{}, Raw: json.RawMessage{}, SP: nil, MS: nil}
	c := Copy(z)
	if c.S == nil || len(c.S) != 0 || c.M == nil || c.Bytes == nil || c.Raw == nil {
		t.Errorf("empty non-nil became nil: %#v", c)
	}
	if c.SP != nil || c.MS != nil || c.P != nil || c.Any != nil || c.Iface != nil {
		t.Errorf("nil became non-nil: %#v", c)
	}
	var nilPtr *zoo
	if Copy(nilPtr) != nil {
		t.Error("Copy of a nil pointer is not nil")
	}
}

func TestCopyDetachesEveryLevel(t *testing.T) {
	s := "x"
	l := &leaf{A: "a", B: []int{1, 2}, C: map[string]int{"k": 1}}
	del := meta.NewTime(time.Unix(1700000000, 0))
	orig := &zoo{
		P: l, PP: &l, SP: []*leaf{l}, SS: [][]string{{"a"}},
		Raw: json.RawMessage(`{"a":1}`), Bytes: []byte("bytes"),
		M: map[string]string{"a": "b"}, MN: named{"n": "m"}, MS: map[string]*leaf{"l": l}, MI: map[int][]int{1: {1}},
		MV:    map[leafKey]leaf{{1, "y"}: {B: []int{3}}},
		Any:   map[string]any{"spec": map[string]any{"list": []any{"a", 1.0, map[string]any{"deep": true}}}},
		Iface: stringer{S: &s},
		Meta: meta.ObjectMeta{Labels: map[string]string{"l": "1"}, DeletionTimestamp: &del,
			OwnerReferences: []meta.OwnerReference{{Name: "o", Controller: new(bool)}}, Finalizers: []string{"f"}},
		Un:       &meta.Unstructured{Object: map[string]any{"metadata": map[string]any{"name": "u"}}},
		Tree:     &node{V: 1, Kids: []*node{{V: 2, Kids: []*node{{V: 3}}}}, Tags: map[string]*node{"t": {V: 4}}},
		Embedded: Embedded{E: []string{"e"}, EP: new(int)},
		priv:     []int{7},
		privM:    map[string][]byte{"b": []byte("v")},
	}
	keep := Copy(orig)
	c := Copy(orig)

	// Scribble over everything the copy can reach.
	c.P.A, c.P.B[0], c.P.C["k"] = "changed", 99, 99
	(*c.PP).B[1] = 98
	c.SP[0].C["new"] = 1
	c.SS[0][0] = "z"
	c.Raw[0], c.Bytes[0] = '[', 'B'
	c.M["a"], c.MN["n"] = "z", "z"
	c.MS["l"].A = "z"
	c.MI[1][0] = 9
	c.MV[leafKey{1, "y"}].B[0] = 9
	c.Any.(map[string]any)["spec"].(map[string]any)["list"].([]any)[2].(map[string]any)["deep"] = false
	*c.Iface.(stringer).S = "changed"
	c.Meta.Labels["l"] = "2"
	c.Meta.DeletionTimestamp.Time = time.Unix(0, 0)
	*c.Meta.OwnerReferences[0].Controller = true
	c.Meta.Finalizers[0] = "g"
	c.Un.Object["metadata"].(map[string]any)["name"] = "v"
	c.Tree.Kids[0].Kids[0].V = 30
	c.Tree.Tags["t"].V = 40
	c.E[0], *c.EP = "z", 5
	c.priv[0] = 8
	c.privM["b"][0] = 'w'

	if !reflect.DeepEqual(orig, keep) {
		t.Fatalf("changing the copy changed the original:\n got %#v\nwant %#v", orig, keep)
	}
	if err := checkCopy(orig, keep); err != nil {
		t.Fatal(err)
	}
}

func TestCopyInterfaceTypeParameter(t *testing.T) {
	var obj meta.Object = &meta.ObjectMeta{Name: "a", Labels: map[string]string{"x": "y"}}
	c := Copy(obj)
	c.(*meta.ObjectMeta).Labels["x"] = "z"
	if obj.GetLabels()["x"] != "y" {
		t.Fatal("Copy of an interface value shares its dynamic value")
	}
	var empty meta.Object
	if Copy(empty) != nil {
		t.Fatal("Copy of a nil interface is not nil")
	}
}

func TestCopyPlainTypes(t *testing.T) {
	type plain struct {
		A int
		B string
		C [4]float64
		T time.Time
	}
	p := plain{A: 1, B: "b", C: [4]float64{1, 2}, T: time.Now()}
	if Copy(p) != p {
		t.Fatal("plain struct copy differs")
	}
	if copierOf(reflect.TypeFor[plain]()).fixup != nil {
		t.Fatal("a struct without references should need no fixup")
	}
	if Copy(42) != 42 || Copy("s") != "s" {
		t.Fatal("scalars")
	}
	var dst plain
	Into(&dst, p)
	if dst != p {
		t.Fatal("Into")
	}
}

func TestCopyConcurrentFirstUse(t *testing.T) {
	type fresh struct {
		M map[string][]*int
	}
	done := make(chan error)
	for range 8 {
		go func() {
			one := 1
			v := fresh{M: map[string][]*int{"a": {&one}}}
			done <- checkCopy(v, Copy(v))
		}()
	}
	for range 8 {
		if err := <-done; err != nil {
			t.Error(err)
		}
	}
}

func FuzzCopy(f *testing.F) {
	f.Add([]byte{})
	f.Add([]byte{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16})
	f.Fuzz(func(t *testing.T, data []byte) {
		z := newZoo(data)
		if err := checkCopy(z, Copy(z)); err != nil {
			t.Fatal(err)
		}
	})
}

// The checker itself must catch sharing, or the tests above prove nothing.
func TestCheckCopyCatchesSharing(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	caught := 0
	for range 200 {
		data := make([]byte, 300)
		for j := range data {
			data[j] = byte(rng.Uint32())
		}
		z := newZoo(data)
		shallow := *z
		if checkCopy(*z, shallow) != nil {
			caught++
		}
	}
	if caught < 190 {
		t.Fatalf("a shallow copy passed the check in %d of 200 cases", 200-caught)
	}
}
