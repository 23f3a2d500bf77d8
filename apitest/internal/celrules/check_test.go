package celrules

import (
	"strings"
	"testing"
)

func TestCheckRuleShapesAndCompileErrors(t *testing.T) {
	s := decode(t, `{"type":"object","properties":{"spec":{"type":"object","properties":{"a":{"type":"integer"}},
		"x-kubernetes-validations":[
		 {"rule":"self.a >"},
		 {"rule":"self.a"},
		 {"rule":"self.a > 0","messageExpression":"self.a"},
		 {"rule":"self.a > 0","reason":"Bogus"},
		 {"rule":"self.a > 0","fieldPath":".b"},
		 {"rule":"self.a > 0","optionalOldSelf":true}]}}}`)
	errs := Check(s, "spec.versions[0].schema", false)
	var got []string
	for _, e := range errs {
		got = append(got, e.Type+" "+e.Field+": "+e.Message)
	}
	p := "spec.versions[0].schema.openAPIV3Schema.properties[spec].x-kubernetes-validations"
	want := []string{
		`FieldValueNotSupported ` + p + `[3].reason: Unsupported value: "Bogus": supported values: "FieldValueDuplicate", "FieldValueForbidden", "FieldValueInvalid", "FieldValueRequired"`,
		`FieldValueInvalid ` + p + `[4].fieldPath: Invalid value: ".b": must be a valid path`,
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("shape errors (compiling waits for them):\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	// Once the shapes are right, the rules are compiled.
	s = decode(t, `{"type":"object","properties":{"spec":{"type":"object","properties":{"a":{"type":"integer"}},
		"x-kubernetes-validations":[
		 {"rule":"self.a >"},
		 {"rule":"self.a"},
		 {"rule":"self.a > 0","messageExpression":"self.a"},
		 {"rule":"self.a > 0","optionalOldSelf":true}]}}}`)
	got = nil
	for _, e := range Check(s, "spec.versions[0].schema", false) {
		got = append(got, e.Field+": "+e.Message)
	}
	if len(got) != 4 ||
		!strings.HasPrefix(got[0], p+`[0].rule: Invalid value: {"Rule":"self.a \u003e","Message":"","MessageExpression":"","Reason":null,"FieldPath":"","OptionalOldSelf":null}: compilation failed: ERROR: <input>:1:9: Syntax error:`) ||
		got[1] != p+`[1].rule: Invalid value: {"Rule":"self.a","Message":"","MessageExpression":"","Reason":null,"FieldPath":"","OptionalOldSelf":null}: cel expression must evaluate to a bool` ||
		!strings.HasSuffix(got[2], "messageExpression must evaluate to a string") ||
		got[3] != p+`[3].optionalOldSelf: Invalid value: true: may not be set if oldSelf is not used in rule` {
		t.Fatalf("compile errors:\n%s", strings.Join(got, "\n"))
	}
}

func TestCheckCostLimits(t *testing.T) {
	// Quadratic in an unbounded list: over the per-rule limit by more than 100x.
	s := decode(t, `{"type":"object","properties":{"spec":{"type":"object","properties":{
		"items":{"type":"array","items":{"type":"string"}}},
		"x-kubernetes-validations":[{"rule":"self.items.all(a, self.items.all(b, a == b))"}]}}}`)
	errs := Check(s, "spec.versions[0].schema", false)
	if len(errs) == 0 || errs[0].Type != "FieldValueForbidden" ||
		errs[0].Message != "Forbidden: estimated rule cost exceeds budget by factor of more than 100x (try simplifying the rule, or adding maxItems, maxProperties, and maxLength where arrays, maps, and strings are declared)" {
		t.Fatalf("errors = %+v", errs)
	}
	// Unchanged on update: the per-rule limit is not applied (the total still is).
	for _, e := range Check(s, "spec.versions[0].schema", true) {
		if strings.Contains(e.Message, "estimated rule cost exceeds") {
			t.Errorf("per-rule limit applied to an unchanged schema: %v", e)
		}
	}
	// Bounded by maxItems and maxLength: within budget.
	s = decode(t, `{"type":"object","properties":{"spec":{"type":"object","properties":{
		"items":{"type":"array","maxItems":10,"items":{"type":"string","maxLength":10}}},
		"x-kubernetes-validations":[{"rule":"self.items.all(a, self.items.all(b, a == b))"}]}}}`)
	if errs := Check(s, "spec.versions[0].schema", false); len(errs) != 0 {
		t.Fatalf("bounded rule refused: %+v", errs)
	}
}

func TestCheckUncorrelatableOldSelf(t *testing.T) {
	s := decode(t, `{"type":"object","properties":{"spec":{"type":"object","properties":{
		"items":{"type":"array","maxItems":10,"items":{"type":"string","maxLength":10,"x-kubernetes-validations":[{"rule":"self == oldSelf"}]}}}}}}`)
	errs := Check(s, "spec.versions[0].schema", false)
	want := `Invalid value: "self == oldSelf": oldSelf cannot be used on the uncorrelatable portion of the schema within spec.versions[0].schema.openAPIV3Schema.properties[spec].properties[items]`
	if len(errs) != 1 || errs[0].Message != want {
		t.Fatalf("errors = %+v", errs)
	}
}
