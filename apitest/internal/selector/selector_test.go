package selector

import (
	"strings"
	"testing"

	"github.com/informerkit/informerkit/apitest/internal/jsonobj"
)

func TestParseFieldsRefusesUnknownFields(t *testing.T) {
	if _, err := ParseFields("spec.nodeName=a", Labels{Refusal: RefusalNotSupported}); err == nil || err.Error() != "field label not supported: spec.nodeName" {
		t.Errorf("converted kind: got %v", err)
	}
	if _, err := ParseFields("spec.x=a", Labels{Refusal: `field label "{label}" not supported for Job`}); err == nil || err.Error() != `field label "spec.x" not supported for Job` {
		t.Errorf("the refusal's own words: got %v", err)
	}
	_, err := ParseFields("spec.x=a", Labels{Extra: []string{"spec.type"}})
	if err == nil || !strings.Contains(err.Error(), `"spec.x" is not a known field selector: only "metadata.name", "metadata.namespace", "spec.type"`) {
		t.Errorf("other kind: got %v", err)
	}
	if _, err := ParseFields("name", Labels{}); err == nil {
		t.Error("a term without an operator must fail")
	}
}

func TestFieldsMatch(t *testing.T) {
	obj, _ := jsonobj.Decode([]byte(`{"spec":{"nodeName":"n1","replicas":2},"source":{"component":"kubelet"},"status":{"succeeded":1}}`))
	decoded := 0
	object := func() map[string]any { decoded++; return obj }
	for _, c := range []struct {
		sel  string
		want bool
	}{
		{"", true},
		{"metadata.name=a", true},
		{"metadata.name!=a", false},
		{"metadata.namespace==ns,spec.nodeName=n1", true},
		{"spec.nodeName=n2", false},
		{"spec.replicas=2", true},
		{"source=kubelet", true},
		{"status.successful=1", true}, // a label selecting another path (jobs)
		{"status.successful=2", false},
		{`metadata.name=a\,b`, false}, // an escaped comma is part of the value
	} {
		sel, err := ParseFields(c.sel, Labels{Extra: []string{"spec.nodeName", "spec.replicas", "source", "status.successful"}, Paths: map[string]string{"status.successful": "status.succeeded"}})
		if err != nil {
			t.Fatalf("%q: %v", c.sel, err)
		}
		if got := sel.Matches("a", "ns", object); got != c.want {
			t.Errorf("%q: got %v, want %v", c.sel, got, c.want)
		}
	}
	decoded = 0
	sel, _ := ParseFields("metadata.name=a,metadata.namespace=ns", Labels{})
	sel.Matches("a", "ns", object)
	if decoded != 0 {
		t.Error("selecting by name and namespace must not decode the object")
	}
}

func TestLabelSelectors(t *testing.T) {
	sel, _ := jsonobj.Decode([]byte(`{"matchLabels":{"app":"web"},"matchExpressions":[
		{"key":"tier","operator":"In","values":["b","a"]},{"key":"legacy","operator":"DoesNotExist"}]}`))
	if got := FormatLabelSelector(sel); got != "app=web,tier in (a,b),!legacy" {
		t.Errorf("format: %q", got)
	}
	if FormatLabelSelector(nil) != "<none>" || FormatLabelSelector(map[string]any{}) != "<none>" {
		t.Error("an empty selector prints <none>")
	}
	for _, c := range []struct {
		labels map[string]any
		want   bool
	}{
		{map[string]any{"app": "web", "tier": "a"}, true},
		{map[string]any{"app": "web", "tier": "c"}, false},
		{map[string]any{"app": "web"}, false},
		{map[string]any{"app": "web", "tier": "a", "legacy": "y"}, false},
	} {
		if got := LabelSelectorMatches(sel, c.labels); got != c.want {
			t.Errorf("%v: got %v, want %v", c.labels, got, c.want)
		}
	}
}
