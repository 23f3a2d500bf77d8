package apitest_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/informerkit/informerkit/apitest"
)

const widgetCRD = `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: widgets.example.com}
spec:
  group: example.com
  scope: Namespaced
  names: {kind: Widget, plural: widgets}
  versions:
  - {name: v1, served: true, storage: true, subresources: {status: {}}}
`

func review(t *testing.T, rc *rawClient, attrs string) bool {
	t.Helper()
	resp, b := rc.do("POST", "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews", "", "application/json",
		[]byte(`{"apiVersion":"authorization.k8s.io/v1","kind":"SelfSubjectAccessReview","spec":{"resourceAttributes":`+attrs+`}}`))
	if resp.StatusCode != http.StatusCreated {
		t.Fatalf("review %s: %d %s", attrs, resp.StatusCode, b)
	}
	m := decodeMap(t, b)
	st := m["status"].(map[string]any)
	mf, _ := m["metadata"].(map[string]any)["managedFields"].([]any)
	if len(mf) != 1 || mf[0].(map[string]any)["operation"] != "Update" {
		t.Errorf("review %s: managedFields %v, want the create's, as the kube-apiserver answers", attrs, mf)
	}
	if _, hasReason := st["reason"]; hasReason != (st["allowed"] == true) {
		t.Errorf("review %s: status %v: a reason when allowed, none when denied (as RBAC)", attrs, st)
	}
	return st["allowed"] == true
}

