package labels

import (
	"strings"
	"testing"
)

func TestParseMatches(t *testing.T) {
	labels := map[string]string{"app": "web", "tier": "front", "example.com/team": "a", "empty": ""}
	for _, tc := range []struct {
		sel  string
		want bool
	}{
		{"", true},
		{"   ", true},
		{"app=web", true},
		{"app==web", true},
		{"app = web", true},
		{"app=db", false},
		{"app!=db", true},
		{"app!=web", false},
		{"missing!=x", true},
		{"app", true},
		{"missing", false},
		{"!missing", true},
		{"!app", false},
		{" ! app", false},
		{"app in (web, db)", true},
		{"app in (db)", false},
		{"app notin (db,cache)", true},
		{"app notin (web)", false},
		{"missing notin (web)", true},
		{"missing in (web)", false},
		{"example.com/team=a", true},
		{"empty=", true},
		{"empty", true},
		{"app=web,tier=front", true},
		{"app=web, tier=back", false},
		{"app in (web),!missing,tier", true},
		{"x in (a,)", false},
	} {
		s, err := Parse(tc.sel)
		if err != nil {
			t.Errorf("Parse(%q): %v", tc.sel, err)
			continue
		}
		if got := s.Matches(labels); got != tc.want {
			t.Errorf("%q.Matches = %v, want %v", tc.sel, got, tc.want)
		}
		// The canonical form parses to the same selector.
		again, err := Parse(s.String())
		if err != nil || again.String() != s.String() {
			t.Errorf("%q: String() = %q does not round-trip (%v)", tc.sel, s.String(), err)
		}
	}
}

func TestParseErrors(t *testing.T) {
	for _, tc := range []struct{ sel, msg string }{
		{"app=web,", "expected a label key"},
		{",app", "expected a label key"},
		{"app in web", "expected \"(\""},
		{"app in ()", "cannot be empty"},
		{"app in (a b)", "expected \",\" or \")\""},
		{"app in (a", "expected \",\" or \")\""},
		{"app>1", "not supported"},
		{"app=web=x", "expected \",\""},
		{"-app=x", "label key"},
		{"Bad_Prefix/app=x", "prefix"},
		{"app=" + strings.Repeat("v", 64), "label value"},
		{"app=a b", "expected \",\""},
		{"!", "expected a label key"},
		{"app (x)", "expected an operator"},
	} {
		_, err := Parse(tc.sel)
		if err == nil || !strings.Contains(err.Error(), tc.msg) {
			t.Errorf("Parse(%q) error = %v, want one containing %q", tc.sel, err, tc.msg)
		}
	}
}

func TestSelectorFromSet(t *testing.T) {
	s := SelectorFromSet(map[string]string{"b": "2", "a": "1"})
	if s.String() != "a=1,b=2" {
		t.Fatalf("String() = %q", s.String())
	}
	if !s.Matches(map[string]string{"a": "1", "b": "2", "c": "3"}) || s.Matches(map[string]string{"a": "1"}) {
		t.Fatal("wrong matches")
	}
	if !Everything().Empty() || !Everything().Matches(nil) {
		t.Fatal("Everything must match everything")
	}
}

func FuzzParse(f *testing.F) {
	for _, s := range []string{"", "a=b", "a in (x,y),!c", "a!=b,c notin (d)", "x.io/y==z"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		s, err := Parse(in)
		if err != nil {
			return
		}
		again, err := Parse(s.String())
		if err != nil {
			t.Fatalf("canonical form %q of %q does not parse: %v", s.String(), in, err)
		}
		if again.String() != s.String() {
			t.Fatalf("canonical form is not stable: %q → %q", s.String(), again.String())
		}
	})
}
