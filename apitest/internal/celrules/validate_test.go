package celrules

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/informerkit/informerkit/apitest/internal/apierr"
)

func decode(t *testing.T, s string) map[string]any {
	t.Helper()
	d := json.NewDecoder(strings.NewReader(s))
	d.UseNumber()
	var m map[string]any
	if err := d.Decode(&m); err != nil {
		t.Fatalf("%v in %s", err, s)
	}
	return m
}

// widgetSchema has rules on every level: the root, an object, a scalar, list items, map
// values, an int-or-string, a transition rule and an optional-oldSelf one.
const widgetSchema = `{"type":"object",
 "x-kubernetes-validations":[{"rule":"self.metadata.name.startsWith('w-')","message":"name must start with w-"}],
 "properties":{
  "spec":{"type":"object",
   "x-kubernetes-validations":[
    {"rule":"self.min <= self.max","messageExpression":"'min ' + string(self.min) + ' is above max ' + string(self.max)"},
    {"rule":"!has(self.forbidden)","reason":"FieldValueForbidden","fieldPath":".forbidden","message":"must not be set"},
    {"rule":"self.mode == oldSelf.mode","message":"mode is immutable"},
    {"rule":"oldSelf.hasValue() || self.min >= 0","optionalOldSelf":true,"message":"min starts non-negative"}],
   "properties":{
    "min":{"type":"integer"},"max":{"type":"integer"},"mode":{"type":"string"},"forbidden":{"type":"string"},
    "name":{"type":"string","maxLength":16,"x-kubernetes-validations":[{"rule":"self == self.lowerAscii()"}]},
    "ports":{"type":"array","items":{"type":"object","properties":{"port":{"type":"integer"}},
      "x-kubernetes-validations":[{"rule":"self.port > 0","message":"port must be positive","reason":"FieldValueRequired"}]}},
    "labels":{"type":"object","additionalProperties":{"type":"string","x-kubernetes-validations":[{"rule":"size(self) <= 3"}]}},
    "size":{"x-kubernetes-int-or-string":true,"x-kubernetes-validations":[{"rule":"type(self) == int ? self < 10 : self.endsWith('%')"}]},
    "tags":{"type":"array","items":{"type":"string"},"x-kubernetes-list-type":"set",
      "x-kubernetes-validations":[{"rule":"self.isSorted()","message":"tags must be sorted"}]}}}}}`

type want struct{ typ, field, msg string }

func check(t *testing.T, got []apierr.FieldError, wants ...want) {
	t.Helper()
	if len(got) != len(wants) {
		t.Fatalf("got %d errors, want %d: %+v", len(got), len(wants), got)
	}
	for i, w := range wants {
		g := got[i]
		if g.Type != w.typ || g.Field != w.field || g.Message != w.msg {
			t.Errorf("error %d:\n got %s %s: %s\nwant %s %s: %s", i, g.Type, g.Field, g.Message, w.typ, w.field, w.msg)
		}
	}
}

func TestValidateCreate(t *testing.T) {
	v := New(decode(t, widgetSchema))
	ctx := context.Background()
	ok := decode(t, `{"apiVersion":"x/v1","kind":"W","metadata":{"name":"w-1"},"spec":{"min":1,"max":2,"mode":"a",
		"name":"abc","ports":[{"port":1}],"labels":{"a":"xyz"},"size":"5%","tags":["a","b"]}}`)
	if errs, warns := v.Validate(ctx, ok, nil); len(errs) != 0 || len(warns) != 0 {
		t.Fatalf("valid object refused: %+v %v", errs, warns)
	}
	bad := decode(t, `{"apiVersion":"x/v1","kind":"W","metadata":{"name":"x-1"},"spec":{"min":3,"max":2,"mode":"a",
		"forbidden":"x","name":"ABC","ports":[{"port":1},{"port":0}],"labels":{"a":"long"},"size":11,"tags":["b","a"]}}`)
	errs, _ := v.Validate(ctx, bad, nil)
	check(t, errs,
		want{"FieldValueInvalid", "<nil>", "Invalid value: name must start with w-"},
		want{"FieldValueInvalid", "spec", "Invalid value: min 3 is above max 2"},
		want{"FieldValueForbidden", "spec.forbidden", "Forbidden: must not be set"},
		want{"FieldValueInvalid", "spec.labels[a]", `Invalid value: "long": failed rule: size(self) <= 3`},
		want{"FieldValueInvalid", "spec.name", `Invalid value: "ABC": failed rule: self == self.lowerAscii()`},
		want{"FieldValueRequired", "spec.ports[1]", "Required value: port must be positive"},
		want{"FieldValueInvalid", "spec.size", "Invalid value: 11: failed rule: type(self) == int ? self < 10 : self.endsWith('%')"},
		want{"FieldValueInvalid", "spec.tags", "Invalid value: tags must be sorted"},
	)
}

