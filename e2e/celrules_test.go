package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/informerkit/informerkit/apitest"
	"github.com/informerkit/informerkit/e2e/cluster"
)

// TestCELRulesFidelity writes the same CustomResourceDefinitions with CEL validation rules
// (x-kubernetes-validations) and the same custom resources to the kube-apiserver and to
// apitest, and compares the answers: codes, reasons, messages, causes and warnings. CRDs
// whose rules do not compile or cost too much, and objects that are valid, invalid,
// invalid only on a transition, over the runtime cost limit, ratcheted, on /status, or
// validated by the Kubernetes libraries. Self's generated type name is masked (it changes
// on every compile, on both), and causes are sorted (the server's order follows its map
// iteration).
func TestCELRulesFidelity(t *testing.T) {
	c := cluster.ForTest(t)
	s := apitest.NewServerWithOptions(apitest.Options{TLS: true, Token: "fidelity", KubernetesVersion: c.Version})
	defer s.Close()
	sc := s.Client()
	defer sc.CloseIdleConnections()
	real := &celRun{crdRun: crdRun{t: t, name: "kube-apiserver", url: c.URL, client: c.HTTPClient(), ns: newNamespace(t, c)}}
	t.Cleanup(func() { real.req("DELETE", lcCRDs+"/"+celCRDName, "", "") })
	fake := &celRun{crdRun: crdRun{t: t, name: "apitest", url: s.URL, client: sc, ns: "fid-cel"}}
	if code, body := fake.req("POST", "/api/v1/namespaces", `{"metadata":{"name":"fid-cel"}}`, ""); code != 201 {
		t.Fatalf("namespace: %d %s", code, body)
	}
	compareTranscripts(t, "cel-rules", real.run(), fake.run())
}

type celRun struct {
	crdRun
}

const (
	celGroup   = "celfidelity.informerkit.io"
	celCRDName = "celrules." + celGroup
)

// celCRD is a CRD whose spec schema is specProps and whose spec rules are specRules.
func celCRD(specRules, specProps string) string {
	return `{"apiVersion":"apiextensions.k8s.io/v1","kind":"CustomResourceDefinition","metadata":{"name":"` + celCRDName + `"},
"spec":{"group":"` + celGroup + `","scope":"Namespaced","names":{"kind":"Celrule","plural":"celrules"},"versions":[{"name":"v1","served":true,"storage":true,
"subresources":{"status":{}},"schema":{"openAPIV3Schema":{"type":"object",
"x-kubernetes-validations":[{"rule":"self.metadata.name.size() <= 20","message":"name too long"}],
"properties":{"spec":{"type":"object","x-kubernetes-validations":` + specRules + `,"properties":{` + specProps + `}},
"status":{"type":"object","properties":{"ready":{"type":"integer"}},
 "x-kubernetes-validations":[{"rule":"self.ready >= 0","reason":"FieldValueForbidden","message":"ready is negative"}]}}}}}]}}`
}

