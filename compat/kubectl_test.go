package compat

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/informerkit/informerkit/apitest"
)

// kubectls are the kubectl binaries to test: the one on PATH (v1.32 on the project's
// machines) and v1.37, which make compat builds into bin/kubectl from k8s.io/kubectl.
func kubectls(t *testing.T) map[string]string {
	out := map[string]string{}
	if bin, err := exec.LookPath("kubectl"); err == nil {
		out["path"] = bin
	}
	if abs, err := filepath.Abs(filepath.Join("bin", "kubectl")); err == nil {
		if _, err := os.Stat(abs); err == nil {
			out["v1.37"] = abs
		}
	}
	if len(out) == 0 {
		t.Skip("no kubectl on PATH and no bin/kubectl (make compat builds it)")
	}
	if out["v1.37"] == "" {
		t.Log("bin/kubectl is missing (make compat builds it): only the kubectl on PATH runs")
	}
	return out
}

// kubectlRunner runs kubectl bin with a kubeconfig (and a cache directory of its own, so
// discovery and OpenAPI come from that server).
func kubectlRunner(t *testing.T, kubeconfig []byte, bin string) func(args ...string) (string, error) {
	t.Helper()
	dir := t.TempDir()
	kc := filepath.Join(dir, "kubeconfig")
	if err := os.WriteFile(kc, kubeconfig, 0o600); err != nil {
		t.Fatal(err)
	}
	return func(args ...string) (string, error) {
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		defer cancel()
		cmd := exec.CommandContext(ctx, bin, append([]string{"--kubeconfig", kc, "--cache-dir", filepath.Join(dir, "cache")}, args...)...)
		cmd.Env = append(os.Environ(), "HOME="+dir)
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
}

// kstep is one kubectl command of the scenario: its arguments ({ns} is the scenario's
// namespace, {dir} a directory with the manifests), the patterns its output must match
// on apitest, and whether it must fail.
type kstep struct {
	args   []string
	expect []string
	fails  bool
	// write writes a manifest into {dir} before the command: file name and content.
	write [2]string
}

func k(args string, expect ...string) kstep { return kstep{args: strings.Fields(args), expect: expect} }

// kubectlScenario is kubectl's everyday commands. Arguments with spaces are written with
// \x00 instead and split on it.
var kubectlScenario = []kstep{
	k("api-versions", `(?m)^apps/v1$`, `(?m)^v1$`, `(?m)^coordination.k8s.io/v1$`, `(?m)^events.k8s.io/v1$`, `(?m)^authorization.k8s.io/v1$`),
	// Creation commands send protobuf bodies for built-in kinds.
	k("create namespace {ns}", `namespace/{ns} created`),
	k("create configmap settings -n {ns} --from-literal=mode=fast --from-literal=size=3", `configmap/settings created`),
	k("create secret generic pw -n {ns} --from-literal=password=hunter2", `secret/pw created`),
	k("create deployment web -n {ns} --image=nginx:1.27 --replicas=2", `deployment.apps/web created`),
	// Tables with the kube-apiserver's columns.
	k("get namespace {ns}", `(?m)^NAME\s+STATUS\s+AGE$`, `(?m)^{ns}\s+Active\s+\d+s$`),
	k("get configmaps -n {ns}", `(?m)^NAME\s+DATA\s+AGE$`, `(?m)^settings\s+2\s+`),
	k("get secrets -n {ns}", `(?m)^NAME\s+TYPE\s+DATA\s+AGE$`, `(?m)^pw\s+Opaque\s+1\s+`),
	k("get deployments -n {ns}", `(?m)^NAME\s+READY\s+UP-TO-DATE\s+AVAILABLE\s+AGE$`, `(?m)^web\s+0/2\s+0\s+0\s+`),
	k("get deployments -n {ns} -o wide", `(?m)^NAME\s+READY\s+UP-TO-DATE\s+AVAILABLE\s+AGE\s+CONTAINERS\s+IMAGES\s+SELECTOR$`, `nginx:1.27\s+app=web`),
	// Defaults are visible.
	k("get deployment web -n {ns} -o jsonpath={.spec.strategy.type}\x00{.spec.revisionHistoryLimit}\x00{.spec.template.spec.containers[0].imagePullPolicy}", `^RollingUpdate 10 IfNotPresent$`),
	// Scale through the scale subresource; patches of the two JSON kinds; labels.
	k("scale deployment web -n {ns} --replicas=3", `deployment.apps/web scaled`),
	k("get deployment web -n {ns} -o jsonpath={.spec.replicas}\x00{.metadata.generation}", `^3 2$`),
	k(`patch configmap settings -n {ns} --type=merge -p {"data":{"mode":"slow"}}`, `configmap/settings patched`),
	k(`patch configmap settings -n {ns} --type=json -p [{"op":"remove","path":"/data/size"}]`, `configmap/settings patched`),
	k("get configmap settings -n {ns} -o jsonpath={.data}", `^\{"mode":"slow"\}$`),
	k("label configmap settings -n {ns} tier=gold", `configmap/settings labeled`),
	k("annotate configmap settings -n {ns} note=hi", `configmap/settings annotated`),
	// Client-side apply: create, then update.
	{write: [2]string{"cm.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: applied\ndata:\n  a: \"1\"\n"}, args: strings.Fields("apply -n {ns} -f {dir}/cm.yaml"), expect: []string{`configmap/applied created`}},
	{write: [2]string{"cm.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: applied\ndata:\n  a: \"2\"\n"}, args: strings.Fields("apply -n {ns} -f {dir}/cm.yaml"), expect: []string{`configmap/applied configured`}},
	k("get configmap applied -n {ns} -o jsonpath={.data.a}", `^2$`),
	// Server-side apply: create, update, a conflict with another manager, forced.
	{write: [2]string{"ssa.yaml", ssaDeployment("1.27", "")}, args: strings.Fields("apply --server-side -n {ns} -f {dir}/ssa.yaml"), expect: []string{`deployment.apps/ssa serverside-applied`}},
	{write: [2]string{"ssa.yaml", ssaDeployment("1.28", "        env:\n        - name: X\n          value: \"1\"\n")}, args: strings.Fields("apply --server-side -n {ns} -f {dir}/ssa.yaml"), expect: []string{`deployment.apps/ssa serverside-applied`}},
	{write: [2]string{"other.yaml", "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: ssa\nspec:\n  replicas: 5\n"}, args: strings.Fields("apply --server-side --field-manager=other -n {ns} -f {dir}/other.yaml"), expect: []string{`Apply failed with 1 conflict: conflict with "kubectl": .spec.replicas`}, fails: true},
	k("apply --server-side --field-manager=other --force-conflicts -n {ns} -f {dir}/other.yaml", `deployment.apps/ssa serverside-applied`),
	k("get deployment ssa -n {ns} -o jsonpath={.spec.replicas}\x00{.spec.template.spec.containers[0].image}\x00{.spec.template.spec.containers[0].env[0].value}\x00{.metadata.managedFields[*].manager}", `^5 nginx:1.28 1 kubectl other$`),
	k("apply --server-side --dry-run=server --force-conflicts -n {ns} -f {dir}/ssa.yaml", `deployment.apps/ssa serverside-applied \(server dry run\)`),
	// From client-side to server-side apply: the last-applied-configuration's fields are kubectl's.
	{write: [2]string{"cm.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: applied\ndata:\n  a: \"3\"\n"}, args: strings.Fields("apply --server-side -n {ns} -f {dir}/cm.yaml"), expect: []string{`configmap/applied serverside-applied`}},
	k("get configmap applied -n {ns} -o jsonpath={.data.a}", `^3$`),
	// Client-side apply of a deployment sends a strategic merge patch: a container removed from the file goes.
	{write: [2]string{"csa.yaml", csaDeployment("      - name: a\n        image: nginx:1.27\n      - name: b\n        image: busybox:1\n")}, args: strings.Fields("apply -n {ns} -f {dir}/csa.yaml"), expect: []string{`deployment.apps/csa created`}},
	{write: [2]string{"csa.yaml", csaDeployment("      - name: a\n        image: nginx:1.28\n")}, args: strings.Fields("apply -n {ns} -f {dir}/csa.yaml"), expect: []string{`deployment.apps/csa configured`}},
	k("get deployment csa -n {ns} -o jsonpath={.spec.template.spec.containers[*].name}\x00{.spec.template.spec.containers[*].image}\x00{.metadata.managedFields[*].manager}", `^a nginx:1.28 kubectl-client-side-apply$`),
	// Pods: columns, describe, explain, auth.
	{write: [2]string{"pod.yaml", "apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\nspec:\n  containers:\n  - name: c\n    image: busybox\n"}, args: strings.Fields("create -n {ns} -f {dir}/pod.yaml"), expect: []string{`pod/p created`}},
	k("get pods -n {ns}", `(?m)^NAME\s+READY\s+STATUS\s+RESTARTS\s+AGE$`, `(?m)^p\s+0/1\s+Pending\s+0\s+`),
	k("describe pod p -n {ns}", `(?m)^Name:\s+p$`, `(?m)^Status:\s+Pending$`, `(?m)^QoS Class:\s+BestEffort$`),
	k("describe deployment web -n {ns}", `(?m)^StrategyType:\s+RollingUpdate$`, `(?m)^Replicas:\s+3 desired`),
	k("explain pods.spec.containers.image", `(?m)^KIND:\s+Pod$`, `Container image name`),
	k("explain deployment.spec.strategy", `(?m)^KIND:\s+Deployment$`, `(?m)^FIELD: strategy <DeploymentStrategy>`),
	k("auth can-i create pods", `^yes\n$`),
	// Errors as the kube-apiserver gives them.
	{args: strings.Fields("create -n {ns} -f {dir}/pod.yaml"), expect: []string{`pods "p" already exists`}, fails: true},
	{args: strings.Fields("get pods -n {ns} --field-selector=spec.bogus=1"), expect: []string{"field label not supported: spec.bogus"}, fails: true},
	// Strategic merge patches: set image keeps the other containers, a new container merges by name.
	k("set image deployment/web -n {ns} nginx=nginx:1.28", `deployment.apps/web image updated`),
	k(`patch deployment web -n {ns} --type=strategic -p {"spec":{"template":{"spec":{"containers":[{"name":"sidecar","image":"busybox:1"}]}}}}`, `deployment.apps/web patched`),
	k("get deployment web -n {ns} -o jsonpath={.spec.template.spec.containers[*].name}\x00{.spec.template.spec.containers[*].image}", `^sidecar nginx busybox:1 nginx:1.28$`),
	k("delete deployment web -n {ns}", `deployment.apps "web" deleted`),
}

// ssaDeployment is the manifest of the server-side apply steps' deployment.
func ssaDeployment(tag, env string) string {
	return "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: ssa\n  labels:\n    app: ssa\nspec:\n  replicas: 2\n  selector:\n    matchLabels:\n      app: ssa\n" +
		"  template:\n    metadata:\n      labels:\n        app: ssa\n    spec:\n      containers:\n      - name: app\n        image: nginx:" + tag + "\n" + env
}

// csaDeployment is the manifest of the client-side apply steps' deployment.
func csaDeployment(containers string) string {
	return "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: csa\nspec:\n  selector:\n    matchLabels:\n      app: csa\n  template:\n    metadata:\n      labels:\n        app: csa\n    spec:\n      containers:\n" + containers
}

type kresult struct {
	out string
	err error
}

// runKubectlScenario runs the scenario with kubectl and returns each command's output.
func runKubectlScenario(t *testing.T, kubectl func(args ...string) (string, error), ns string) []kresult {
	dir := t.TempDir()
	var out []kresult
	for _, st := range kubectlScenario {
		if st.write[0] != "" {
			os.WriteFile(filepath.Join(dir, st.write[0]), []byte(st.write[1]), 0o600)
		}
		var args []string
		for _, a := range st.args {
			a = strings.ReplaceAll(strings.ReplaceAll(a, "{ns}", ns), "{dir}", dir)
			args = append(args, strings.ReplaceAll(a, "\x00", " "))
		}
		o, err := kubectl(args...)
		out = append(out, kresult{strings.ReplaceAll(o, dir, "{dir}"), err})
	}
	return out
}

// checkKubectlScenario checks each output against the step's expectations.
func checkKubectlScenario(t *testing.T, res []kresult, ns string) {
	t.Helper()
	for i, st := range kubectlScenario {
		r := res[i]
		if (r.err != nil) != st.fails {
			t.Errorf("kubectl %s: error %v (want failure %v)\n%s", strings.Join(st.args, " "), r.err, st.fails, r.out)
			continue
		}
		for _, re := range st.expect {
			re = strings.ReplaceAll(re, "{ns}", regexp.QuoteMeta(ns))
			if !regexp.MustCompile(re).MatchString(r.out) {
				t.Errorf("kubectl %s: output lacks /%s/:\n%s", strings.Join(st.args, " "), re, r.out)
			}
		}
	}
}

// TestKubectlEverydayCommands runs kubectl's everyday commands with their defaults against
// apitest: what they print must be what they print against a kube-apiserver (compared
// line by line in TestKubectlAgainstKubeAPIServer when the e2e binaries are there).
func TestKubectlEverydayCommands(t *testing.T) {
	for name, bin := range kubectls(t) {
		t.Run(name, func(t *testing.T) {
			e := newEnv(t, apitest.Options{})
			res := runKubectlScenario(t, kubectlRunner(t, e.s.Kubeconfig(), bin), "shop")
			checkKubectlScenario(t, res, "shop")
			pb := 0
			for _, r := range e.s.RequestsFor(apitest.VerbCreate, "") {
				if strings.HasPrefix(r.ContentType, "application/vnd.kubernetes.protobuf") && r.Code == 201 {
					pb++
				}
			}
			if pb < 4 {
				t.Errorf("%d creations in protobuf, want the 4 of kubectl create namespace/configmap/secret/deployment", pb)
			}
		})
	}
}

var (
	kubectlAgeRE = regexp.MustCompile(`\b[0-9]+(s|m|m[0-9]+s|h)\b`)
	kubectlUIDRE = regexp.MustCompile(`[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}`)
	kubectlIPRE  = regexp.MustCompile(`\b10\.0\.0\.[0-9]+\b`)
	kubectlTSRE  = regexp.MustCompile(`[A-Z][a-z]{2}, \d{2} [A-Z][a-z]{2} \d{4} \d{2}:\d{2}:\d{2} [+-]\d{4}`)
)

// normalizeKubectl replaces what differs between two servers by nature: ages, uids,
// timestamps, cluster IPs, the namespace's name, and the column padding that follows from
// them.
func normalizeKubectl(s, ns string) string {
	s = strings.ReplaceAll(s, ns, "{ns}")
	s = kubectlTSRE.ReplaceAllString(s, "{time}")
	s = kubectlUIDRE.ReplaceAllString(s, "{uid}")
	s = kubectlIPRE.ReplaceAllString(s, "{ip}")
	s = kubectlAgeRE.ReplaceAllString(s, "{age}")
	var lines []string
	for _, l := range strings.Split(s, "\n") {
		lines = append(lines, strings.Join(strings.Fields(l), " "))
	}
	return strings.Join(lines, "\n")
}

// kubectlKnownDifferences are the steps whose output differs for a reason apitest's
// package doc lists.
var kubectlKnownDifferences = map[string]string{
	"api-versions": "apitest serves a subset of the built-in groups",
}

// TestKubectlAgainstKubeAPIServer runs the kubectl scenario against apitest and against a
// real kube-apiserver v1.37.2 (the e2e binaries) and compares the outputs line by line.
func TestKubectlAgainstKubeAPIServer(t *testing.T) {
	real := startRealCluster(t)
	for name, bin := range kubectls(t) {
		t.Run(name, func(t *testing.T) {
			e := newEnv(t, apitest.Options{})
			ns := fmt.Sprintf("kubectl-%d", time.Now().UnixNano()%1e9)
			got := runKubectlScenario(t, kubectlRunner(t, e.s.Kubeconfig(), bin), ns)
			want := runKubectlScenario(t, kubectlRunner(t, real, bin), ns)
			for i, st := range kubectlScenario {
				cmd := strings.Join(st.args, " ")
				w, g := normalizeKubectl(want[i].out, ns), normalizeKubectl(got[i].out, ns)
				if w == g && (want[i].err == nil) == (got[i].err == nil) {
					continue
				}
				if why, ok := kubectlKnownDifferences[cmd]; ok {
					t.Logf("known difference (%s): kubectl %s", why, cmd)
					continue
				}
				t.Errorf("kubectl %s differs:\n--- kube-apiserver (err %v)\n%s\n--- apitest (err %v)\n%s", cmd, want[i].err, w, got[i].err, g)
			}
		})
	}
}