func TestValidateTransitionRulesAndRatcheting(t *testing.T) {
	v := New(decode(t, widgetSchema))
	ctx := context.Background()
	// Created before the rule on name existed: invalid name, negative min.
	old := decode(t, `{"apiVersion":"x/v1","kind":"W","metadata":{"name":"x-1"},"spec":{"min":-1,"max":2,"mode":"a","name":"ABC"}}`)
	// The update changes mode (a transition rule fails) and keeps name and min as they were.
	upd := decode(t, `{"apiVersion":"x/v1","kind":"W","metadata":{"name":"x-1"},"spec":{"min":-1,"max":2,"mode":"b","name":"ABC"}}`)
	errs, warns := v.Validate(ctx, upd, old)
	check(t, errs,
		want{"FieldValueInvalid", "<nil>", "Invalid value: name must start with w-"},
		want{"FieldValueInvalid", "spec", "Invalid value: mode is immutable"})
	// The unchanged name is ratcheted into a warning; the root changed (spec.mode), so its
	// rule on metadata.name still fails.
	if len(warns) != 1 || warns[0] != `spec.name: Invalid value: "ABC": failed rule: self == self.lowerAscii()` {
		t.Errorf("warnings = %q", warns)
	}
	// On create, the optional-oldSelf rule runs without an old value; the transition rule does not.
	errs, _ = v.Validate(ctx, old, nil)
	check(t, errs,
		want{"FieldValueInvalid", "<nil>", "Invalid value: name must start with w-"},
		want{"FieldValueInvalid", "spec", "Invalid value: min starts non-negative"},
		want{"FieldValueInvalid", "spec.name", `Invalid value: "ABC": failed rule: self == self.lowerAscii()`},
	)
}

func TestValidateRuntimeErrors(t *testing.T) {
	s := decode(t, `{"type":"object","properties":{"spec":{"type":"object","properties":{
		"items":{"type":"array","items":{"type":"integer"}},
		"m":{"type":"object","additionalProperties":{"type":"integer"}}},
		"x-kubernetes-validations":[{"rule":"self.m['missing'] > 0"},{"rule":"self.items[5] > 0","message":"fifth"}]}}}`)
	v := New(s)
	errs, _ := v.Validate(context.Background(), decode(t, `{"spec":{"items":[1],"m":{}}}`), nil)
	check(t, errs,
		want{"FieldValueInvalid", "spec", `Invalid value: "object": no such key: missing evaluating rule: self.m['missing'] > 0`},
		want{"FieldValueInvalid", "spec", `Invalid value: "object": index out of bounds: 5 evaluating rule: fifth`},
	)
}

func TestValidateCostLimit(t *testing.T) {
	// One call whose runtime cost exceeds the per-call limit: find on a 200 kB string with
	// a 200-character pattern costs (1 + 200000) * 0.1 * 200 * 0.25 > 1000000.
	pattern := strings.Repeat("[a-z]", 40)
	s := decode(t, `{"type":"object","properties":{"spec":{"type":"object","properties":{"s":{"type":"string"}},
		"x-kubernetes-validations":[{"rule":"self.s.find('`+pattern+`') != 'x'"},{"rule":"self.s.size() > 0"}]}}}`)
	errs, _ := New(s).Validate(context.Background(), map[string]any{"spec": map[string]any{"s": strings.Repeat("x", 200_000)}}, nil)
	want := "Invalid value: \"object\": 'operation cancelled: actual cost limit exceeded': no further validation rules will be run due to call cost exceeds limit for rule: self.s.find('" + pattern + "') != 'x'"
	if len(errs) != 1 || errs[0].Message != want {
		t.Fatalf("errors = %+v", errs)
	}
}

func mustDecode(s string) map[string]any {
	d := json.NewDecoder(strings.NewReader(s))
	d.UseNumber()
	var m map[string]any
	if err := d.Decode(&m); err != nil {
		panic(err)
	}
	return m
}
