package apiclient

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/informerkit/informerkit/meta"
)

// Reachability probes. While a caller waits in AwaitRecovery after the server could not be
// reached, or while a request has waited suspectAfter for its answer, the client asks the
// server every probeInterval whether it answers (GET /readyz, a request every
// kube-apiserver answers cheaply, to any user), each probe waiting at most probeTimeout.
// One probe at a time per client, whatever the number of waiters.
const (
	probeInterval = time.Second
	probeTimeout  = 2 * time.Second
	suspectAfter  = 2 * time.Second
	probePath     = "/readyz"
)

// IsUnreachable reports whether err means that the server did not answer: a connection
// that could not be made or broke before the answer, a *TimeoutError of a request, or an
// answer that a server or a proxy in front of it gives when it cannot serve (500, 502, 503,
// 504 without Retry-After). A server that names a delay (Retry-After) or answers anything
// else is reachable: its answer stands.
func IsUnreachable(err error) bool {
	if err == nil {
		return false
	}
	if errors.Is(err, errSuperseded) {
		return true
	}
	var te *TimeoutError
	if errors.As(err, &te) {
		return te.Op != "exec plugin"
	}
	if st, ok := meta.AsStatus(err); ok {
		if _, ok := st.RetryAfter(); ok {
			return false
		}
		switch st.Code {
		case http.StatusInternalServerError, http.StatusBadGateway, http.StatusServiceUnavailable, http.StatusGatewayTimeout:
			return true
		}
		return false
	}
	var de *DecodeError
	var re *RedirectError
	if errors.As(err, &de) || errors.As(err, &re) {
		return false
	}
	var oe *net.OpError
	if errors.As(err, &oe) {
		return true // a connection that could not be made or broke, a dial's deadline included
	}
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return false // the caller's own context
	}
	return retryable(0, err)
}

// reachability tracks, for one client, the attempts waiting for the server and the outages
// that callers wait out (AwaitRecovery).
//
// An outage is suspected when a caller, after a failed request, asks to wait for the server,
// or when a request has waited suspectAfter for its answer: the client probes the server at
// once and then every probeInterval, for as long as someone waits. If the first probe is
// answered, the server is fine (the request was slow, or its failure was its own): no
// recovery is signalled and callers wait for their own deadline (their backoff). Once a
// probe has failed the outage is confirmed, and the first answered probe ends it: every
// waiter is woken together, and every attempt that was sent before that probe and still
// waits for its answer is abandoned (errSuperseded): it waits on a connection, or a dial,
// from before the outage, which may never complete (a lost SYN), where a new one is answered
// at once.
type reachability struct {
	c *Client

	mu       sync.Mutex
	attempts map[*attempt]struct{}
	// down: an outage is suspected; confirmed: a probe failed during it.
	down, confirmed bool
	// recovered is closed when the current outage ends with an answered probe.
	recovered chan struct{}
	// lastRecovery is when the probe that ended the last confirmed outage was sent.
	lastRecovery time.Time
	// interest counts the callers in AwaitRecovery and the suspected attempts; the probe
	// loop runs only while it is positive.
	interest int
	prober   *prober
}

// prober is one run of the probe loop.
type prober struct {
	cancel context.CancelFunc
	done   chan struct{}
}

func (r *reachability) register(a *attempt) {
	r.mu.Lock()
	if r.attempts == nil {
		r.attempts = map[*attempt]struct{}{}
	}
	r.attempts[a] = struct{}{}
	r.mu.Unlock()
}

// unregister forgets a (it was answered, or has ended); it may be called more than once.
func (r *reachability) unregister(a *attempt) {
	r.mu.Lock()
	delete(r.attempts, a)
	var stop *prober
	if a.suspected {
		a.suspected = false
		stop = r.loseInterestLocked()
	}
	r.mu.Unlock()
	if stop != nil {
		stop.cancel() // it exits at once; nobody needs to wait for it here
	}
}

// suspect is called when a has waited suspectAfter for its answer.
func (r *reachability) suspect(a *attempt) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, waiting := r.attempts[a]; !waiting || a.suspected {
		return
	}
	a.suspected = true
	r.gainInterestLocked()
}