// The CRD the objects are written to: rules on the spec, on scalars, list items, map
// values, an int-or-string, a set, a map list, with every reason, fieldPath,
// messageExpression, oldSelf and optionalOldSelf, and the Kubernetes libraries.
const (
	celProps = `"replicas":{"type":"integer"},"max":{"type":"integer"},"mode":{"type":"string","maxLength":10},
"forbidden":{"type":"string"},"cpu":{"type":"string","maxLength":20},"addr":{"type":"string","maxLength":45},
"site":{"type":"string","maxLength":200},"ver":{"type":"string","maxLength":30},"host":{"type":"string","maxLength":63},
"name":{"type":"string","maxLength":20,"x-kubernetes-validations":[{"rule":"self.startsWith('c-')","message":"must start with c-"}]},
"ports":{"type":"array","maxItems":10,"x-kubernetes-list-type":"map","x-kubernetes-list-map-keys":["name"],"items":{"type":"object","required":["name"],
 "properties":{"name":{"type":"string","maxLength":10},"port":{"type":"integer"}},
 "x-kubernetes-validations":[{"rule":"self.port > 0","message":"port must be positive","reason":"FieldValueRequired"},
  {"rule":"!has(oldSelf.port) || self.port == oldSelf.port","message":"port is immutable"}]}},
"labels":{"type":"object","maxProperties":10,"additionalProperties":{"type":"string","maxLength":10,"x-kubernetes-validations":[{"rule":"self != 'bad'"}]}},
"size":{"x-kubernetes-int-or-string":true,"x-kubernetes-validations":[{"rule":"type(self) == int ? self < 10 : self.endsWith('%')","message":"size is 0-9 or a percentage"}]},
"tags":{"type":"array","maxItems":10,"items":{"type":"string","maxLength":10},"x-kubernetes-list-type":"set",
 "x-kubernetes-validations":[{"rule":"self.all(x, x.size() > 1)","messageExpression":"'tags must be longer than one character: ' + self.join(',')"}]},
"big":{"type":"array","maxItems":10000,"items":{"type":"string","maxLength":100}},
"limits":{"type":"object","maxProperties":5,"additionalProperties":{"type":"integer","x-kubernetes-validations":[{"rule":"self >= oldSelf","message":"limits only grow"}]}},
"tmpl":{"type":"object","x-kubernetes-embedded-resource":true,"x-kubernetes-preserve-unknown-fields":true,
 "x-kubernetes-validations":[{"rule":"self.kind == 'ConfigMap' && self.metadata.name.startsWith('t-')","message":"tmpl must be a ConfigMap named t-*"}]},
"q":{"type":"string","maxLength":5},"dup":{"type":"array","maxItems":5,"items":{"type":"string","maxLength":5},"x-kubernetes-validations":[{"rule":"self.size() == 0 || self[0] != 'x'","reason":"FieldValueDuplicate"}]},
"pair":{"type":"object","properties":{"a":{"type":"string","maxLength":5}},"x-kubernetes-validations":[{"rule":"!has(self.a) || self.a != 'no'","fieldPath":"['a']","message":"a is no","messageExpression":"'a is ' + self.a.substring(10)"}]}`
	celRules = `[{"rule":"self.replicas <= self.max","messageExpression":"'replicas over max in mode ' + self.mode"},
{"rule":"!has(self.forbidden)","reason":"FieldValueForbidden","fieldPath":".forbidden","message":"must not be set"},
{"rule":"self.mode == oldSelf.mode","message":"mode is immutable"},
{"rule":"oldSelf.hasValue() || self.replicas >= 0","optionalOldSelf":true,"message":"replicas start non-negative"},
{"rule":"!has(self.cpu) || quantity(self.cpu).isLessThan(quantity('4'))","fieldPath":".cpu","message":"cpu must be below 4"},
{"rule":"!has(self.addr) || cidr('10.0.0.0/8').containsIP(self.addr)","message":"addr must be in 10.0.0.0/8"},
{"rule":"!has(self.site) || url(self.site).getScheme() == 'https'","message":"site must be https"},
{"rule":"!has(self.ver) || semver(self.ver, true).isGreaterThan(semver('1.0.0'))","message":"ver must be above 1.0.0"},
{"rule":"!has(self.host) || !format.dns1123Label().validate(self.host).hasValue()","message":"host must be a DNS label"},
{"rule":"!has(self.q) || quantity(self.q).add(1) == quantity('2') && quantity('2') == quantity(self.q).add(1)","message":"q is not 1"},
{"rule":"!has(self.big) || self.big.all(x, !x.matches('^(ab|cd|ef|gh|ij|kl|mn|op|qr|st|uv|wx)+$'))","message":"no pairs"}]`
)