// Deny refuses requests with the kube-apiserver's 403 and says so in access reviews;
// everything else stays allowed, and allow lifts it.
func TestDeny(t *testing.T) {
	rc := newRaw(t)
	if err := rc.s.AddCRD([]byte(widgetCRD)); err != nil {
		t.Fatal(err)
	}
	allowList, err := rc.s.Deny(apitest.AccessRule{Verb: apitest.VerbList, Resource: "pods"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := rc.s.Deny(apitest.AccessRule{Verb: apitest.VerbUpdate, Resource: "widgets.example.com/status", Namespace: "team"}); err != nil {
		t.Fatal(err)
	}
	resp, b := rc.do("GET", "/api/v1/pods", "", "", nil)
	want := `pods is forbidden: User \"apitest\" cannot list resource \"pods\" in API group \"\" at the cluster scope`
	if resp.StatusCode != http.StatusForbidden || !strings.Contains(string(b), want) || !strings.Contains(string(b), `"reason":"Forbidden"`) {
		t.Errorf("list pods: %d %s", resp.StatusCode, b)
	}
	resp, b = rc.do("PUT", "/apis/example.com/v1/namespaces/team/widgets/w/status", "", "application/json", []byte(`{}`))
	want = `widgets.example.com \"w\" is forbidden: User \"apitest\" cannot update resource \"widgets/status\" in API group \"example.com\" in the namespace \"team\"`
	if resp.StatusCode != http.StatusForbidden || !strings.Contains(string(b), want) {
		t.Errorf("update widget status: %d %s", resp.StatusCode, b)
	}
	for _, c := range []struct {
		attrs string
		want  bool
	}{
		{`{"verb":"list","resource":"pods"}`, false},
		{`{"verb":"list","resource":"pods","namespace":"default"}`, false},
		{`{"verb":"get","resource":"pods"}`, true},
		{`{"verb":"list","resource":"pods","subresource":"status"}`, false}, // the resource covers its subresources
		{`{"verb":"update","group":"example.com","resource":"widgets","subresource":"status","namespace":"team"}`, false},
		{`{"verb":"update","group":"example.com","resource":"widgets","subresource":"status","namespace":"other"}`, true},
		{`{"verb":"update","group":"example.com","resource":"widgets","namespace":"team"}`, true},
		{`{"verb":"list","group":"not.served","resource":"things"}`, true},
	} {
		if got := review(t, rc, c.attrs); got != c.want {
			t.Errorf("review %s: allowed %v, want %v", c.attrs, got, c.want)
		}
	}
	allowList()
	if resp, b := rc.do("GET", "/api/v1/pods", "", "", nil); resp.StatusCode != http.StatusOK {
		t.Errorf("list pods once allowed: %d %s", resp.StatusCode, b)
	}
	if !review(t, rc, `{"verb":"list","resource":"pods"}`) {
		t.Error("review of list pods once allowed: denied")
	}
	if _, err := rc.s.Deny(apitest.AccessRule{Resource: "pods/nosuch"}); err == nil {
		t.Error("Deny of a subresource pods lack: accepted")
	}
}

// Without Deny rules the client is an administrator: the kube-apiserver allows a member of
// system:masters everything, without a reason.
func TestAccessReviewOfAnAdministratorHasNoReason(t *testing.T) {
	rc := newRaw(t)
	resp, b := rc.do("POST", "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews", "", "application/json",
		[]byte(`{"apiVersion":"authorization.k8s.io/v1","kind":"SelfSubjectAccessReview","spec":{"resourceAttributes":{"verb":"list","resource":"pods"}}}`))
	if resp.StatusCode != http.StatusCreated {
		t.Fatalf("review: %d %s", resp.StatusCode, b)
	}
	if st := decodeMap(t, b)["status"].(map[string]any); st["allowed"] != true || st["reason"] != nil {
		t.Errorf("status %v, want allowed without a reason", st)
	}
}

// FailRequests and the request filters take "resource/subresource", with any name of the
// resource, including the request log's: a status update fails, the object's update does not.
func TestFailRequestsSubresource(t *testing.T) {
	rc := newRaw(t)
	if err := rc.s.AddCRD([]byte(widgetCRD)); err != nil {
		t.Fatal(err)
	}
	if _, err := rc.s.Create("widgets", map[string]any{"apiVersion": "example.com/v1", "kind": "Widget",
		"metadata": map[string]any{"namespace": "default", "name": "w"}}); err != nil {
		t.Fatal(err)
	}
	body := []byte(`{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"namespace":"default","name":"w"},"status":{"ready":true}}`)
	put := func(path string) int {
		resp, b := rc.do("PUT", "/apis/example.com/v1/namespaces/default/widgets/w"+path, "", "application/json", body)
		if resp.StatusCode != http.StatusOK && resp.StatusCode != http.StatusConflict {
			t.Fatalf("PUT %s: %d %s", path, resp.StatusCode, b)
		}
		return resp.StatusCode
	}
	if err := rc.s.Faults().FailRequests(apitest.VerbUpdate, "widgets/status", 1, http.StatusConflict, 0); err != nil {
		t.Fatal(err)
	}
	// The log's name for the resource, as a test reads it from Request.Resource.
	if err := rc.s.Faults().FailRequests(apitest.VerbUpdate, "widgets.example.com/status", 1, http.StatusConflict, 0); err != nil {
		t.Fatal(err)
	}
	if code := put(""); code != http.StatusOK {
		t.Errorf("update of the object: %d, want 200 (the rules are for its status)", code)
	}
	for i := range 2 {
		if code := put("/status"); code != http.StatusConflict {
			t.Errorf("status update %d: %d, want 409", i+1, code)
		}
	}
	if code := put("/status"); code != http.StatusOK {
		t.Errorf("status update 3: %d, want 200 (rules used up)", code)
	}
	status := rc.s.RequestsMatching(apitest.RequestFilter{Verb: apitest.VerbUpdate, Resource: "widgets/status"})
	all := rc.s.RequestsMatching(apitest.RequestFilter{Verb: apitest.VerbUpdate, Resource: "widgets"})
	if len(status) != 3 || len(all) != 4 || status[0].Resource != "widgets.example.com" || status[0].Subresource != "status" {
		t.Errorf("status updates %d, all updates %d, want 3 and 4; logged as %q %q", len(status), len(all), status[0].Resource, status[0].Subresource)
	}
	if n := rc.s.CountRequests(apitest.VerbUpdate, "widgets.example.com/status"); n != 3 {
		t.Errorf("CountRequests of widgets.example.com/status: %d, want 3", n)
	}
	if err := rc.s.Faults().FailRequests(apitest.VerbUpdate, "widgets/scale", 1, http.StatusConflict, 0); err == nil {
		t.Error("FailRequests on a subresource widgets lack: accepted")
	}
}

// A field selector on a field a custom resource does not support gets the message of the
// kube-apiserver's apiextensions server, not the built-in kinds'.
func TestCustomResourceFieldSelectorMessage(t *testing.T) {
	rc := newRaw(t)
	if err := rc.s.AddCRD([]byte(widgetCRD)); err != nil {
		t.Fatal(err)
	}
	resp, b := rc.do("GET", "/apis/example.com/v1/namespaces/default/widgets?fieldSelector=spec.size%3D1", "", "", nil)
	if resp.StatusCode != http.StatusBadRequest || decodeMap(t, b)["message"] != "field label not supported: spec.size" {
		t.Errorf("list with an unsupported field selector: %d %s", resp.StatusCode, b)
	}
	if resp, b := rc.do("GET", "/apis/example.com/v1/namespaces/default/widgets?fieldSelector=metadata.name%3Dw", "", "", nil); resp.StatusCode != http.StatusOK {
		t.Errorf("metadata.name: %d %s", resp.StatusCode, b)
	}
}
