package controller

import (
	"testing"

	"github.com/informerkit/informerkit/internal/testobj"
	"github.com/informerkit/informerkit/meta"
)

func objAt(gen int64, rv string, labels, annotations map[string]string) *testobj.ConfigMap {
	return &testobj.ConfigMap{ObjectMeta: meta.ObjectMeta{Name: "x", Generation: gen, ResourceVersion: rv, Labels: labels, Annotations: annotations}}
}

func TestChangePredicates(t *testing.T) {
	base := objAt(1, "10", map[string]string{"a": "1"}, map[string]string{"n": "1"})
	cases := []struct {
		name                       string
		new                        *testobj.ConfigMap
		generation, rv, lbl, annot bool
	}{
		{"resync (same object)", base, false, false, false, false},
		{"status write: new RV only", objAt(1, "11", map[string]string{"a": "1"}, map[string]string{"n": "1"}), false, true, false, false},
		{"spec change", objAt(2, "12", map[string]string{"a": "1"}, map[string]string{"n": "1"}), true, true, false, false},
		{"label change", objAt(1, "13", map[string]string{"a": "2"}, map[string]string{"n": "1"}), false, true, true, false},
		{"label removed", objAt(1, "14", nil, map[string]string{"n": "1"}), false, true, true, false},
		{"annotation change", objAt(1, "15", map[string]string{"a": "1"}, map[string]string{"n": "2"}), false, true, false, true},
	}
	preds := map[string]Predicate[*testobj.ConfigMap]{
		"GenerationChanged":      GenerationChanged[*testobj.ConfigMap](),
		"ResourceVersionChanged": ResourceVersionChanged[*testobj.ConfigMap](),
		"LabelsChanged":          LabelsChanged[*testobj.ConfigMap](),
		"AnnotationsChanged":     AnnotationsChanged[*testobj.ConfigMap](),
	}
	for _, tc := range cases {
		want := map[string]bool{"GenerationChanged": tc.generation, "ResourceVersionChanged": tc.rv, "LabelsChanged": tc.lbl, "AnnotationsChanged": tc.annot}
		for name, p := range preds {
			if got := p.Update(UpdateEvent[*testobj.ConfigMap]{ObjectOld: base, ObjectNew: tc.new}); got != want[name] {
				t.Errorf("%s: %s.Update = %v, want %v", tc.name, name, got, want[name])
			}
		}
	}
	// Every other event passes, and so does an update with a missing object.
	for name, p := range preds {
		if !p.Create(CreateEvent[*testobj.ConfigMap]{Object: base}) || !p.Delete(DeleteEvent[*testobj.ConfigMap]{Object: base}) || !p.Generic(GenericEvent[*testobj.ConfigMap]{Object: base}) {
			t.Errorf("%s dropped a non-update event", name)
		}
		if !p.Update(UpdateEvent[*testobj.ConfigMap]{ObjectNew: base}) {
			t.Errorf("%s dropped an update without an old object", name)
		}
	}
	// nil and empty maps are equal.
	if LabelsChanged[*testobj.ConfigMap]().Update(UpdateEvent[*testobj.ConfigMap]{ObjectOld: objAt(1, "1", nil, nil), ObjectNew: objAt(1, "2", map[string]string{}, nil)}) {
		t.Error("nil → empty labels counted as a change")
	}
}

func TestCombinators(t *testing.T) {
	yes := PredicateFuncs[*testobj.ConfigMap]{}
	no := NewPredicateFuncs(func(*testobj.ConfigMap) bool { return false })
	ev := CreateEvent[*testobj.ConfigMap]{Object: obj("", "x")}
	up := UpdateEvent[*testobj.ConfigMap]{ObjectOld: obj("", "x"), ObjectNew: obj("", "x")}
	del := DeleteEvent[*testobj.ConfigMap]{Object: obj("", "x")}
	gen := GenericEvent[*testobj.ConfigMap]{Object: obj("", "x")}
	check := func(name string, p Predicate[*testobj.ConfigMap], want bool) {
		t.Helper()
		if p.Create(ev) != want || p.Update(up) != want || p.Delete(del) != want || p.Generic(gen) != want {
			t.Errorf("%s: want %v for every event", name, want)
		}
	}
	check("yes", yes, true)
	check("no", no, false)
	check("And()", And[*testobj.ConfigMap](), true)
	check("And(yes, yes)", And(yes, yes), true)
	check("And(yes, no)", And[*testobj.ConfigMap](yes, no), false)
	check("Or()", Or[*testobj.ConfigMap](), false)
	check("Or(no, yes)", Or[*testobj.ConfigMap](no, yes), true)
	check("Or(no, no)", Or(no, no), false)
	check("Not(no)", Not(no), true)
	check("Not(And(yes, Or(no, Not(yes))))", Not[*testobj.ConfigMap](And[*testobj.ConfigMap](yes, Or(no, Not[*testobj.ConfigMap](yes)))), true)

	// NewPredicateFuncs looks at the new object of an update.
	named := NewPredicateFuncs(func(o *testobj.ConfigMap) bool { return o.Name == "keep" })
	if !named.Update(UpdateEvent[*testobj.ConfigMap]{ObjectOld: obj("", "drop"), ObjectNew: obj("", "keep")}) {
		t.Error("NewPredicateFuncs judged the old object of an update")
	}
}
