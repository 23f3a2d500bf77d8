package sharding_test

import (
	"context"
	"slices"
	"syscall"
	"testing"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/informerkit/informerkit/apiclient"
	"github.com/informerkit/informerkit/e2e/cluster"
	"github.com/informerkit/informerkit/examples/deployment"
	"github.com/informerkit/informerkit/leaderelection"
	"github.com/informerkit/informerkit/meta"
	"github.com/informerkit/informerkit/sharding"
	"github.com/informerkit/informerkit/sharding/ring"
)

var crdsGVR = meta.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}

// installMiniDeployments applies examples/deployment's CRD and waits until it is served.
func installMiniDeployments(t *testing.T, ctx context.Context, c *apiclient.Client) {
	t.Helper()
	var obj map[string]any
	if err := yaml.Unmarshal(deployment.CRDYAML, &obj); err != nil {
		t.Fatal(err)
	}
	crds := apiclient.NewResource[*meta.Unstructured](c, crdsGVR)
	if _, err := crds.Create(ctx, &meta.Unstructured{Object: obj}, apiclient.CreateOptions{}); err != nil && !meta.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	mds := apiclient.NewResource[*deployment.MiniDeployment](c, deployment.DeploymentGVR)
	for {
		if _, err := mds.List(ctx, apiclient.ListOptions{Limit: 1}); err == nil {
			return
		}
		tm := time.NewTimer(100 * time.Millisecond)
		select {
		case <-ctx.Done():
			t.Fatalf("%v not served: %v", deployment.DeploymentGVR, ctx.Err())
		case <-tm.C:
		}
	}
}

