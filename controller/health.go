package controller

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strings"
	"time"
)

// Handler returns the manager's HTTP endpoints, as served on HTTPAddress:
//
//   - /healthz: liveness; "ok" while the manager runs and its health checks pass.
//   - /readyz: readiness; fails until the caches have synced, when an informer has gone
//     longer than MaxStaleness without an event, bookmark, list or re-opened watch, or when a
//     readiness check fails. A standby replica (not leading) is ready: it serves a warm cache
//     (or, with LeaderElectionColdStandby, none until it leads).
//   - /metrics: the Registry in the Prometheus text format.
//   - /debug/informers: the Inventory as JSON (every informer, its objects, estimated
//     bytes, type and who acquired it).
//
// Health answers follow the kube-apiserver's: 200 "ok", or 500 with one line per check
// ("[+]name ok" / "[-]name failed: reason"); ?verbose lists the checks on success too.
func (m *Manager) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("/healthz", func(w http.ResponseWriter, r *http.Request) {
		m.mu.Lock()
		checks := append([]namedCheck{{"ping", func(*http.Request) error { return nil }}}, m.healthz...)
		m.mu.Unlock()
		serveChecks(w, r, "healthz", checks)
	})
	mux.HandleFunc("/readyz", func(w http.ResponseWriter, r *http.Request) {
		m.mu.Lock()
		checks := append([]namedCheck{{"informers", m.informersReady}}, m.readyz...)
		m.mu.Unlock()
		serveChecks(w, r, "readyz", checks)
	})
	mux.Handle("/metrics", m.registry)
	mux.HandleFunc("/debug/informers", m.serveInventory)
	return mux
}

// informersReady fails before the caches synced and for every informer staler than
// MaxStaleness.
func (m *Manager) informersReady(*http.Request) error {
	select {
	case <-m.synced:
	default:
		if m.cold && !m.IsLeader() {
			return nil // a cold standby runs no caches until it leads
		}
		var waiting []string
		for _, i := range m.trackedInformers() {
			if !i.inf.HasSynced() {
				waiting = append(waiting, i.name)
			}
		}
		if len(waiting) == 0 {
			return fmt.Errorf("caches not synced yet")
		}
		return fmt.Errorf("caches not synced yet: %s", strings.Join(waiting, ", "))
	}
	var stale []string
	for _, i := range m.trackedInformers() {
		if s := i.inf.Staleness(); s > m.opts.MaxStaleness {
			stale = append(stale, fmt.Sprintf("%s (%v without news, limit %v)", i.name, s.Round(time.Millisecond), m.opts.MaxStaleness))
		}
	}
	if len(stale) > 0 {
		return fmt.Errorf("stale informers: %s", strings.Join(stale, ", "))
	}
	return nil
}

func serveChecks(w http.ResponseWriter, r *http.Request, what string, checks []namedCheck) {
	var b strings.Builder
	failed := false
	for _, c := range checks {
		if err := c.check(r); err != nil {
			failed = true
			fmt.Fprintf(&b, "[-]%s failed: %v\n", c.name, err)
		} else {
			fmt.Fprintf(&b, "[+]%s ok\n", c.name)
		}
	}
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	if failed {
		w.WriteHeader(http.StatusInternalServerError)
		fmt.Fprintf(w, "%s%s check failed\n", b.String(), what)
		return
	}
	if _, verbose := r.URL.Query()["verbose"]; verbose {
		fmt.Fprintf(w, "%s%s check passed\n", b.String(), what)
		return
	}
	fmt.Fprint(w, "ok")
}

// Checker is a health or readiness check: nil means healthy.
type Checker func(req *http.Request) error

type namedCheck struct {
	name  string
	check Checker
}

// AddHealthzCheck adds a check to /healthz (liveness: failing means "restart me").
func (m *Manager) AddHealthzCheck(name string, check Checker) error {
	return m.addCheck(&m.healthz, name, check)
}

// AddReadyzCheck adds a check to /readyz (readiness: failing means "do not send me work").
func (m *Manager) AddReadyzCheck(name string, check Checker) error {
	return m.addCheck(&m.readyz, name, check)
}

func (m *Manager) addCheck(list *[]namedCheck, name string, check Checker) error {
	if name == "" || check == nil {
		return errors.New("controller: a check needs a name and a function")
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, c := range *list {
		if c.name == name {
			return fmt.Errorf("controller: check %q already added", name)
		}
	}
	*list = append(*list, namedCheck{name, check})
	return nil
}

// HTTPAddr returns the address the HTTP endpoints listen on, once Start has bound it ("" before,
// or without HTTPAddress).
func (m *Manager) HTTPAddr() string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.httpAddr
}

// serveHTTP starts the HTTP endpoints if configured and returns their stop function.
func (m *Manager) serveHTTP() (func(), error) {
	if m.opts.HTTPAddress == "" {
		return func() {}, nil
	}
	ln, err := net.Listen("tcp", m.opts.HTTPAddress)
	if err != nil {
		return nil, fmt.Errorf("controller: HTTP endpoints: %w", err)
	}
	m.mu.Lock()
	m.httpAddr = ln.Addr().String()
	m.mu.Unlock()
	srv := &http.Server{Handler: m.Handler(), ReadHeaderTimeout: 10 * time.Second}
	done := make(chan struct{})
	go func() {
		defer close(done)
		if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			m.log.Error("HTTP endpoints stopped", "err", err)
		}
	}()
	m.log.Info("serving /healthz, /readyz and /metrics", "address", m.httpAddr)
	return func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(ctx)
		<-done
	}, nil
}