func (r *celRun) run() []string {
	r.t.Helper()
	crds := lcCRDs
	// CRDs the server refuses: rules that do not compile or are not bools, bad shapes,
	// costs over the per-rule and per-CRD limits, oldSelf where values cannot be paired.
	for _, bad := range []struct{ name, rules, props string }{
		{"syntax", `[{"rule":"self.replicas >"}]`, `"replicas":{"type":"integer"}`},
		{"not-bool", `[{"rule":"self.replicas"},{"rule":"self.nope == 1"}]`, `"replicas":{"type":"integer"}`},
		{"message-expression", `[{"rule":"true","messageExpression":"self.replicas"},{"rule":"true","messageExpression":"'x' + "}]`, `"replicas":{"type":"integer"}`},
		{"shapes", `[{"rule":" "},{"rule":"true","message":" "},{"rule":"true","reason":"Bogus"},{"rule":"true","fieldPath":".nope"},{"rule":"true","optionalOldSelf":true}]`, `"replicas":{"type":"integer"}`},
		{"cost-quadratic", `[{"rule":"self.items.all(a, self.items.all(b, a == b))"}]`, `"items":{"type":"array","items":{"type":"string"}}`},
		{"cost-string", `[{"rule":"self.s.matches('^[a-z]+$')"}]`, `"s":{"type":"string"}`},
		{"cost-bounded-over", `[{"rule":"self.items.all(a, self.items.all(b, a == b))"}]`, `"items":{"type":"array","maxItems":2000,"items":{"type":"string","maxLength":100}}`},
		{"cost-message", `[{"rule":"true","messageExpression":"'replicas ' + string(self.replicas)"}]`, `"replicas":{"type":"integer"}`},
		// Estimates over the limits by a factor the message prints: both estimators must
		// agree to the digit.
		{"cost-split", `[{"rule":"self.items.all(x, x.split(',').size() < 5)"}]`, `"items":{"type":"array","maxItems":15000,"items":{"type":"string","maxLength":1000}}`},
		{"cost-precise", `[{"rule":"self.items.all(a, self.items.all(b, a == b))"}]`, `"items":{"type":"array","maxItems":520,"items":{"type":"string","maxLength":100}}`},
		{"cost-replace-join", `[{"rule":"self.items.all(x, x.replace('a', 'bb') != '' && [x, x].join('-') != '')"}]`, `"items":{"type":"array","maxItems":3000,"items":{"type":"string","maxLength":300}}`},
		{"cost-map", `[{"rule":"self.m.all(k, self.m[k].all(x, x.matches('^[a-z]+$')))"}]`, `"m":{"type":"object","maxProperties":4000,"additionalProperties":{"type":"array","maxItems":100,"items":{"type":"string","maxLength":64}}}`},
		{"cost-nested-cardinality", `[]`, `"outer":{"type":"array","maxItems":1000,"items":{"type":"object","properties":{"inner":{"type":"array","maxItems":1000,"items":{"type":"string","maxLength":50,"x-kubernetes-validations":[{"rule":"self.lowerAscii().startsWith('a')"}]}}}}}`},
		{"cost-libraries", `[{"rule":"self.items.all(x, quantity(x).isLessThan(quantity('1')) && isCIDR(x) && url(x).getHost() != '' && x.find('[0-9]+') != '')"}]`, `"items":{"type":"array","maxItems":2000,"items":{"type":"string","maxLength":256}}`},
		{"cost-exists-one", `[{"rule":"self.items.exists_one(a, self.items.filter(b, b == a).size() > 1)"}]`, `"items":{"type":"array","maxItems":500,"items":{"type":"integer"}}`},
		{"cost-total", `[{"rule":"self.a.all(x, self.a.all(y, x != y))"},{"rule":"self.b.all(x, self.b.all(y, x != y))"},{"rule":"self.c.all(x, self.c.all(y, x != y))"}]`,
			`"a":{"type":"array","maxItems":1000,"items":{"type":"string","maxLength":60}},"b":{"type":"array","maxItems":1000,"items":{"type":"string","maxLength":60}},"c":{"type":"array","maxItems":1000,"items":{"type":"string","maxLength":60}}`},
		{"uncorrelatable", `[]`, `"items":{"type":"array","maxItems":5,"items":{"type":"string","maxLength":5,"x-kubernetes-validations":[{"rule":"self == oldSelf"}]}}`},
	} {
		code, body := r.req("POST", crds, celCRD(bad.rules, bad.props), "")
		r.step("STEP crd-%s: %s", bad.name, summarizeStatus(code, body))
		if code == 201 {
			r.deleteCRD()
		}
	}
	// Versions of different schemas: the causes are at each version's schema.
	two := strings.Replace(celCRD(`[{"rule":"self.x >"}]`, `"x":{"type":"integer"}`), `"versions":[{"name":"v1","served":true,"storage":true,`,
		`"versions":[{"name":"v1beta1","served":true,"storage":false,"schema":{"openAPIV3Schema":{"type":"object","x-kubernetes-preserve-unknown-fields":true,
"x-kubernetes-validations":[{"rule":"self.nope"}]}}},{"name":"v1","served":true,"storage":true,`, 1)
	code, body := r.req("POST", crds, two, "")
	r.step("STEP crd-two-versions: %s", summarizeStatus(code, body))
	if code == 201 {
		r.deleteCRD()
	}
	// Costs within the limits, some close to them: the estimates must agree to pass alike.
	for _, ok := range []struct{ name, rules, props string }{
		{"cost-bounded", `[{"rule":"self.items.all(a, self.items.all(b, a == b))"}]`, `"items":{"type":"array","maxItems":300,"items":{"type":"string","maxLength":100}}`},
		{"cost-near", `[{"rule":"self.items.all(a, self.items.all(b, a == b))"}]`, `"items":{"type":"array","maxItems":1000,"items":{"type":"string","maxLength":100}}`},
	} {
		code, body := r.req("POST", crds, celCRD(ok.rules, ok.props), "")
		r.step("STEP crd-%s: %s", ok.name, summarizeStatus(code, body))
		if code == 201 {
			r.deleteCRD()
		}
	}

	code, body = r.req("POST", crds, celCRD(celRules, celProps), "")
	r.step("STEP crd: %s", summarizeStatus(code, body))
	if code != 201 {
		return r.lines
	}
	path := "/apis/" + celGroup + "/v1/namespaces/" + r.ns + "/celrules"
	r.until("the resource is served", func() bool { code, _ := r.req("GET", path, "", ""); return code == 200 })

	obj := func(name, spec string) string {
		return `{"apiVersion":"` + celGroup + `/v1","kind":"Celrule","metadata":{"name":"` + name + `"},"spec":` + spec + `}`
	}
	good := `{"replicas":1,"max":2,"mode":"a","name":"c-1","cpu":"500m","addr":"10.1.2.3","site":"https://x.io/a","ver":"v1.2",
"host":"ok","ports":[{"name":"http","port":80}],"labels":{"a":"b"},"size":"50%","tags":["ab","cd"]}`
	for _, w := range []struct{ name, body string }{
		{"valid", obj("ok", good)},
		{"replicas-over-max", obj("c1", `{"replicas":3,"max":2,"mode":"a"}`)},
		{"forbidden", obj("c2", `{"replicas":1,"max":2,"mode":"a","forbidden":"x"}`)},
		{"negative", obj("c3", `{"replicas":-1,"max":2,"mode":"a"}`)},
		{"scalar", obj("c4", `{"replicas":1,"max":2,"mode":"a","name":"x"}`)},
		{"list-item", obj("c5", `{"replicas":1,"max":2,"mode":"a","ports":[{"name":"a","port":0}]}`)},
		{"map-value", obj("c6", `{"replicas":1,"max":2,"mode":"a","labels":{"k":"bad"}}`)},
		{"int-or-string", obj("c7", `{"replicas":1,"max":2,"mode":"a","size":12}`)},
		{"set", obj("c8", `{"replicas":1,"max":2,"mode":"a","tags":["a","bc"]}`)},
		{"root-name", obj("a-name-longer-than-twenty", `{"replicas":1,"max":2,"mode":"a"}`)},
		{"quantity", obj("c9", `{"replicas":1,"max":2,"mode":"a","cpu":"4500m"}`)},
		{"quantity-invalid", obj("c10", `{"replicas":1,"max":2,"mode":"a","cpu":"lots"}`)},
		{"cidr", obj("c11", `{"replicas":1,"max":2,"mode":"a","addr":"192.168.0.1"}`)},
		{"ip-invalid", obj("c12", `{"replicas":1,"max":2,"mode":"a","addr":"10.1"}`)},
		{"url", obj("c13", `{"replicas":1,"max":2,"mode":"a","site":"http://x.io"}`)},
		{"semver", obj("c14", `{"replicas":1,"max":2,"mode":"a","ver":"0.9"}`)},
		{"format", obj("c15", `{"replicas":1,"max":2,"mode":"a","host":"Not_A_Label"}`)},
		{"several", obj("c16", `{"replicas":5,"max":2,"mode":"a","name":"y","size":"x"}`)},
		{"blocking", obj("c17", `{"replicas":"many","max":2,"mode":"a","name":"y"}`)},
		{"embedded", obj("c19", `{"replicas":1,"max":2,"mode":"a","tmpl":{"apiVersion":"v1","kind":"Secret","metadata":{"name":"t-1"}}}`)},
		{"quantity-sum-equality", obj("c22", `{"replicas":1,"max":2,"mode":"a","q":"1"}`)},
		{"duplicate", obj("c20", `{"replicas":1,"max":2,"mode":"a","dup":["x","y"]}`)},
		{"field-path-and-failed-message", obj("c21", `{"replicas":1,"max":2,"mode":"a","pair":{"a":"no"}}`)},
		{"runtime-cost", obj("c18", `{"replicas":1,"max":2,"mode":"a","big":[`+strings.TrimSuffix(strings.Repeat(`"`+strings.Repeat("x", 100)+`",`, 10000), ",")+`]}`)},
	} {
		code, body := r.req("POST", path, w.body, "")
		r.step("STEP create-%s: %s", w.name, summarizeStatus(code, body))
	}
	merge := "application/merge-patch+json"
	for _, p := range []struct{ name, sub, body string }{
		{"transition", "", `{"spec":{"mode":"b"}}`},
		{"map-list-transition", "", `{"spec":{"ports":[{"name":"http","port":81}]}}`},
		{"map-list-new-item", "", `{"spec":{"ports":[{"name":"http","port":80},{"name":"grpc","port":90}]}}`},
		{"map-value-transition-set", "", `{"spec":{"limits":{"cpu":5}}}`},
		{"map-value-transition", "", `{"spec":{"limits":{"cpu":4,"mem":1}}}`},
		{"status", "/status", `{"status":{"ready":-1}}`},
		{"status-ok", "/status", `{"status":{"ready":1}}`},
	} {
		code, body := r.req("PATCH", path+"/ok"+p.sub, p.body, merge)
		r.step("STEP patch-%s: %s", p.name, summarizeStatus(code, body))
	}

	// Ratcheting: a rule added after the object was stored fails on a value the update
	// leaves as it was (a warning) and on one it changes (an error).
	code, cur := r.req("GET", crds+"/"+celCRDName, "", "")
	if code != 200 {
		r.t.Fatalf("%s: get CRD: %d %s", r.name, code, cur)
	}
	var crd map[string]any
	if err := json.Unmarshal([]byte(cur), &crd); err != nil {
		r.t.Fatal(err)
	}
	labels := dig(crd, "spec", "versions", 0, "schema", "openAPIV3Schema", "properties", "spec", "properties", "labels", "additionalProperties").(map[string]any)
	labels["x-kubernetes-validations"] = append(labels["x-kubernetes-validations"].([]any),
		map[string]any{"rule": "self.size() > 1", "message": "label values are longer than one"})
	b, _ := json.Marshal(crd)
	tight := string(b)
	code, body = r.req("PUT", crds+"/"+celCRDName, tight, "")
	r.step("STEP crd-tighten: %d", code)
	r.until("the new rule is enforced", func() bool {
		code, _ := r.req("POST", path+"?dryRun=All", obj("probe", `{"replicas":1,"max":2,"mode":"a","labels":{"k":"v"}}`), "")
		return code == 422
	})
	code, _, body, warn := r.reqWarn("PATCH", path+"/ok", `{"spec":{"replicas":2}}`, merge)
	r.step("STEP ratchet-unchanged: %s warning=%q", summarizeStatus(code, body), warn)
	code, _, body, warn = r.reqWarn("PATCH", path+"/ok", `{"spec":{"labels":{"a":"c"}}}`, merge)
	r.step("STEP ratchet-changed: %s warning=%q", summarizeStatus(code, body), warn)
	r.deleteCRD()
	return r.lines
}