// TestShardedDeploymentLosesAReplica: three replica processes of examples/deployment's
// sharded MiniDeployment controller (by namespace) on the real kube-apiserver share the
// MiniDeployments of eight namespaces. One is SIGKILLed, and every MiniDeployment is scaled
// at once: the two survivors take over its namespaces once its Lease expires and bring every
// MiniDeployment to its new size, with no Pod created twice and no MiniDeployment reconciled
// by two replicas at once (START/END of every reconcile, from the replicas' Tracer).
func TestShardedDeploymentLosesAReplica(t *testing.T) {
	c := cluster.ForTest(t)
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Minute)
	defer cancel()
	bin := buildReplica(t)
	real := realSide(t)
	installMiniDeployments(t, ctx, real.c)
	const leaseNS, ringName = "shard-deploy", "minideployment"
	namespaces := []string{"shop", "payments", "search", "billing", "auth", "media", "mail", "ads"}
	nsRes := apiclient.NewResource[*configMap](real.c, namespacesGVR)
	for _, ns := range append([]string{leaseNS}, namespaces...) {
		o := &configMap{ObjectMeta: meta.ObjectMeta{Name: ns}}
		o.APIVersion, o.Kind = "v1", "Namespace"
		if _, err := nsRes.Create(ctx, o, apiclient.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	mds := apiclient.NewResource[*deployment.MiniDeployment](real.c, deployment.DeploymentGVR)
	pods := apiclient.NewResource[*deployment.Pod](real.c, deployment.PodGVR)
	var keys [][2]string
	for _, ns := range namespaces {
		for _, name := range []string{"web", "api"} {
			two := int32(2)
			md := &deployment.MiniDeployment{ObjectMeta: meta.ObjectMeta{Namespace: ns, Name: name},
				Spec: deployment.Spec{Replicas: &two, Template: deployment.PodTemplate{Spec: deployment.PodSpec{
					Containers: []deployment.Container{{Name: "c", Image: "registry.k8s.io/pause:3.10"}}}}}}
			md.TypeMeta = meta.TypeMeta{APIVersion: deployment.DeploymentKind.APIVersion(), Kind: deployment.DeploymentKind.Kind}
			if _, err := mds.Namespace(ns).Create(ctx, md, apiclient.CreateOptions{}); err != nil {
				t.Fatal(err)
			}
			keys = append(keys, [2]string{ns, name})
		}
	}
	// settled reports whether every MiniDeployment has n live Pods of its own and a status
	// saying so; it fails the test on more than n (a Pod created twice).
	settled := func(n int) bool {
		for _, k := range keys {
			l, err := pods.Namespace(k[0]).List(ctx, apiclient.ListOptions{LabelSelector: deployment.LabelOwner + "=" + k[1]})
			if err != nil {
				t.Fatal(err)
			}
			live := 0
			for _, p := range l.Items {
				if p.DeletionTimestamp == nil {
					live++
				}
			}
			if live > n {
				t.Fatalf("%s/%s has %d live Pods, want %d", k[0], k[1], live, n)
			}
			d, err := mds.Namespace(k[0]).Get(ctx, k[1], apiclient.GetOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if live != n || d.Status.Replicas != int32(n) || d.Status.ObservedGeneration != d.Generation {
				return false
			}
		}
		return true
	}
	waitSettled := func(n int) time.Time {
		t.Helper()
		for !settled(n) {
			tm := time.NewTimer(100 * time.Millisecond)
			select {
			case <-ctx.Done():
				t.Fatalf("MiniDeployments not at %d Pods: %v", n, ctx.Err())
			case <-tm.C:
			}
		}
		return time.Now()
	}

	rc := newRecorder()
	leases := apiclient.NewResource[*leaderelection.Lease](real.c, leaderelection.LeaseGVR).Namespace(leaseNS)
	ids := []string{"d0", "d1", "d2"}
	procs := map[string]*proc{}
	for _, id := range ids {
		procs[id] = startProc(t, bin, c.KubeconfigPath, id, rc, "--deployment", "--namespace", leaseNS, "--ring", ringName)
	}
	waitRingConverged(t, ctx, leases, ringName, ids)
	waitSettled(2)

	// The victim: a replica that holds some namespaces.
	a, err := ring.Assign(ids, 0)
	if err != nil {
		t.Fatal(err)
	}
	held := map[string][]string{}
	for _, ns := range namespaces {
		o := a.Owner(sharding.Hash(ns))
		held[o] = append(held[o], ns)
	}
	victim := ""
	for _, id := range ids {
		if len(held[id]) > 0 && (victim == "" || len(held[id]) > len(held[victim])) {
			victim = id
		}
	}
	if err := procs[victim].cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	killedAt := time.Now()
	<-procs[victim].done
	rc.killed(victim, killedAt)
	for _, k := range keys {
		for {
			d, err := mds.Namespace(k[0]).Get(ctx, k[1], apiclient.GetOptions{})
			if err != nil {
				t.Fatal(err)
			}
			three := int32(3)
			d.Spec.Replicas = &three
			if _, err = mds.Namespace(k[0]).Update(ctx, d, apiclient.UpdateOptions{}); err == nil {
				break
			} else if !meta.IsConflict(err) {
				t.Fatal(err)
			}
		}
	}
	live := slices.DeleteFunc(slices.Clone(ids), func(s string) bool { return s == victim })
	converged := waitRingConverged(t, ctx, leases, ringName, live)
	done := waitSettled(3)
	t.Logf("SIGKILL of %s (namespaces %v): the survivors' claims converged %v after the kill; every MiniDeployment at 3 Pods %v after it",
		victim, held[victim], converged.Round(100*time.Millisecond), done.Sub(killedAt).Round(100*time.Millisecond))

	// The victim's MiniDeployments were reconciled by their new holders after the kill.
	after, err := ring.Assign(live, 0)
	if err != nil {
		t.Fatal(err)
	}
	rc.mu.Lock()
	for _, ns := range held[victim] {
		for _, name := range []string{"web", "api"} {
			key, want := ns+"/"+name, after.Owner(sharding.Hash(ns))
			if !slices.ContainsFunc(rc.spans[key], func(s span) bool { return s.id == want && s.start.After(killedAt) }) {
				t.Errorf("%s was not reconciled by its new holder %s after the kill", key, want)
			}
		}
	}
	rc.mu.Unlock()
	for _, id := range live {
		_ = procs[id].cmd.Process.Signal(syscall.SIGTERM)
	}
	for _, id := range live {
		<-procs[id].done
	}
	overlaps, reconciled, total := rc.overlaps()
	for _, o := range overlaps {
		t.Error("double reconcile: " + o)
	}
	t.Logf("%d reconciles of %d MiniDeployments by 3 replicas, %d overlapping", total, reconciled, len(overlaps))
	if reconciled != len(keys) {
		t.Errorf("%d of %d MiniDeployments were reconciled", reconciled, len(keys))
	}
}
