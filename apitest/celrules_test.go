package apitest_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/informerkit/informerkit/apitest"
)

// CEL validation rules (x-kubernetes-validations) through HTTP: the answers e2e's
// TestCELRulesFidelity compares with the kube-apiserver's.

const (
	ruleCRDs = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions"
	rulesURL = "/apis/rules.example.com/v1/namespaces/default/ruled"
)

func ruleCRD(rules string) string {
	return `{"apiVersion":"apiextensions.k8s.io/v1","kind":"CustomResourceDefinition","metadata":{"name":"ruled.rules.example.com"},
"spec":{"group":"rules.example.com","scope":"Namespaced","names":{"kind":"Ruled","plural":"ruled"},"versions":[{"name":"v1","served":true,"storage":true,
"subresources":{"status":{}},
"schema":{"openAPIV3Schema":{"type":"object","properties":{
 "spec":{"type":"object","x-kubernetes-validations":` + rules + `,"properties":{
  "replicas":{"type":"integer"},"max":{"type":"integer"},"mode":{"type":"string","maxLength":10},
  "name":{"type":"string","maxLength":20,"x-kubernetes-validations":[{"rule":"self.startsWith('r-')","message":"must start with r-"}]}}},
 "status":{"type":"object","properties":{"ready":{"type":"integer"}},
  "x-kubernetes-validations":[{"rule":"self.ready >= 0","reason":"FieldValueForbidden","message":"ready is negative"}]}}}}}]}}`
}

const ruleSet = `[{"rule":"self.replicas <= self.max","messageExpression":"'replicas over max in mode ' + self.mode"},
 {"rule":"self.mode == oldSelf.mode","message":"mode is immutable"}]`

type statusBody struct {
	Code    int
	Reason  string
	Message string
	Details struct {
		Causes []struct{ Reason, Message, Field string }
	}
}

func causes(t *testing.T, body string) (int, []string) {
	t.Helper()
	var st statusBody
	if err := json.Unmarshal([]byte(body), &st); err != nil {
		t.Fatalf("%v: %s", err, body)
	}
	var out []string
	for _, c := range st.Details.Causes {
		out = append(out, c.Reason+" "+c.Field+": "+c.Message)
	}
	return st.Code, out
}

func ruled(name, spec string) string {
	return `{"apiVersion":"rules.example.com/v1","kind":"Ruled","metadata":{"name":"` + name + `"},"spec":` + spec + `}`
}

func TestCELRulesOnWrites(t *testing.T) {
	s := apitest.NewServer()
	defer s.Close()
	c := s.Client()
	defer c.CloseIdleConnections()
	if code, _, body := httpDo(t, s, c, "POST", ruleCRDs, ruleCRD(ruleSet), ""); code != 201 {
		t.Fatalf("CRD: %d %s", code, body)
	}
	if code, _, body := httpDo(t, s, c, "POST", rulesURL, ruled("ok", `{"replicas":1,"max":2,"mode":"a","name":"r-1"}`), ""); code != 201 {
		t.Fatalf("valid object: %d %s", code, body)
	}
	code, _, body := httpDo(t, s, c, "POST", rulesURL, ruled("bad", `{"replicas":3,"max":2,"mode":"a","name":"x"}`), "")
	got, list := causes(t, body)
	want := []string{`FieldValueInvalid spec: Invalid value: replicas over max in mode a`, `FieldValueInvalid spec.name: Invalid value: "x": must start with r-`}
	if code != 422 || got != 422 || strings.Join(list, "\n") != strings.Join(want, "\n") ||
		!strings.Contains(body, `Ruled.rules.example.com \"bad\" is invalid: [spec: Invalid value: replicas over max in mode a, spec.name: Invalid value: \"x\": must start with r-]`) {
		t.Fatalf("invalid object: %d %s", code, body)
	}

	// An update: the transition rule compares with the stored object.
	code, _, body = httpDo(t, s, c, "PATCH", rulesURL+"/ok", `{"spec":{"mode":"b"}}`, "application/merge-patch+json")
	if _, list := causes(t, body); code != 422 || len(list) != 1 || list[0] != "FieldValueInvalid spec: Invalid value: mode is immutable" {
		t.Fatalf("transition rule: %d %s", code, body)
	}
	// /status: the status rules run, with the reason they give.
	code, _, body = httpDo(t, s, c, "PATCH", rulesURL+"/ok/status", `{"status":{"ready":-1}}`, "application/merge-patch+json")
	if _, list := causes(t, body); code != 422 || len(list) != 1 || list[0] != "FieldValueForbidden status: Forbidden: ready is negative" {
		t.Fatalf("status rule: %d %s", code, body)
	}
	// A blocking schema error: the rules do not run, and the answer says so.
	code, _, body = httpDo(t, s, c, "POST", rulesURL, ruled("typed", `{"replicas":"many","max":2,"mode":"a"}`), "")
	if _, list := causes(t, body); code != 422 || len(list) != 2 ||
		list[1] != "FieldValueInvalid <nil>: Invalid value: null: some validation rules were not checked because the object was invalid; correct the existing errors to complete validation" {
		t.Fatalf("blocking error: %d %s", code, body)
	}
}

