package ctlbench

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/informerkit/informerkit/bench/internal/fleet/apptypes"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// driver is the test's side of the protocol: commands in, lines out.
type driver struct {
	in    *io.PipeWriter
	lines *bufio.Scanner
	done  chan struct{}
}

func start(t *testing.T, expect int) (*Reporter, *driver) {
	t.Helper()
	r := NewReporter(expect)
	outR, outW := io.Pipe()
	inR, inW := io.Pipe()
	r.out = outW
	d := &driver{in: inW, lines: bufio.NewScanner(outR), done: make(chan struct{})}
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		defer close(d.done)
		r.Serve(ctx, inR, cancel)
	}()
	t.Cleanup(func() {
		inW.Close()
		<-d.done
		outW.Close()
	})
	return r, d
}

// next reads the next line (reads must keep up with the Reporter, which writes to a pipe).
func (d *driver) next(t *testing.T) (string, string) {
	t.Helper()
	if !d.lines.Scan() {
		t.Fatal("no line")
	}
	what, body, _ := strings.Cut(d.lines.Text(), " ")
	return what, body
}

func TestReadyOnceEveryPrimaryIsReconciled(t *testing.T) {
	r, d := start(t, 2)
	go func() {
		r.Reconciled("Deployment", "a/x", "", nil)
		r.Reconciled("Deployment", "a/x", "", nil) // the same primary again: not a second one
		r.Wrote()
		r.Reconciled("Application", "a/x", "", errors.New("conflict"))
	}()
	w, body := d.next(t)
	line := w + " " + body
	var s Stats
	if w, body, _ := strings.Cut(line, " "); w != "ready" || json.Unmarshal([]byte(body), &s) != nil {
		t.Fatalf("got %q, want ready and its stats", line)
	}
	if s.Reconciles != 3 || s.Writes != 1 || s.Errors != 1 || s.Goroutines == 0 || s.LastReconcile == 0 {
		t.Fatalf("stats %+v", s)
	}
}

func TestDoneReportsEveryStampOnce(t *testing.T) {
	r, d := start(t, 1)
	go r.Reconciled("Deployment", "a/x", "", nil)
	if w, _ := d.next(t); w != "ready" {
		t.Fatalf("got %q, want ready", w)
	}
	fmt.Fprintln(d.in, "expect t1 2")
	fmt.Fprintln(d.in, "stats") // answered once expect is read
	if w, _ := d.next(t); w != "stats" {
		t.Fatalf("got %q, want stats", w)
	}
	stamp := func(tag string, ago time.Duration) string {
		return fmt.Sprintf("%s/%d", tag, time.Now().Add(-ago).UnixNano())
	}
	first := stamp("t1", 30*time.Millisecond)
	go func() {
		r.Reconciled("Deployment", "a/x", first, nil)
		r.Reconciled("Deployment", "a/x", first, nil)                                // seen: not counted twice
		r.Reconciled("Deployment", "a/y", stamp("t0", time.Second), nil)             // another tag
		r.Reconciled("Deployment", "a/y", stamp("t1", time.Second), errors.New("x")) // failed: not yet
		r.Reconciled("Deployment", "a/y", stamp("t1", 10*time.Millisecond), nil)
	}()
	w, body := d.next(t)
	var done Done
	if w != "done" || json.Unmarshal([]byte(body), &done) != nil {
		t.Fatalf("got %q %s, want done", w, body)
	}
	if len(done.Latencies) != 2 || done.Latencies[0] > done.Latencies[1] || done.Latencies[1] < 30 {
		t.Fatalf("latencies %v: want two, sorted, the larger at least 30 ms", done.Latencies)
	}
}

func TestBadCommandsAreAnswered(t *testing.T) {
	_, d := start(t, 1)
	for _, c := range []string{"expect t x", "what"} {
		fmt.Fprintln(d.in, c)
		if w, body := d.next(t); w != "error" || !strings.Contains(body, c) {
			t.Fatalf("%q: got %q %s", c, w, body)
		}
	}
}

func TestManifestData(t *testing.T) {
	spec := apptypes.ApplicationSpec{Project: "p", Source: apptypes.AppSource{RepoURL: "r", TargetRevision: "main",
		Helm: &apptypes.HelmSource{ValueFiles: []string{"a.yaml", "b.yaml"}, Parameters: []apptypes.HelmParameter{{Name: "k", Value: "v"}}}}}
	d := ManifestData(spec)
	if d["repoURL"] != "r" || d["targetRevision"] != "main" || d["helm.parameters"] != "k=v\n" || d["helm.valueFiles"] != "a.yaml,b.yaml" {
		t.Fatalf("%v", d)
	}
	spec.Source.TargetRevision = "v2"
	if ManifestData(spec)["targetRevision"] != "v2" {
		t.Fatal("a new revision does not change the data")
	}
}
