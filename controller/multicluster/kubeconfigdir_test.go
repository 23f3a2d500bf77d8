package multicluster_test

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/informerkit/informerkit/apiclient"
	"github.com/informerkit/informerkit/apitest"
	"github.com/informerkit/informerkit/controller"
	"github.com/informerkit/informerkit/controller/multicluster"
)

// setLog is a ClusterSet that records what a Provider tells it.
type setLog struct {
	mu    sync.Mutex
	calls []string
	hosts map[string]string
}

func (s *setLog) Set(name string, cfg *apiclient.Config) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.calls = append(s.calls, "set "+name)
	s.hosts[name] = cfg.Host
	return nil
}

func (s *setLog) Remove(name string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.calls = append(s.calls, "remove "+name)
	delete(s.hosts, name)
}

// take returns the calls since the last take, sorted, and the hosts now.
func (s *setLog) take() ([]string, map[string]string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	c := s.calls
	s.calls = nil
	slices.Sort(c)
	h := map[string]string{}
	for k, v := range s.hosts {
		h[k] = v
	}
	return c, h
}

func kubeconfig(server string) string {
	return fmt.Sprintf(`apiVersion: v1
kind: Config
clusters:
- name: c
  cluster: {server: %q}
users:
- name: u
  user: {token: secret}
contexts:
- name: ctx
  context: {cluster: c, user: u}
current-context: ctx
`, server)
}

func write(t *testing.T, path, content string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
}

// A KubeconfigDir reports a cluster per kubeconfig file, named after the file, skipping
// hidden files, subdirectories and names that are no cluster name; a changed file sets its
// cluster again, a broken one keeps its last Config, a removed one removes it.
func TestKubeconfigDirFollowsItsFiles(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		dir := t.TempDir()
		write(t, filepath.Join(dir, "east.yaml"), kubeconfig("https://east.example:6443"))
		write(t, filepath.Join(dir, "west.kubeconfig"), kubeconfig("https://west.example:6443"))
		write(t, filepath.Join(dir, ".hidden.yaml"), kubeconfig("https://hidden.example"))
		write(t, filepath.Join(dir, "bad name.yaml"), kubeconfig("https://bad.example"))
		if err := os.Mkdir(filepath.Join(dir, "sub.yaml"), 0o700); err != nil {
			t.Fatal(err)
		}
		p, err := multicluster.NewKubeconfigDir(dir, multicluster.KubeconfigDirOptions{Interval: time.Second, Logger: quietLogger()})
		if err != nil {
			t.Fatal(err)
		}
		set := &setLog{hosts: map[string]string{}}
		ctx, cancel := context.WithCancel(t.Context())
		done := make(chan error, 1)
		go func() { done <- p.Run(ctx, set) }()
		synctest.Wait()
		calls, hosts := set.take()
		if want := []string{"set east", "set west"}; !slices.Equal(calls, want) {
			t.Fatalf("calls %q, want %q", calls, want)
		}
		if hosts["east"] != "https://east.example:6443" || hosts["west"] != "https://west.example:6443" {
			t.Fatalf("hosts %v", hosts)
		}

		time.Sleep(time.Second) // a reading with nothing changed
		synctest.Wait()
		if calls, _ := set.take(); len(calls) != 0 {
			t.Fatalf("calls %q with nothing changed", calls)
		}

		write(t, filepath.Join(dir, "east.yaml"), kubeconfig("https://east2.example:6443"))
		write(t, filepath.Join(dir, "west.kubeconfig"), "clusters: [") // being rewritten
		write(t, filepath.Join(dir, "north.yml"), kubeconfig("https://north.example"))
		time.Sleep(time.Second)
		synctest.Wait()
		calls, hosts = set.take()
		if want := []string{"set east", "set north"}; !slices.Equal(calls, want) {
			t.Fatalf("calls %q after a change, a broken file and a new one, want %q", calls, want)
		}
		if hosts["east"] != "https://east2.example:6443" || hosts["west"] != "https://west.example:6443" {
			t.Fatalf("hosts %v", hosts)
		}

		if err := os.Remove(filepath.Join(dir, "north.yml")); err != nil {
			t.Fatal(err)
		}
		time.Sleep(time.Second)
		synctest.Wait()
		if calls, _ := set.take(); !slices.Equal(calls, []string{"remove north"}) {
			t.Fatalf("calls %q after a file was removed", calls)
		}
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Run: %v", err)
		}
	})
}

func TestKubeconfigDirRefusesBadOptionsAndAMissingDirectory(t *testing.T) {
	if _, err := multicluster.NewKubeconfigDir("", multicluster.KubeconfigDirOptions{}); err == nil {
		t.Error("an empty directory was accepted")
	}
	if _, err := multicluster.NewKubeconfigDir("x", multicluster.KubeconfigDirOptions{Interval: -1}); err == nil {
		t.Error("a negative Interval was accepted")
	}
	p, err := multicluster.NewKubeconfigDir(filepath.Join(t.TempDir(), "missing"), multicluster.KubeconfigDirOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Run(t.Context(), &setLog{hosts: map[string]string{}}); err == nil {
		t.Error("Run of a missing directory returned nil")
	}
}

// A Fleet of a KubeconfigDir engages the clusters of the files apitest writes (loopback
// servers: a kubeconfig holds no in-memory dialer) and lets go of one whose file goes.
func TestFleetOfAKubeconfigDir(t *testing.T) {
	dir := t.TempDir()
	var servers []*apitest.Server
	for _, name := range []string{"a", "b"} {
		s, err := apitest.Start(apitest.Options{RequestLogSize: requestLog})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(s.Close)
		seed(t, s, name)
		if err := s.WriteKubeconfig(filepath.Join(dir, name+".yaml")); err != nil {
			t.Fatal(err)
		}
		servers = append(servers, s)
	}
	p, err := multicluster.NewKubeconfigDir(dir, multicluster.KubeconfigDirOptions{Interval: 10 * time.Millisecond, Logger: quietLogger()})
	if err != nil {
		t.Fatal(err)
	}
	fleet := startProviderFleet(t, newHub(t), func(*controller.Manager) (multicluster.Provider, error) { return p, nil })
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	waitClusters(t, ctx, fleet, "a", "b")
	for _, s := range servers {
		if err := s.WaitFor(ctx, func() bool { return len(s.Watches("configmaps")) == 1 }); err != nil {
			t.Fatalf("no watch of ConfigMaps on a cluster's server: %v", err)
		}
	}
	if err := os.Remove(filepath.Join(dir, "b.yaml")); err != nil {
		t.Fatal(err)
	}
	waitClusters(t, ctx, fleet, "a")
	if err := servers[1].WaitFor(ctx, func() bool { return len(servers[1].Watches("configmaps")) == 0 }); err != nil {
		t.Errorf("b's watch stayed after its file was removed: %v", err)
	}
}

func quietLogger() *slog.Logger { return slog.New(slog.DiscardHandler) }
