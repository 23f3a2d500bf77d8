package apitest_test

import (
	"context"
	"slices"
	"testing"
	"testing/synctest"
	"time"

	"github.com/informerkit/informerkit/apiclient"
	"github.com/informerkit/informerkit/apitest"
	"github.com/informerkit/informerkit/meta"
)

// owned is a ConfigMap with owner references to the ConfigMaps owners (by uid).
func owned(name string, owners map[string]string, block bool, finalizers ...string) map[string]any {
	var refs []any
	for _, n := range slices.Sorted(mapsKeys(owners)) {
		refs = append(refs, map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "name": n, "uid": owners[n], "blockOwnerDeletion": block})
	}
	md := map[string]any{"namespace": "default", "name": name, "ownerReferences": refs}
	if len(finalizers) > 0 {
		md["finalizers"] = finalizers
	}
	return map[string]any{"metadata": md}
}

func mapsKeys(m map[string]string) func(func(string) bool) {
	return func(yield func(string) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}

func create(t *testing.T, s *apitest.Server, obj any) apitest.Object {
	t.Helper()
	o, err := s.Create("configmaps", obj)
	if err != nil {
		t.Fatal(err)
	}
	return o
}

func deleteWith(t *testing.T, s *apitest.Server, name string, p apiclient.DeletionPropagation) {
	t.Helper()
	if err := s.DeleteWithOptions("configmaps", "default", name, apiclient.DeleteOptions{PropagationPolicy: &p}); err != nil {
		t.Fatal(err)
	}
}

// state is "gone", or the object's finalizers and owners' names, "deleting" when it is.
func state(s *apitest.Server, name string) string {
	o, err := s.Get("configmaps", "default", name)
	if meta.IsNotFound(err) {
		return "gone"
	}
	md, _ := o["metadata"].(map[string]any)
	out := ""
	if md["deletionTimestamp"] != nil {
		out = "deleting "
	}
	var owners []string
	refs, _ := md["ownerReferences"].([]any)
	for _, r := range refs {
		owners = append(owners, r.(map[string]any)["name"].(string))
	}
	fins, _ := md["finalizers"].([]any)
	return out + "owners=" + joinAny(owners) + " finalizers=" + joinAny(fins)
}

func joinAny[T any](xs []T) string {
	out := "["
	for i, x := range xs {
		if i > 0 {
			out += ","
		}
		out += anyString(x)
	}
	return out + "]"
}

func anyString(x any) string {
	if s, ok := x.(string); ok {
		return s
	}
	return "?"
}

// waitStates waits until every named object is in its state (see state).
func waitStates(t *testing.T, s *apitest.Server, want map[string]string) {
	t.Helper()
	synctest.Wait()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	err := s.WaitFor(ctx, func() bool {
		for n, w := range want {
			if state(s, n) != w {
				return false
			}
		}
		return true
	})
	if err != nil {
		for n, w := range want {
			if got := state(s, n); got != w {
				t.Errorf("%s: %s, want %s", n, got, w)
			}
		}
	}
}

func gcServer(t *testing.T) *apitest.Server {
	s := inMemory(t)
	if _, err := s.StartGarbageCollector(apitest.GCOptions{Delay: 100 * time.Millisecond}); err != nil {
		t.Fatal(err)
	}
	return s
}

// Background: the owner goes at once, then its dependents; a dependent with another owner
// stays and loses its reference to the one gone; one with an owner of an unknown kind, or
// with another object of the owner's name, is as the collector finds it.
func TestGarbageCollectorBackground(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := gcServer(t)
		o := create(t, s, cm("o", nil, nil))
		k := create(t, s, cm("k", nil, nil))
		create(t, s, owned("only", map[string]string{"o": o.UID()}, false))
		create(t, s, owned("both", map[string]string{"o": o.UID(), "k": k.UID()}, false))
		create(t, s, owned("stale", map[string]string{"k": "another-uid"}, false))
		create(t, s, map[string]any{"metadata": map[string]any{"namespace": "default", "name": "alien",
			"ownerReferences": []any{map[string]any{"apiVersion": "example.com/v1", "kind": "Nope", "name": "x", "uid": "u"}}}})
		waitStates(t, s, map[string]string{"stale": "gone", "alien": "owners=[x] finalizers=[]", "only": "owners=[o] finalizers=[]"})
		deleteWith(t, s, "o", apiclient.DeletePropagationBackground)
		waitStates(t, s, map[string]string{"o": "gone", "only": "gone", "both": "owners=[k] finalizers=[]", "k": "owners=[] finalizers=[]"})
	})
}

// Foreground: the owner waits, being deleted, until its blocking dependents are gone; its
// other dependents are deleted without holding it.
func TestGarbageCollectorForeground(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := gcServer(t)
		o := create(t, s, cm("o", nil, nil))
		create(t, s, owned("blocker", map[string]string{"o": o.UID()}, true, "example.com/hold"))
		create(t, s, owned("free", map[string]string{"o": o.UID()}, false))
		deleteWith(t, s, "o", apiclient.DeletePropagationForeground)
		waitStates(t, s, map[string]string{
			"o":       "deleting owners=[] finalizers=[foregroundDeletion]",
			"blocker": "deleting owners=[o] finalizers=[example.com/hold]",
			"free":    "gone",
		})
		if _, err := s.Mutate("configmaps", "default", "blocker", func(o apitest.Object) {
			delete(o["metadata"].(map[string]any), "finalizers")
		}); err != nil {
			t.Fatal(err)
		}
		waitStates(t, s, map[string]string{"o": "gone", "blocker": "gone"})
	})
}

// Orphan: the dependents stay, without their references to the owner, then it goes.
func TestGarbageCollectorOrphan(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := gcServer(t)
		o := create(t, s, cm("o", nil, nil))
		create(t, s, owned("d", map[string]string{"o": o.UID()}, true))
		deleteWith(t, s, "o", apiclient.DeletePropagationOrphan)
		waitStates(t, s, map[string]string{"o": "gone", "d": "owners=[] finalizers=[]"})
	})
}

// Without a collector, a DELETE's propagation leaves its finalizers, as on a
// kube-apiserver without kube-controller-manager; Background removes them again, and a bad
// policy is refused before the object is looked up.
func TestDeletePropagationFinalizers(t *testing.T) {
	s := apitest.NewServer()
	defer s.Close()
	create(t, s, cm("a", nil, nil))
	deleteWith(t, s, "a", apiclient.DeletePropagationForeground)
	if got := state(s, "a"); got != "deleting owners=[] finalizers=[foregroundDeletion]" {
		t.Errorf("after Foreground: %s", got)
	}
	deleteWith(t, s, "a", apiclient.DeletePropagationOrphan)
	if got := state(s, "a"); got != "deleting owners=[] finalizers=[orphan]" {
		t.Errorf("after Orphan: %s", got)
	}
	deleteWith(t, s, "a", apiclient.DeletePropagationBackground)
	if got := state(s, "a"); got != "gone" {
		t.Errorf("after Background: %s", got)
	}
	bad := apiclient.DeletionPropagation("Sideways")
	err := s.DeleteWithOptions("configmaps", "default", "missing", apiclient.DeleteOptions{PropagationPolicy: &bad})
	if st, _ := meta.AsStatus(err); st == nil || st.Code != 422 {
		t.Errorf("bad policy: %v", err)
	}
}
