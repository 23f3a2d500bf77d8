package e2e

import (
	"errors"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/informerkit/informerkit/e2e/cluster"
	"github.com/informerkit/informerkit/meta"
)

// meta.LabelSelector.Validate words its errors as kube-apiserver v1.36.3 does: each error it
// gives for a Deployment's spec.selector is one of the causes of the server's 422 for that
// Deployment, field and message alike.
func TestLabelSelectorErrorsMatchTheServer(t *testing.T) {
	c := cluster.ForTest(t)
	ns := newNamespace(t, c)
	req := func(key string, op meta.LabelSelectorOperator, values ...string) []meta.LabelSelectorRequirement {
		return []meta.LabelSelectorRequirement{{Key: key, Operator: op, Values: values}}
	}
	for i, sel := range []meta.LabelSelector{
		{MatchLabels: map[string]string{"app": "x"}, MatchExpressions: req("tier", meta.LabelSelectorOpIn)},
		{MatchLabels: map[string]string{"app": "x"}, MatchExpressions: req("tier", meta.LabelSelectorOpExists, "a")},
		{MatchLabels: map[string]string{"app": "x"}, MatchExpressions: req("tier", "Gt", "1")},
		{MatchLabels: map[string]string{"app": "x", "bad key": "v"}},
		{MatchLabels: map[string]string{"app": "x", "Example.com/k": "v"}},
		{MatchLabels: map[string]string{"app": "x", "a/b/c": "v"}},
		{MatchLabels: map[string]string{"app": "x"}, MatchExpressions: req("tier", meta.LabelSelectorOpIn, "ok", "not ok", strings.Repeat("v", 64))},
		{MatchLabels: map[string]string{"app": "x"}, MatchExpressions: req("", meta.LabelSelectorOpNotIn)},
		{MatchLabels: map[string]string{"app": "x", strings.Repeat("k", 64): "v"}},
		{MatchLabels: map[string]string{"app": "x", strings.Repeat("p", 254) + "/k": "v"}},
		{MatchLabels: map[string]string{"app": "x", "/k": "v", "p/": "v"}},
	} {
		var fe meta.FieldErrors
		if !errors.As(sel.Validate("spec.selector"), &fe) {
			t.Fatalf("case %d: Validate found nothing wrong", i)
		}
		var status meta.Status
		do(t, c, http.MethodPost, "/apis/apps/v1/namespaces/"+ns+"/deployments", map[string]any{
			"apiVersion": "apps/v1", "kind": "Deployment", "metadata": map[string]any{"name": "d"},
			"spec": map[string]any{"selector": sel, "template": map[string]any{
				"metadata": map[string]any{"labels": map[string]string{"app": "x"}},
				"spec":     map[string]any{"containers": []any{map[string]any{"name": "c", "image": "registry.k8s.io/pause:3.10"}}},
			}},
		}, http.StatusUnprocessableEntity, &status)
		if status.Details == nil {
			t.Fatalf("case %d: no details in %+v", i, status)
		}
		for _, want := range fe.Causes() {
			if !slices.Contains(status.Details.Causes, want) {
				t.Errorf("case %d: the server's causes lack %+v:\n%+v", i, want, status.Details.Causes)
			}
		}
	}
}