func TestCELRulesRatchetUnchangedValues(t *testing.T) {
	s := apitest.NewServer()
	defer s.Close()
	c := s.Client()
	defer c.CloseIdleConnections()
	// Stored before the rule on name: the CRD starts without it.
	loose := strings.Replace(ruleCRD(`[]`), `,"x-kubernetes-validations":[{"rule":"self.startsWith('r-')","message":"must start with r-"}]`, "", 1)
	if code, _, body := httpDo(t, s, c, "POST", ruleCRDs, loose, ""); code != 201 {
		t.Fatalf("CRD: %d %s", code, body)
	}
	if code, _, body := httpDo(t, s, c, "POST", rulesURL, ruled("old", `{"replicas":1,"max":2,"mode":"a","name":"x"}`), ""); code != 201 {
		t.Fatalf("create: %d %s", code, body)
	}
	code, _, body := httpDo(t, s, c, "GET", ruleCRDs+"/ruled.rules.example.com", "", "")
	if code != 200 {
		t.Fatal(body)
	}
	tightened := strings.Replace(body, `"name":{"maxLength":20,"type":"string"}`,
		`"name":{"maxLength":20,"type":"string","x-kubernetes-validations":[{"rule":"self.startsWith('r-')","message":"must start with r-"}]}`, 1)
	if code, _, body := httpDo(t, s, c, "PUT", ruleCRDs+"/ruled.rules.example.com", tightened, ""); code != 200 || !strings.Contains(body, "must start with r-") {
		t.Fatalf("tighten: %d %s", code, body)
	}
	req, _ := http.NewRequest("PATCH", s.URL+rulesURL+"/old", strings.NewReader(`{"spec":{"replicas":2}}`))
	req.Header.Set("Content-Type", "application/merge-patch+json")
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 || resp.Header.Get("Warning") != `299 - "spec.name: Invalid value: \"x\": must start with r-"` {
		t.Fatalf("update keeping an invalid name: %s, Warning %q", resp.Status, resp.Header.Get("Warning"))
	}
	code, _, body = httpDo(t, s, c, "PATCH", rulesURL+"/old", `{"spec":{"name":"y"}}`, "application/merge-patch+json")
	if _, list := causes(t, body); code != 422 || len(list) != 1 || list[0] != `FieldValueInvalid spec.name: Invalid value: "y": must start with r-` {
		t.Fatalf("changed invalid name: %d %s", code, body)
	}
}

func TestCELRulesCheckedWithTheCRD(t *testing.T) {
	s := apitest.NewServer()
	defer s.Close()
	c := s.Client()
	defer c.CloseIdleConnections()
	code, _, body := httpDo(t, s, c, "POST", ruleCRDs, ruleCRD(`[{"rule":"self.replicas <"},{"rule":"self.nope > 1"}]`), "")
	_, list := causes(t, body)
	p := "spec.validation.openAPIV3Schema.properties[spec].x-kubernetes-validations"
	if code != 422 || len(list) != 2 || !strings.HasPrefix(list[0], "FieldValueInvalid "+p+`[0].rule: Invalid value: {"Rule":"self.replicas \u003c"`) ||
		!strings.Contains(list[1], "undefined field 'nope'") {
		t.Fatalf("rules that do not compile: %d %s", code, body)
	}
	if err := s.AddCRD([]byte(ruleCRD(`[{"rule":"self.replicas <"}]`))); err == nil || !strings.Contains(err.Error(), "compilation failed") {
		t.Fatalf("AddCRD: %v", err)
	}
}
