package meta_test

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/informerkit/informerkit/meta"
)

// The messages are the kube-apiserver's (e2e's TestLabelSelectorErrorsMatchTheServer
// compares them with its answer to a Deployment of each selector).
func TestLabelSelectorValidate(t *testing.T) {
	for _, c := range []struct {
		sel  meta.LabelSelector
		want string
	}{
		{meta.LabelSelector{MatchExpressions: []meta.LabelSelectorRequirement{{Key: "tier", Operator: meta.LabelSelectorOpIn}}},
			"spec.selector.matchExpressions[0].values: Required value: must be specified when `operator` is 'In' or 'NotIn'"},
		{meta.LabelSelector{MatchExpressions: []meta.LabelSelectorRequirement{{Key: "tier", Operator: meta.LabelSelectorOpExists, Values: []string{"a"}}}},
			"spec.selector.matchExpressions[0].values: Forbidden: may not be specified when `operator` is 'Exists' or 'DoesNotExist'"},
		{meta.LabelSelector{MatchExpressions: []meta.LabelSelectorRequirement{{Key: "tier", Operator: "Gt", Values: []string{"1"}}}},
			`spec.selector.matchExpressions[0].operator: Invalid value: "Gt": not a valid selector operator`},
		{meta.LabelSelector{MatchLabels: map[string]string{"bad key": "v"}},
			`spec.selector.matchLabels: Invalid value: "bad key": name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')`},
		{meta.LabelSelector{MatchLabels: map[string]string{"Example.com/k": "v"}},
			`spec.selector.matchLabels: Invalid value: "Example.com/k": prefix part a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')`},
		{meta.LabelSelector{MatchExpressions: []meta.LabelSelectorRequirement{{Key: "tier", Operator: meta.LabelSelectorOpIn, Values: []string{"ok", "not ok"}}}},
			`spec.selector.matchExpressions[0].values[1]: Invalid value: "not ok": a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')`},
		{meta.LabelSelector{MatchExpressions: []meta.LabelSelectorRequirement{{Key: "", Operator: meta.LabelSelectorOpNotIn}}},
			"[spec.selector.matchExpressions[0].values: Required value: must be specified when `operator` is 'In' or 'NotIn', " +
				`spec.selector.matchExpressions[0].key: Invalid value: "": name part must be non-empty, ` +
				`spec.selector.matchExpressions[0].key: Invalid value: "": name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')]`},
		{meta.LabelSelector{MatchLabels: map[string]string{"a/b/c": strings.Repeat("v", 64)}},
			`[spec.selector.matchLabels: Invalid value: "a/b/c": a valid label key must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]') with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName'), ` +
				`spec.selector.matchLabels: Invalid value: "` + strings.Repeat("v", 64) + `": must be no more than 63 bytes]`},
	} {
		err := c.sel.Validate("spec.selector")
		var fe meta.FieldErrors
		if !errors.As(err, &fe) || err.Error() != c.want {
			t.Errorf("Validate(%+v) =\n %v\nwant\n %s", c.sel, err, c.want)
		}
		if _, err := c.sel.AsSelector(); err == nil {
			t.Errorf("AsSelector(%+v) accepted an invalid selector", c.sel)
		}
	}
	valid := meta.LabelSelector{MatchLabels: map[string]string{"app": "web", "example.com/team": ""},
		MatchExpressions: []meta.LabelSelectorRequirement{{Key: "tier", Operator: meta.LabelSelectorOpNotIn, Values: []string{"b", "a"}}, {Key: "old", Operator: meta.LabelSelectorOpDoesNotExist}}}
	if err := valid.Validate("spec.selector"); err != nil {
		t.Fatalf("valid selector: %v", err)
	}
	sel, err := valid.AsSelector()
	if err != nil || sel.String() != "app=web,example.com/team=,!old,tier notin (a,b)" {
		t.Fatalf("AsSelector = %q, %v", sel.String(), err)
	}
	if !valid.Matches(map[string]string{"app": "web", "example.com/team": "", "tier": "c"}) || valid.Matches(map[string]string{"app": "web", "example.com/team": "", "tier": "a"}) {
		t.Error("Matches")
	}
	var none *meta.LabelSelector
	if none.Matches(map[string]string{}) || !(&meta.LabelSelector{}).Matches(map[string]string{"x": "y"}) {
		t.Error("a nil selector must select nothing and an empty one everything")
	}
	causes := c0Causes(t)
	if causes[0].Type != "FieldValueRequired" || causes[0].Field != "spec.selector.matchExpressions[0].values" ||
		causes[0].Message != "Required value: must be specified when `operator` is 'In' or 'NotIn'" {
		t.Errorf("causes %+v", causes)
	}
}

func c0Causes(t *testing.T) []meta.StatusCause {
	t.Helper()
	sel := meta.LabelSelector{MatchExpressions: []meta.LabelSelectorRequirement{{Key: "tier", Operator: meta.LabelSelectorOpIn}}}
	var fe meta.FieldErrors
	if !errors.As(sel.Validate("spec.selector"), &fe) {
		t.Fatal("no FieldErrors")
	}
	return fe.Causes()
}

func TestDurationAndIntOrStringJSON(t *testing.T) {
	var v struct {
		Grace meta.Duration     `json:"grace"`
		Max   meta.IntOrString  `json:"max"`
		Port  meta.IntOrString  `json:"port"`
		Opt   *meta.IntOrString `json:"opt,omitempty"`
	}
	if err := json.Unmarshal([]byte(`{"grace":"1m30s","max":"25%","port":8080}`), &v); err != nil {
		t.Fatal(err)
	}
	if v.Grace.Duration != 90*time.Second || v.Max != meta.IntOrStringFromString("25%") || v.Port != meta.IntOrStringFromInt(8080) || v.Opt != nil {
		t.Fatalf("decoded %+v", v)
	}
	b, err := json.Marshal(v)
	if err != nil || string(b) != `{"grace":"1m30s","max":"25%","port":8080}` {
		t.Fatalf("encoded %s, %v", b, err)
	}
	for _, bad := range []string{`{"grace":"90"}`, `{"grace":90}`, `{"max":1.5}`, `{"max":4294967296}`, `{"max":true}`} {
		if err := json.Unmarshal([]byte(bad), &v); err == nil {
			t.Errorf("%s decoded", bad)
		}
	}
}

func TestIntOrStringScaledValue(t *testing.T) {
	for _, c := range []struct {
		v       meta.IntOrString
		total   int
		roundUp bool
		want    int
		err     string
	}{
		{meta.IntOrStringFromInt(3), 10, false, 3, ""},
		{meta.IntOrStringFromString("25%"), 10, false, 2, ""},
		{meta.IntOrStringFromString("25%"), 10, true, 3, ""},
		{meta.IntOrStringFromString("100%"), 7, true, 7, ""},
		{meta.IntOrStringFromString("3"), 10, true, 0, "invalid value for IntOrString: invalid type: string is not a percentage"},
		{meta.IntOrStringFromString("x%"), 10, true, 0, `invalid value "x%": strconv.Atoi: parsing "x": invalid syntax`},
	} {
		got, err := c.v.ScaledValue(c.total, c.roundUp)
		if got != c.want || (err == nil) != (c.err == "") || (err != nil && err.Error() != c.err) {
			t.Errorf("%v.ScaledValue(%d, %v) = %d, %v; want %d, %q", c.v, c.total, c.roundUp, got, err, c.want, c.err)
		}
	}
	var nilV *meta.IntOrString
	if _, err := nilV.ScaledValue(1, true); err == nil {
		t.Error("nil IntOrString scaled")
	}
}
