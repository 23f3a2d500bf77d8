// Package ctlbench is what the two controller processes of benchctl share (the informerkit
// one and the controller-runtime one): the names of the benchmark's objects and the
// protocol with the driver, and what an Application's ConfigMap holds. It imports only the
// standard library and the Application types, so that it adds the same few kilobytes to
// both binaries.
//
// The protocol is lines on stdin and stdout. The controller prints "ready {json}" once
// every primary object it expects has been reconciled once (its caches are synced then:
// neither framework starts a controller's workers before its sources sync). The driver
// writes "stats" (answered by "stats {json}"), "expect TAG N" before it writes N stamped
// changes (answered by "done {json}" once the controller has reconciled all N), and closes
// stdin to stop the controller. Built with the tag benchprofile, it also takes "profile
// FILE" and "profile-stop" (a CPU profile).
package ctlbench

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/informerkit/informerkit/bench/internal/fleet/apptypes"
)

// The benchmark's objects.
const (
	// StampAnnotation is the driver's stamp on a change: "TAG/UNIXNANO", the wall clock
	// just before the change was written. A reconcile that reads it reports the delay.
	StampAnnotation = "bench.informerkit.dev/stamp"
	// ManifestSuffix names an Application's ConfigMap: the Application's name and this.
	ManifestSuffix = "-manifest"
	// AppGroup and AppVersion are the Applications' API group and version.
	AppGroup, AppVersion = "bench.informerkit.dev", "v1"
	// OwnerIndex is the name of the Pods' index by controlling Deployment.
	OwnerIndex = "bench.owner"
)

// Stats is the controller's answer to "stats".
type Stats struct {
	Goroutines int   `json:"goroutines"`
	Reconciles int64 `json:"reconciles"`
	Writes     int64 `json:"writes"`
	Errors     int64 `json:"errors"`
	// LastReconcile is the wall clock (Unix nanoseconds) at the end of the last reconcile.
	LastReconcile int64 `json:"last_reconcile"`
}

// Done is the controller's report once it has reconciled every change of a tag.
type Done struct {
	Stats
	// Latencies are the delays from each stamp to the first reconcile that read it, in
	// milliseconds, sorted.
	Latencies []float64 `json:"latencies_ms"`
}

// Reporter counts a controller's reconciles and talks to the driver.
type Reporter struct {
	expect int // primaries reconciled once before "ready"

	reconciles, writes, errs, last atomic.Int64

	outMu sync.Mutex
	out   io.Writer

	mu      sync.Mutex
	initial map[string]struct{}
	ready   bool
	tag     string
	want    int
	stamps  map[string]struct{}
	lat     []float64
}

// NewReporter returns a Reporter that says "ready" once expect distinct primaries have
// been reconciled, and writes to stdout.
func NewReporter(expect int) *Reporter { return NewReporterTo(expect, os.Stdout) }

// NewReporterTo is NewReporter writing to w.
func NewReporterTo(expect int, w io.Writer) *Reporter {
	return &Reporter{expect: expect, out: w, initial: map[string]struct{}{}, stamps: map[string]struct{}{}}
}

// Wrote counts a write to the API server.
func (r *Reporter) Wrote() { r.writes.Add(1) }

// Reconciled records the end of a reconcile of kind's object key; stamp is the object's
// StampAnnotation ("" if none), err the reconcile's error.
func (r *Reporter) Reconciled(kind, key, stamp string, err error) {
	now := time.Now()
	r.reconciles.Add(1)
	r.last.Store(now.UnixNano())
	if err != nil {
		r.errs.Add(1)
	}
	r.mu.Lock()
	var ready, done bool
	if !r.ready {
		r.initial[kind+"/"+key] = struct{}{}
		if len(r.initial) >= r.expect {
			r.ready, ready, r.initial = true, true, nil
		}
	}
	if tag, ns, ok := strings.Cut(stamp, "/"); ok && err == nil && tag == r.tag && r.want > 0 {
		if _, seen := r.stamps[stamp]; !seen {
			if t, perr := strconv.ParseInt(ns, 10, 64); perr == nil {
				r.stamps[stamp] = struct{}{}
				r.lat = append(r.lat, float64(now.UnixNano()-t)/1e6)
				done = len(r.lat) == r.want
			}
		}
	}
	var lat []float64
	if done {
		lat, r.lat, r.want = r.lat, nil, 0
	}
	r.mu.Unlock()
	if ready {
		r.send("ready", r.stats())
	}
	if done {
		slices.Sort(lat)
		r.send("done", Done{Stats: r.stats(), Latencies: lat})
	}
}

func (r *Reporter) stats() Stats {
	return Stats{Goroutines: runtime.NumGoroutine(), Reconciles: r.reconciles.Load(), Writes: r.writes.Load(),
		Errors: r.errs.Load(), LastReconcile: r.last.Load()}
}

func (r *Reporter) send(what string, v any) {
	b, _ := json.Marshal(v)
	r.outMu.Lock()
	defer r.outMu.Unlock()
	fmt.Fprintf(r.out, "%s %s\n", what, b)
}

// startProfile and stopProfile are set with the build tag benchprofile (profile.go).
var startProfile, stopProfile func(path string) error

// Serve reads the driver's commands from in until it closes, then calls stop.
func (r *Reporter) Serve(ctx context.Context, in io.Reader, stop context.CancelFunc) {
	defer stop()
	sc := bufio.NewScanner(in)
	for sc.Scan() && ctx.Err() == nil {
		f := strings.Fields(sc.Text())
		switch {
		case len(f) == 1 && f[0] == "stats":
			r.send("stats", r.stats())
		case len(f) == 3 && f[0] == "expect":
			n, err := strconv.Atoi(f[2])
			if err != nil || n <= 0 {
				r.send("error", map[string]string{"error": "bad expect: " + sc.Text()})
				continue
			}
			r.mu.Lock()
			r.tag, r.want, r.lat, r.stamps = f[1], n, nil, map[string]struct{}{}
			r.mu.Unlock()
		case len(f) == 2 && f[0] == "profile" && startProfile != nil:
			if err := startProfile(f[1]); err != nil {
				r.send("error", map[string]string{"error": err.Error()})
			}
		case len(f) == 1 && f[0] == "profile-stop" && stopProfile != nil:
			if err := stopProfile(""); err != nil {
				r.send("error", map[string]string{"error": err.Error()})
			}
		default:
			r.send("error", map[string]string{"error": "unknown command: " + sc.Text()})
		}
	}
}

// ManifestData is what an Application's ConfigMap holds: where its manifests come from and
// where they go.
func ManifestData(spec apptypes.ApplicationSpec) map[string]string {
	d := map[string]string{"repoURL": spec.Source.RepoURL, "path": spec.Source.Path,
		"targetRevision": spec.Source.TargetRevision, "project": spec.Project,
		"server": spec.Destination.Server, "namespace": spec.Destination.Namespace}
	if h := spec.Source.Helm; h != nil {
		var b strings.Builder
		for _, p := range h.Parameters {
			fmt.Fprintf(&b, "%s=%s\n", p.Name, p.Value)
		}
		d["helm.parameters"] = b.String()
		d["helm.valueFiles"] = strings.Join(h.ValueFiles, ",")
	}
	return d
}