// step records a line of the transcript, and logs it (a failing run shows how far it got).
func (r *celRun) step(format string, args ...any) {
	r.add(format, args...)
	r.t.Logf("%s: %s", r.name, r.lines[len(r.lines)-1])
}

func (r *celRun) deleteCRD() {
	r.req("DELETE", lcCRDs+"/"+celCRDName, "", "")
	r.until("the CRD is gone", func() bool { code, _ := r.req("GET", lcCRDs+"/"+celCRDName, "", ""); return code == 404 })
}

// reqWarn is req with the Warning header of the answer.
func (r *celRun) reqWarn(method, path, body, ct string) (int, string, string, string) {
	r.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, method, r.url+path, strings.NewReader(body))
	if err != nil {
		r.t.Fatal(err)
	}
	req.Header.Set("Accept", "application/json")
	req.Header.Set("Content-Type", ct)
	resp, err := r.client.Do(req)
	if err != nil {
		r.t.Fatalf("%s: %s %s: %v", r.name, method, path, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header.Get("Content-Type"), string(b), resp.Header.Get("Warning")
}

// dig follows keys and indices into a decoded JSON document.
func dig(v any, path ...any) any {
	for _, p := range path {
		switch k := p.(type) {
		case string:
			v = v.(map[string]any)[k]
		case int:
			v = v.([]any)[k]
		}
	}
	return v
}

var selfTypeName = regexp.MustCompile(`selfType[0-9]+`)

// summarizeStatus is an answer as a line: the code, and for a Status its reason, message
// (when it has one cause: the order of several is the server's map order) and sorted causes.
func summarizeStatus(code int, body string) string {
	var st struct {
		Kind    string
		Reason  string
		Message string
		Details struct {
			Causes []struct{ Reason, Message, Field string }
		}
	}
	if json.Unmarshal([]byte(body), &st) != nil || st.Kind != "Status" {
		return fmt.Sprint(code)
	}
	var causes []string
	for _, c := range st.Details.Causes {
		causes = append(causes, fmt.Sprintf("{%s %s: %s}", c.Reason, c.Field, c.Message))
	}
	slices.Sort(causes)
	msg := st.Message
	if len(causes) > 1 {
		msg = "(" + fmt.Sprint(len(causes)) + " causes)"
	}
	line := fmt.Sprintf("%d %s %q causes=%s", code, st.Reason, msg, strings.Join(causes, " "))
	return selfTypeName.ReplaceAllString(line, "selfType#")
}
