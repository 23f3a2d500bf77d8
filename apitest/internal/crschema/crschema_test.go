package crschema

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

const schemaJSON = `{"type":"object","required":["spec"],"properties":{
 "spec":{"type":"object","required":["name"],"properties":{
  "name":{"type":"string","minLength":1,"maxLength":8,"pattern":"^[a-z]+$"},
  "replicas":{"type":"integer","default":1,"minimum":0,"maximum":10},
  "size":{"type":"number","minimum":0,"exclusiveMinimum":true,"multipleOf":0.5},
  "mode":{"type":"string","default":"Fast","enum":["Fast","Slow"]},
  "tags":{"type":"array","maxItems":3,"minItems":1,"items":{"type":"string"},"x-kubernetes-list-type":"set"},
  "labels":{"type":"object","maxProperties":2,"additionalProperties":{"type":"string"}},
  "inner":{"type":"object","default":{},"properties":{"depth":{"type":"integer","default":3}}},
  "nullable":{"type":"string","nullable":true},
  "port":{"x-kubernetes-int-or-string":true,"anyOf":[{"type":"integer"},{"type":"string"}]},
  "template":{"type":"object","x-kubernetes-embedded-resource":true,"properties":{"spec":{"type":"object","properties":{"keep":{"type":"string"}}}}},
  "free":{"type":"object","x-kubernetes-preserve-unknown-fields":true,"properties":{"n":{"type":"integer","default":7}}}}},
 "status":{"type":"object","properties":{"ready":{"type":"boolean"}}}}}`

func load(t *testing.T, s string) map[string]any {
	t.Helper()
	d := json.NewDecoder(strings.NewReader(s))
	d.UseNumber()
	var m map[string]any
	if err := d.Decode(&m); err != nil {
		t.Fatal(err)
	}
	return m
}

func TestPruneAndDefault(t *testing.T) {
	schema := load(t, schemaJSON)
	obj := load(t, `{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"w","anything":1},"unknown":1,
		"spec":{"name":"a","extra":true,"labels":{"a":"b"},"nullable":null,"mode":null,
		"template":{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"x"},"spec":{"keep":"k","drop":1},"other":2},
		"free":{"anything":{"goes":1}}},"status":{"ready":true,"gone":1}}`)
	pruned := Prune(obj, schema)
	Default(obj, schema)
	if want := []string{"spec.extra", "spec.template.other", "spec.template.spec.drop", "status.gone", "unknown"}; !reflect.DeepEqual(pruned, want) {
		t.Errorf("pruned %q, want %q", pruned, want)
	}
	want := load(t, `{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"w","anything":1},
		"spec":{"name":"a","labels":{"a":"b"},"nullable":null,"mode":"Fast","replicas":1,"inner":{"depth":3},
		"template":{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"x"},"spec":{"keep":"k"}},
		"free":{"anything":{"goes":1},"n":7}},"status":{"ready":true}}`)
	if !reflect.DeepEqual(obj, want) {
		a, _ := json.Marshal(obj)
		b, _ := json.Marshal(want)
		t.Errorf("pruned and defaulted:\n got %s\nwant %s", a, b)
	}
}

func TestValidate(t *testing.T) {
	schema := load(t, schemaJSON)
	for _, c := range []struct{ spec, want string }{
		{`{"name":"a"}`, ""},
		{`{"name":"a","port":80}`, ""},
		{`{"name":"a","port":"http"}`, ""},
		{`{}`, "spec.name: Required value"},
		{`{"name":"a","replicas":11}`, "spec.replicas: Invalid value: 11: spec.replicas in body should be less than or equal to 10"},
		{`{"name":"a","replicas":-1}`, "spec.replicas: Invalid value: -1: spec.replicas in body should be greater than or equal to 0"},
		{`{"name":"a","replicas":"x"}`, `spec.replicas: Invalid value: "string": spec.replicas in body must be of type integer: "string"`},
		{`{"name":"a","size":0}`, "spec.size: Invalid value: 0: spec.size in body should be greater than 0"},
		{`{"name":"a","size":0.7}`, "spec.size: Invalid value: 0.7: spec.size in body should be a multiple of 0.5"},
		{`{"name":""}`, `spec.name: Invalid value: "": spec.name in body should be at least 1 chars long`},
		{`{"name":"abcdefghi"}`, "spec.name: Too long: may not be more than 8 bytes"},
		{`{"name":"A"}`, `spec.name: Invalid value: "A": spec.name in body should match '^[a-z]+$'`},
		{`{"name":"a","mode":"Medium"}`, `spec.mode: Unsupported value: "Medium": supported values: "Fast", "Slow"`},
		{`{"name":"a","tags":["x","y","z","w"]}`, "spec.tags: Too many: 4: must have at most 3 items"},
		{`{"name":"a","tags":[]}`, "spec.tags: Invalid value: []: spec.tags in body should have at least 1 items"},
		{`{"name":"a","tags":["x","x"]}`, `spec.tags[1]: Duplicate value: "x"`},
		{`{"name":"a","labels":{"a":"1","b":"2","c":"3"}}`, "spec.labels: Too many: 3: must have at most 2 items"},
		{`{"name":"a","labels":{"a":1}}`, `spec.labels.a: Invalid value: "integer": spec.labels.a in body must be of type string: "integer"`},
	} {
		obj := load(t, `{"spec":`+c.spec+`}`)
		errs := Validate(obj, schema)
		var got []string
		for _, e := range errs {
			got = append(got, e.Field+": "+e.Message)
		}
		if strings.Join(got, "; ") != c.want {
			t.Errorf("%s: %q, want %q", c.spec, got, c.want)
		}
	}
	if errs := Validate(load(t, `{"metadata":{}}`), schema); len(errs) != 1 || errs[0].Field != "spec" {
		t.Errorf("a missing root field: %+v", errs)
	}
}

// Values written from Go (an int set by Server.Mutate) are numbers too.
func TestGoNumbers(t *testing.T) {
	schema := load(t, schemaJSON)
	obj := map[string]any{"spec": map[string]any{"name": "a", "replicas": 11}}
	if errs := Validate(obj, schema); len(errs) != 1 || !strings.Contains(errs[0].Message, "less than or equal to 10") {
		t.Errorf("%+v", errs)
	}
}
