package multicluster_test

import (
	"context"
	"encoding/base64"
	"testing"
	"time"

	"github.com/informerkit/informerkit/apitest"
	"github.com/informerkit/informerkit/controller"
	"github.com/informerkit/informerkit/controller/multicluster"
)

// kubeconfigSecret is a Secret of namespace default holding s's kubeconfig, selected or not.
func kubeconfigSecret(name string, s *apitest.Server, selected bool) map[string]any {
	l := map[string]any{}
	if selected {
		l[multicluster.DefaultSecretLabel] = "true"
	}
	return map[string]any{
		"metadata": map[string]any{"namespace": "default", "name": name, "labels": l},
		"data":     map[string]any{multicluster.DefaultSecretKey: base64.StdEncoding.EncodeToString(s.Kubeconfig())},
	}
}

// A Fleet of a HubSecrets provider engages a cluster per selected Secret of the hub,
// engages one again at the server its changed Secret names, and lets go of one whose
// Secret is deleted; an unselected Secret is no cluster.
func TestFleetOfHubSecrets(t *testing.T) {
	servers := map[string]*apitest.Server{}
	for _, name := range []string{"a", "b", "c", "d"} {
		s, err := apitest.Start(apitest.Options{RequestLogSize: requestLog}) // loopback: a kubeconfig holds no in-memory dialer
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(s.Close)
		seed(t, s, name)
		servers[name] = s
	}
	env := newHub(t)
	env.Create("secrets", kubeconfigSecret("a", servers["a"], true))
	env.Create("secrets", kubeconfigSecret("b", servers["b"], true))
	env.Create("secrets", kubeconfigSecret("d", servers["d"], false))
	fleet := startProviderFleet(t, env, func(mgr *controller.Manager) (multicluster.Provider, error) {
		return multicluster.NewHubSecrets(mgr.APIClient(), multicluster.HubSecretsOptions{Logger: quietLogger()})
	})
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	waitClusters(t, ctx, fleet, "a", "b")
	waitWatches(t, ctx, servers["a"], 1)
	waitWatches(t, ctx, servers["b"], 1)

	// a's Secret names another server: a is engaged again there.
	env.Mutate("secrets", "default", "a", func(o apitest.Object) {
		o["data"] = kubeconfigSecret("a", servers["c"], true)["data"]
	})
	waitWatches(t, ctx, servers["c"], 1)
	waitWatches(t, ctx, servers["a"], 0)

	env.Delete("secrets", "default", "b")
	waitClusters(t, ctx, fleet, "a")
	waitWatches(t, ctx, servers["b"], 0)
	if n := len(servers["d"].Watches("configmaps")); n != 0 {
		t.Errorf("the unselected Secret's server has %d watches", n)
	}
}

func TestNewHubSecretsRefusesANilClient(t *testing.T) {
	if _, err := multicluster.NewHubSecrets(nil, multicluster.HubSecretsOptions{}); err == nil {
		t.Error("a nil client was accepted")
	}
}
