package compat

import (
	"bytes"
	"context"
	"flag"
	"strings"
	"sync"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clientfeatures "k8s.io/client-go/features"
	clientfeaturestesting "k8s.io/client-go/features/testing"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/klog/v2"

	"github.com/informerkit/informerkit/apitest"
)

// env is one apitest server and a rest.Config for it with client-go's defaults (protobuf for
// built-in kinds, as kubernetes.NewForConfig sets up).
type env struct {
	t   *testing.T
	s   *apitest.Server
	cfg *rest.Config
	ctx context.Context
}

func newEnv(t *testing.T, opts apitest.Options) *env {
	t.Helper()
	if opts.Token == "" {
		opts.Token = "compat"
	}
	opts.TLS = true
	s, err := apitest.Start(opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	cfg, err := clientcmd.RESTConfigFromKubeConfig(s.Kubeconfig())
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	t.Cleanup(cancel)
	return &env{t: t, s: s, cfg: cfg, ctx: ctx}
}

// klogCapture collects what client-go logs, to assert that a scenario caused no
// client-side errors (decode failures, failed lists and watches) the real server would not
// cause. klog is global: tests that capture do not run in parallel.
type klogCapture struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (c *klogCapture) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.buf.Write(p)
}

func (c *klogCapture) String() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.buf.String()
}

var klogOnce sync.Once

func captureKlog(t *testing.T) *klogCapture {
	klogOnce.Do(func() {
		fs := flag.NewFlagSet("klog", flag.ContinueOnError)
		klog.InitFlags(fs)
		fs.Set("logtostderr", "false")
		fs.Set("alsologtostderr", "false")
		fs.Set("stderrthreshold", "FATAL")
	})
	c := &klogCapture{}
	klog.SetOutput(c)
	t.Cleanup(func() {
		klog.Flush()
		klog.SetOutput(nopWriter{})
	})
	return c
}

type nopWriter struct{}

func (nopWriter) Write(p []byte) (int, error) { return len(p), nil }

// clientErrors returns the lines of the captured log at warning level or above (klog
// prefixes them with W, E or F).
func (c *klogCapture) clientErrors() []string {
	klog.Flush()
	var out []string
	for _, l := range strings.Split(c.String(), "\n") {
		if len(l) > 0 && (l[0] == 'W' || l[0] == 'E' || l[0] == 'F') {
			out = append(out, l)
		}
	}
	return out
}

// waitFor polls cond (client-go's caches have no change notification to wait on) until it
// holds or the env's context ends.
func (e *env) waitFor(what string, cond func() bool) {
	e.t.Helper()
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for !cond() {
		select {
		case <-e.ctx.Done():
			e.t.Fatalf("timed out waiting for %s", what)
		case <-tick.C:
		}
	}
}

// setWatchList turns client-go's WatchListClient feature (on by default in v0.36) on or off
// for the test.
func setWatchList(t *testing.T, on bool) {
	clientfeaturestesting.SetFeatureDuringTest(t, clientfeatures.WatchListClient, on)
}

func metaAccessor(o any) (metav1.Object, error) { return meta.Accessor(o) }
