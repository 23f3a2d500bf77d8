package labels

import (
	"errors"
	"reflect"
	"strings"
	"testing"
)

func TestParseMatches(t *testing.T) {
	labels := map[string]string{"app": "web", "tier": "front", "example.com/team": "a", "empty": "", "n": "2"}
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
		{"empty in ()", true},
		{"app in ()", false},
		{"empty in (,)", true},
		{"missing notin ()", true},
		{"n>1", true},
		{"n<2", false},
		{"n<3", true},
		{"n > 1, n < 3", true},
		{"app>1", false},
		{"missing<5", false},
		{"value in (in, notin)", false},
		{"in in (in)", false},
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
		{"app=web,", "found '', expected: identifier after ','"},
		{",app", "found ',', expected: !, identifier, or 'end of string'"},
		{"app in web", "unable to parse requirement: found 'web' expected: '('"},
		{"app in (a b)", "unable to parse requirement: found 'b', expected: ',' or ')'"},
		{"app in (a", "unable to parse requirement: found '', expected: ',' or ')'"},
		{"app>x", "unable to parse requirement: for 'Gt', 'Lt' operators, the value must be an integer"},
		{"app<", "the value must be an integer"},
		{"app=web=x", "found '=', expected: ',' or 'end of string'"},
		{"-app=x", "invalid label key \"-app\""},
		{"Bad_Prefix/app=x", "prefix part must be a DNS subdomain"},
		{"app=" + strings.Repeat("v", 64), "invalid label value"},
		{"app=a b", "found 'b', expected: ',' or 'end of string'"},
		{"!", "unable to parse requirement: found '', expected: identifier"},
		{"app (x)", "found '(', expected: in, notin, =, ==, !=, gt, lt"},
		{"!app=x", "found '=', expected: ',' or 'end of string'"},
		{"app in (a,=)", "found '=', expected: ',', or identifier"},
	} {
		_, err := Parse(tc.sel)
		if err == nil || !strings.Contains(err.Error(), tc.msg) {
			t.Errorf("Parse(%q) error = %v, want one containing %q", tc.sel, err, tc.msg)
		}
		if se := (*SyntaxError)(nil); !errors.As(err, &se) || se.Selector != tc.sel {
			t.Errorf("Parse(%q) error %T is not a *SyntaxError naming the selector", tc.sel, err)
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
	for _, s := range []string{"", "a=b", "a in (x,y),!c", "a!=b,c notin (d)", "x.io/y==z", "n>1,m<2", "a in (,)", "a notin ()"} {
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

// NewRequirement checks what Parse checks; a selector built from requirements prints as the
// one parsed from its String, and Nothing matches nothing.
func TestNewRequirementAndSelector(t *testing.T) {
	for _, c := range []struct {
		key    string
		op     Operator
		values []string
		err    string
	}{
		{"tier", In, nil, "for 'in', 'notin' operators, values set can't be empty"},
		{"tier", Exists, []string{"a"}, "values set must be empty for exists and does not exist"},
		{"tier", Equals, []string{"a", "b"}, "exact-match compatibility requires one single value"},
		{"n", GreaterThan, []string{"x"}, "for 'Gt', 'Lt' operators, the value must be an integer"},
		{"bad key!", Exists, nil, `invalid label key "bad key!"`},
		{"tier", In, []string{"bad value!"}, `invalid label value: "bad value!"`},
		{"tier", "~", nil, "operator '~' is not recognized"},
	} {
		if _, err := NewRequirement(c.key, c.op, c.values); err == nil || !strings.Contains(err.Error(), c.err) {
			t.Errorf("NewRequirement(%q, %q, %q) = %v, want %q", c.key, c.op, c.values, err, c.err)
		}
	}
	in, err := NewRequirement("tier", In, []string{"b", "a", "b"})
	if err != nil {
		t.Fatal(err)
	}
	app, _ := NewRequirement("app", Equals, []string{"web"})
	s := NewSelector(in, app)
	if got := s.String(); got != "app=web,tier in (a,b)" {
		t.Errorf("String = %q", got)
	}
	if !reflect.DeepEqual(s, MustParse(s.String())) {
		t.Errorf("built %#v, parsed %#v", s, MustParse(s.String()))
	}
	if !s.Matches(map[string]string{"app": "web", "tier": "a"}) || s.Matches(map[string]string{"app": "web"}) {
		t.Error("Matches")
	}
	if n := Nothing(); n.Matches(nil) || n.Matches(map[string]string{"a": "b"}) || n.Empty() || n.String() != "" {
		t.Errorf("Nothing %#v", n)
	}
	if !NewSelector().Empty() || !NewSelector().Matches(nil) {
		t.Error("NewSelector() does not select everything")
	}
}
