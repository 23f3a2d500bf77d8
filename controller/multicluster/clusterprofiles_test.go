package multicluster_test

import (
	"context"
	_ "embed"
	"encoding/base64"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/informerkit/informerkit/apiclient"
	"github.com/informerkit/informerkit/apitest"
	"github.com/informerkit/informerkit/controller"
	"github.com/informerkit/informerkit/controller/controllertest"
	"github.com/informerkit/informerkit/controller/multicluster"
)

//go:embed testdata/clusterprofiles.yaml
var clusterProfileCRD []byte

// tokenPlugin writes an exec plugin that answers with the token in $TOKEN, and returns the
// access configuration that runs it as provider "token", taking the profile's environment.
func tokenPlugin(t *testing.T) *multicluster.AccessConfig {
	t.Helper()
	path := filepath.Join(t.TempDir(), "token-plugin")
	script := "#!/bin/sh\nprintf '{\"apiVersion\":\"client.authentication.k8s.io/v1\",\"kind\":\"ExecCredential\",\"status\":{\"token\":\"%s\"}}' \"$TOKEN\"\n"
	if err := os.WriteFile(path, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return &multicluster.AccessConfig{Providers: []multicluster.AccessProvider{{
		Name:       "token",
		ExecConfig: multicluster.AccessExec{Command: path, APIVersion: "client.authentication.k8s.io/v1"},
		ProfileEnv: multicluster.ProfileEnvReplace,
	}}}
}

// profile is ClusterProfile default/<name> of cluster manager mgr for server s (its token
// in the profile's exec environment).
func profile(name, mgr string, s *apitest.Server) map[string]any {
	return map[string]any{
		"apiVersion": "multicluster.x-k8s.io/v1alpha1", "kind": "ClusterProfile",
		"metadata": map[string]any{"namespace": "default", "name": name,
			"labels": map[string]any{multicluster.ClusterManagerLabel: mgr}},
		"spec": map[string]any{"clusterManager": map[string]any{"name": mgr}},
	}
}

// profileStatus is the status of a profile of server s, healthy or not.
func profileStatus(s *apitest.Server, healthy bool) map[string]any {
	cond := "False"
	if healthy {
		cond = "True"
	}
	return map[string]any{
		"conditions": []any{map[string]any{"type": multicluster.ControlPlaneHealthy, "status": cond, "reason": "Probed",
			"lastTransitionTime": "2026-01-01T00:00:00Z"}},
		"accessProviders": []any{map[string]any{"name": "token", "cluster": map[string]any{
			"server":                     s.URL,
			"certificate-authority-data": base64.StdEncoding.EncodeToString(s.CAPEM()),
			"extensions": []any{map[string]any{"name": multicluster.ExecEnvExtension,
				"extension": map[string]any{"TOKEN": s.Token()}}},
		}}},
	}
}

// A Fleet of a ClusterProfiles provider engages the healthy profiles of its cluster
// manager, each through the exec plugin of the access provider it names (the token coming
// from the profile's extension), one that turns healthy later, and lets go of a deleted
// one; another manager's profile is no cluster.
func TestFleetOfClusterProfiles(t *testing.T) {
	servers := map[string]*apitest.Server{}
	for _, name := range []string{"a", "b", "c", "d"} {
		s, err := apitest.Start(apitest.Options{TLS: true, Token: "tok-" + name, RequestLogSize: requestLog})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(s.Close)
		seed(t, s, name)
		servers[name] = s
	}
	env := controllertest.New(t, controllertest.Options{Server: apitest.Options{InMemory: true}, CRDs: [][]byte{clusterProfileCRD}})
	create := func(name, mgr string, healthy bool) {
		t.Helper()
		o := env.Create("clusterprofiles", profile(name, mgr, servers[name]))
		o["status"] = profileStatus(servers[name], healthy)
		if _, err := env.Server.UpdateStatus("clusterprofiles", o); err != nil {
			t.Fatal(err)
		}
	}
	create("a", "fleet", true)
	create("b", "fleet", true)
	create("c", "fleet", false)
	create("d", "other", true)
	access := tokenPlugin(t)
	fleet := startProviderFleet(t, env, func(mgr *controller.Manager) (multicluster.Provider, error) {
		return multicluster.NewClusterProfiles(mgr.APIClient(), multicluster.ClusterProfilesOptions{
			ClusterManager: "fleet", Access: access, Logger: quietLogger()})
	})
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	waitClusters(t, ctx, fleet, "default/a", "default/b")
	waitWatches(t, ctx, servers["a"], 1) // the plugin's token was accepted: the list and the watch went through
	waitWatches(t, ctx, servers["b"], 1)

	o, err := env.Server.Get("clusterprofiles", "default", "c")
	if err != nil {
		t.Fatal(err)
	}
	o["status"] = profileStatus(servers["c"], true)
	if _, err := env.Server.UpdateStatus("clusterprofiles", o); err != nil {
		t.Fatal(err)
	}
	waitClusters(t, ctx, fleet, "default/a", "default/b", "default/c")
	waitWatches(t, ctx, servers["c"], 1)

	env.Delete("clusterprofiles", "default", "b")
	waitClusters(t, ctx, fleet, "default/a", "default/c")
	waitWatches(t, ctx, servers["b"], 0)
	if n := len(servers["d"].Watches("configmaps")); n != 0 {
		t.Errorf("the other manager's cluster has %d watches", n)
	}
}

// AccessConfig.ClusterConfig reaches a profile through the first configured provider the
// profile names, taking the profile's arguments and environment as the policies say and
// its exec extension as the plugin's cluster config.
func TestAccessConfigBuildsTheClusterConfig(t *testing.T) {
	path := filepath.Join(t.TempDir(), "providers.json")
	file := `{"providers": [
	  {"name": "oidc", "execConfig": {"command": "/bin/oidc", "apiVersion": "client.authentication.k8s.io/v1"}},
	  {"name": "token", "execConfig": {"command": "/bin/token", "args": ["get"], "env": [{"name": "A", "value": "config"}],
	    "provideClusterInfo": true}, "profileSourcedCLIArgsPolicy": "Append", "profileSourcedEnvVarsPolicy": "AppendIfNotExists"}
	]}`
	if err := os.WriteFile(path, []byte(file), 0o600); err != nil {
		t.Fatal(err)
	}
	access, err := multicluster.LoadAccessConfig(path)
	if err != nil {
		t.Fatal(err)
	}
	cp := &multicluster.ClusterProfile{}
	cp.Name = "east"
	cp.Status.CredentialProviders = []multicluster.ProfileAccess{{Name: "token", Cluster: multicluster.ProfileCluster{Server: "https://old"}}}
	cp.Status.AccessProviders = []multicluster.ProfileAccess{{Name: "token", Cluster: multicluster.ProfileCluster{
		Server: "https://east:6443", TLSServerName: "api.east", CertificateAuthorityData: []byte("CA"), ProxyURL: "socks5://proxy:1080",
		DisableCompression: true,
		Extensions: []multicluster.ProfileExtension{
			{Name: multicluster.ExecExtension, Extension: []byte(`{"audience":"east"}`)},
			{Name: multicluster.ExecArgsExtension, Extension: []byte(`["--cluster","east"]`)},
			{Name: multicluster.ExecEnvExtension, Extension: []byte(`{"A":"profile","B":"profile"}`)},
		},
	}}}
	cfg, err := access.ClusterConfig(t.Context(), cp)
	if err != nil {
		t.Fatal(err)
	}
	want := &apiclient.Config{
		Host: "https://east:6443", TLS: apiclient.TLSConfig{CAData: []byte("CA"), ServerName: "api.east"},
		ProxyURL: "socks5://proxy:1080", Compression: apiclient.CompressionNone,
		Exec: &apiclient.ExecConfig{Command: "/bin/token", Args: []string{"get", "--cluster", "east"},
			Env:                []apiclient.ExecEnvVar{{Name: "A", Value: "config"}, {Name: "B", Value: "profile"}},
			ProvideClusterInfo: true, ClusterConfig: []byte(`{"audience":"east"}`)},
	}
	if !reflect.DeepEqual(cfg, want) {
		t.Errorf("config\n%+v\n%+v, want\n%+v\n%+v", cfg, cfg.Exec, want, want.Exec)
	}

	// Replace: the profile's variables win; the deprecated field alone still works.
	access.Providers[1].ProfileEnv = multicluster.ProfileEnvReplace
	cfg, err = access.ClusterConfig(t.Context(), cp)
	if err != nil {
		t.Fatal(err)
	}
	if got := cfg.Exec.Env; !slices.Equal(got, []apiclient.ExecEnvVar{{Name: "A", Value: "profile"}, {Name: "B", Value: "profile"}}) {
		t.Errorf("env with Replace: %v", got)
	}
	cp.Status.AccessProviders = nil
	if cfg, err = access.ClusterConfig(t.Context(), cp); err != nil || cfg.Host != "https://old" {
		t.Errorf("from credentialProviders: %v, %v", cfg, err)
	}
	cp.Status.CredentialProviders = []multicluster.ProfileAccess{{Name: "kubeconfig"}}
	if _, err := access.ClusterConfig(t.Context(), cp); !errors.Is(err, multicluster.ErrNoAccessProvider) {
		t.Errorf("a profile naming no configured provider: %v, want ErrNoAccessProvider", err)
	}
}

func TestNewClusterProfilesRefusesWhatCannotWork(t *testing.T) {
	if _, err := multicluster.NewClusterProfiles(nil, multicluster.ClusterProfilesOptions{Access: &multicluster.AccessConfig{}}); err == nil {
		t.Error("a nil client was accepted")
	}
	api, err := apiclient.New(&apiclient.Config{Host: "https://hub"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := multicluster.NewClusterProfiles(api, multicluster.ClusterProfilesOptions{}); err == nil {
		t.Error("options with neither Config nor Access were accepted")
	}
	if _, err := multicluster.LoadAccessConfig(filepath.Join(t.TempDir(), "none.json")); err == nil {
		t.Error("a missing provider file was read")
	}
}
