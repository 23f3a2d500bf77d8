package fieldpath

import (
	"encoding/json"
	"sort"
	"strings"
	"testing"
)

// realPod is the fieldsV1 a kube-apiserver v1.36.3 wrote for an apply of a pod with
// labels, finalizers, container ports (one UDP) and tolerations: list-map keys sorted by
// value (53 < 80 < 443), set values, "." for items.
const realPod = `{"f:metadata":{"f:finalizers":{"v:\"a.io/b\"":{},"v:\"z.io/a\"":{}},"f:labels":{"f:a":{},"f:a.b/c":{},"f:b":{}}},"f:spec":{"f:containers":{"k:{\"name\":\"c\"}":{".":{},"f:args":{},"f:image":{},"f:name":{},"f:ports":{"k:{\"containerPort\":53,\"protocol\":\"UDP\"}":{".":{},"f:containerPort":{},"f:protocol":{}},"k:{\"containerPort\":80,\"protocol\":\"TCP\"}":{".":{},"f:containerPort":{}},"k:{\"containerPort\":443,\"protocol\":\"TCP\"}":{".":{},"f:containerPort":{}}}}},"f:tolerations":{}}}`

func TestFieldsV1RoundTripsTheServersBytes(t *testing.T) {
	s, err := FromFieldsV1([]byte(realPod))
	if err != nil {
		t.Fatal(err)
	}
	if got := string(s.FieldsV1()); got != realPod {
		t.Fatalf("FieldsV1:\n got %s\nwant %s", got, realPod)
	}
	port := KeyOf(KeyField{"containerPort", json.Number("80")}, KeyField{"protocol", "TCP"})
	p := MakePath("spec", "containers", KeyOf(KeyField{"name", "c"}), "ports", port, "containerPort")
	if !s.Has(p) {
		t.Errorf("the set lacks %s", p)
	}
	if s.Has(MakePath("spec", "containers")) {
		t.Errorf("spec.containers is not a member, only implied by its items")
	}
	if !s.Has(MakePath("spec", "containers", KeyOf(KeyField{"name", "c"}))) {
		t.Errorf(`the item [name="c"] is a member (".")`)
	}
	if got, want := p.String(), `.spec.containers[name="c"].ports[containerPort=80,protocol="TCP"].containerPort`; got != want {
		t.Errorf("String: %s, want %s", got, want)
	}
	if got, want := s.Size(), 17; got != want {
		t.Errorf("Size %d, want %d", got, want)
	}
}

func TestFieldsV1Escapes(t *testing.T) {
	s := NewSet(MakePath("data", `a"b<c>`), MakePath("list", ValueOf("x&y")))
	// The value is JSON inside a JSON key: its escape is escaped again, as jsoniter's
	// HTML-escaping writer does on the kube-apiserver.
	want := `{"f:data":{"f:a\"b\u003cc\u003e":{}},"f:list":{"v:\"x\\u0026y\"":{}}}`
	if got := string(s.FieldsV1()); got != want {
		t.Fatalf("got %s, want %s", got, want)
	}
	back, err := FromFieldsV1([]byte(want))
	if err != nil || !back.Equal(s) {
		t.Fatalf("round trip: %v %v", back, err)
	}
}

func TestFromFieldsV1Errors(t *testing.T) {
	for _, in := range []string{`[]`, `{"f:a":1}`, `{"k:x":{}}`, `{"i:x":{}}`, `{"v:":{}}`, `{"x":{}}`, `{`} {
		if _, err := FromFieldsV1([]byte(in)); err == nil {
			t.Errorf("FromFieldsV1(%s): no error", in)
		}
	}
	// Unknown element types are skipped, as by the kube-apiserver.
	s, err := FromFieldsV1([]byte(`{"f:a":{},"z:b":{}}`))
	if err != nil || !s.Equal(NewSet(MakePath("a"))) {
		t.Errorf("unknown element type: %v %v", s, err)
	}
	if s, err := FromFieldsV1([]byte(`null`)); err != nil || !s.Empty() {
		t.Errorf("null: %v %v", s, err)
	}
}

func TestElementOrder(t *testing.T) {
	els := []PathElement{
		IndexOf(2), ValueOf("b"), ValueOf(json.Number("10")), ValueOf(true), Field("b"),
		KeyOf(KeyField{"name", "a"}), Field("a"), ValueOf(2.5), IndexOf(0), ValueOf(nil),
	}
	sort.Slice(els, func(i, j int) bool { return els[i].Compare(els[j]) < 0 })
	var got []string
	for _, e := range els {
		got = append(got, e.String())
	}
	want := `.a .b [name="a"] [=2.5] [=10] [="b"] [=true] [=null] [0] [2]`
	if strings.Join(got, " ") != want {
		t.Fatalf("order %s, want %s", strings.Join(got, " "), want)
	}
}

func TestSetOperations(t *testing.T) {
	a := NewSet(MakePath("spec", "replicas"), MakePath("spec", "template"), MakePath("spec", "template", "x"), MakePath("metadata", "labels", "a"))
	b := NewSet(MakePath("spec"), MakePath("spec", "replicas"), MakePath("metadata", "labels", "b"))
	check := func(name string, s *Set, want ...Path) {
		t.Helper()
		if !s.Equal(NewSet(want...)) {
			t.Errorf("%s: got\n%swant\n%s", name, s, NewSet(want...))
		}
	}
	check("union", a.Union(b), MakePath("spec"), MakePath("spec", "replicas"), MakePath("spec", "template"), MakePath("spec", "template", "x"), MakePath("metadata", "labels", "a"), MakePath("metadata", "labels", "b"))
	check("intersection", a.Intersection(b), MakePath("spec", "replicas"))
	check("difference", a.Difference(b), MakePath("spec", "template"), MakePath("spec", "template", "x"), MakePath("metadata", "labels", "a"))
	check("recursive difference", a.RecursiveDifference(b), MakePath("metadata", "labels", "a"))
	check("with prefix", a.WithPrefix(Field("spec")), MakePath("replicas"), MakePath("template"), MakePath("template", "x"))
	if !a.Difference(a).Empty() || a.Empty() || (&Set{}).Size() != 0 {
		t.Error("Empty/Size")
	}
	// Iterate: the members of a level before the paths under its children.
	var got []string
	a.Iterate(func(p Path) { got = append(got, p.String()) })
	if want := ".metadata.labels.a .spec.replicas .spec.template .spec.template.x"; strings.Join(got, " ") != want {
		t.Errorf("Iterate: %s, want %s", strings.Join(got, " "), want)
	}
	c := a.Copy()
	c.Insert(MakePath("new"))
	if a.Has(MakePath("new")) {
		t.Error("Copy shares with the original")
	}
}

func TestNormalize(t *testing.T) {
	for _, c := range []struct {
		in   any
		want any
	}{
		{json.Number("3"), int64(3)}, {json.Number("3.0"), int64(3)}, {json.Number("3.5"), 3.5}, {3.0, int64(3)},
		{7, int64(7)}, {"s", "s"}, {[]any{json.Number("1")}, []any{int64(1)}},
	} {
		got := Normalize(c.in)
		gb, _ := json.Marshal(got)
		wb, _ := json.Marshal(c.want)
		if string(gb) != string(wb) || CompareValues(got, c.want) != 0 {
			t.Errorf("Normalize(%#v) = %#v, want %#v", c.in, got, c.want)
		}
	}
}