// gainInterestLocked records one more party interested in the outage, suspecting one if
// none is, and starts the probe loop if it is not running.
func (r *reachability) gainInterestLocked() chan struct{} {
	if !r.down {
		r.down, r.confirmed = true, false
		r.recovered = make(chan struct{})
	}
	r.interest++
	if r.prober == nil {
		ctx, cancel := context.WithCancel(context.Background())
		p := &prober{cancel: cancel, done: make(chan struct{})}
		r.prober = p
		go r.probeLoop(ctx, p)
	}
	return r.recovered
}

// loseInterestLocked records one party less and returns the probe loop to stop when none is
// left.
func (r *reachability) loseInterestLocked() *prober {
	r.interest--
	if r.interest > 0 || r.prober == nil {
		return nil
	}
	stop := r.prober
	r.prober = nil
	return stop
}

// AwaitRecovery waits until ctx is done or until the server, after err made a request sent
// at since fail, is reachable again, and reports whether it is. It is meant for a caller's
// backoff: give ctx the backoff delay as its deadline, and try again at once when it returns
// true. For an err that does not mean the server is unreachable (IsUnreachable) it just waits
// for ctx.
//
// One probe at a time is sent per client however many callers wait, and all of them are
// woken by the same answered probe, within about probeInterval+probeTimeout (3 s) of the
// server answering again. A failure the first probe finds already over (the server answers
// at once) is not an outage: the caller waits for ctx. AwaitRecovery returns true at once
// when an outage ended after since (err belongs to it: for example the request was
// abandoned because of the recovery).
func (c *Client) AwaitRecovery(ctx context.Context, err error, since time.Time) bool {
	if !IsUnreachable(err) {
		<-ctx.Done()
		return false
	}
	r := &c.reach
	r.mu.Lock()
	if !r.lastRecovery.IsZero() && r.lastRecovery.After(since) {
		r.mu.Unlock()
		return true
	}
	ch := r.gainInterestLocked()
	r.mu.Unlock()

	ok := false
	select {
	case <-ch:
		ok = true
	case <-ctx.Done():
	}

	r.mu.Lock()
	stop := r.loseInterestLocked()
	r.mu.Unlock()
	if stop != nil {
		stop.cancel()
		<-stop.done // no probe outlives its last waiter
	}
	return ok
}

// probeLoop probes until an outage ends or ctx is cancelled (no waiter left).
func (r *reachability) probeLoop(ctx context.Context, p *prober) {
	defer close(p.done)
	defer func() {
		r.mu.Lock()
		if r.prober == p {
			r.prober = nil
		}
		r.mu.Unlock()
	}()
	for {
		start := time.Now()
		answered := r.c.probe(ctx)
		if ctx.Err() != nil {
			return
		}
		r.mu.Lock()
		if !r.down {
			r.mu.Unlock()
			return
		}
		if !answered {
			r.confirmed = true
			r.mu.Unlock()
		} else {
			r.down = false
			if r.confirmed {
				r.lastRecovery = start
				close(r.recovered)
				for a := range r.attempts {
					if a.start.Before(start) {
						a.cancel(errSuperseded)
					}
				}
				r.c.logger.Debug("apiclient: the server answers again", "host", r.c.base.Host)
			}
			r.mu.Unlock()
			return
		}
		t := time.NewTimer(time.Until(start.Add(probeInterval)))
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-t.C:
		}
	}
}

// probe asks the server whether it answers: any HTTP answer below 500 counts (a server
// without /readyz answers 404; one that forbids it, 403).
func (c *Client) probe(ctx context.Context) bool {
	pctx, cancel := context.WithTimeout(ctx, probeTimeout)
	defer cancel()
	hreq, err := c.newHTTPRequest(pctx, Request{Method: http.MethodGet, Path: probePath})
	if err != nil {
		return false
	}
	resp, err := c.http.Do(hreq)
	if err != nil {
		return false
	}
	io.Copy(io.Discard, io.LimitReader(resp.Body, 4<<10))
	resp.Body.Close()
	return resp.StatusCode < 500
}
