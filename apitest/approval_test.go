package apitest_test

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"net/http"
	"strings"
	"testing"

	"github.com/informerkit/informerkit/apitest"
)

func csrPEM(t *testing.T) []byte {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	der, err := x509.CreateCertificateRequest(rand.Reader, &x509.CertificateRequest{Subject: pkix.Name{CommonName: "alice"}}, key)
	if err != nil {
		t.Fatal(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE REQUEST", Bytes: der})
}

// TestCSRApproval: certificatesigningrequests/approval sets the Approved or Denied
// condition (timestamps filled), refuses Approved beside Denied and the removal of either;
// /status may not add them and keeps them as stored; a user needs the verb approve on
// the signer, as the kube-apiserver's CertificateApproval admission plugin requires.
func TestCSRApproval(t *testing.T) {
	s := apitest.NewServerWithOptions(apitest.Options{Token: "admin",
		Tokens: map[string]apitest.UserInfo{"bob": {Name: "bob"}}})
	defer s.Close()
	c := &http.Client{Transport: &http.Transport{}} // s.Client() would send Token on every request
	defer c.CloseIdleConnections()
	base := s.URL + "/apis/certificates.k8s.io/v1/certificatesigningrequests"
	code, out := call(t, c, "POST", base, "admin", map[string]any{"metadata": map[string]any{"name": "x"},
		"spec": map[string]any{"request": csrPEM(t), "signerName": "example.com/signer", "usages": []string{"client auth"}}})
	if code != 201 {
		t.Fatalf("create: %d %v", code, out)
	}
	cond := func(typ string) map[string]any {
		return map[string]any{"type": typ, "status": "True", "reason": "Test"}
	}
	withConds := func(obj map[string]any, conds ...any) map[string]any {
		obj["status"] = map[string]any{"conditions": conds}
		return obj
	}

	// /status may not add Approved.
	if code, out := call(t, c, "PUT", base+"/x/status", "admin", withConds(out, cond("Approved"))); code != 422 ||
		!strings.Contains(str(out, "message").(string), `updates may not add a condition of type "Approved"`) {
		t.Errorf("approve through /status: %d %v, want 422", code, out["message"])
	}
	// bob may update certificatesigningrequests/approval but not approve for the signer.
	call(t, c, "POST", s.URL+"/apis/rbac.authorization.k8s.io/v1/clusterroles", "admin", map[string]any{"metadata": map[string]any{"name": "approver"},
		"rules": []any{map[string]any{"verbs": []string{"get", "update", "patch"}, "apiGroups": []string{"certificates.k8s.io"},
			"resources": []string{"certificatesigningrequests", "certificatesigningrequests/approval"}}}})
	call(t, c, "POST", s.URL+"/apis/rbac.authorization.k8s.io/v1/clusterrolebindings", "admin", map[string]any{"metadata": map[string]any{"name": "approver"},
		"roleRef":  map[string]any{"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "approver"},
		"subjects": []any{map[string]any{"kind": "User", "name": "bob"}}})
	_, cur := call(t, c, "GET", base+"/x", "admin", nil)
	want := `certificatesigningrequests.certificates.k8s.io "x" is forbidden: user not permitted to approve requests with signerName "example.com/signer"`
	if code, out := call(t, c, "PUT", base+"/x/approval", "bob", withConds(cur, cond("Approved"))); code != 403 || out["message"] != want {
		t.Errorf("bob approves: %d %v, want 403 %q", code, out["message"], want)
	}

	_, cur = call(t, c, "GET", base+"/x", "admin", nil)
	code, out = call(t, c, "PUT", base+"/x/approval", "admin", withConds(cur, cond("Approved")))
	conds, _ := str(out, "status", "conditions").([]any)
	if code != 200 || len(conds) != 1 || str(conds[0].(map[string]any), "lastUpdateTime") == nil || str(conds[0].(map[string]any), "lastTransitionTime") == nil {
		t.Fatalf("approve: %d %v, want the Approved condition with its times", code, out["status"])
	}
	if code, out := call(t, c, "PUT", base+"/x/approval", "admin", withConds(out, conds[0], cond("Denied"))); code != 422 ||
		!strings.Contains(str(out, "message").(string), "Approved and Denied conditions are mutually exclusive") {
		t.Errorf("deny an approved CSR: %d %v, want 422", code, out["message"])
	}
	_, cur = call(t, c, "GET", base+"/x", "admin", nil)
	if code, out := call(t, c, "PUT", base+"/x/approval", "admin", withConds(cur)); code != 422 ||
		!strings.Contains(str(out, "message").(string), `updates may not remove a condition of type "Approved"`) {
		t.Errorf("remove the approval: %d %v, want 422", code, out["message"])
	}
	// A status update keeps the Approved condition as stored and adds others.
	_, cur = call(t, c, "GET", base+"/x", "admin", nil)
	approved := str(cur, "status", "conditions").([]any)[0]
	changed := map[string]any{"type": "Approved", "status": "True", "reason": "Changed"}
	code, out = call(t, c, "PUT", base+"/x/status", "admin", withConds(cur, changed, map[string]any{"type": "Failed", "status": "True"}))
	conds, _ = str(out, "status", "conditions").([]any)
	if code != 200 || len(conds) != 2 || str(conds[0].(map[string]any), "reason") != str(approved.(map[string]any), "reason") {
		t.Errorf("status update: %d %v, want Approved as stored and Failed", code, out["status"])
	}
}
