package multicluster

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/informerkit/informerkit/apiclient"
	"github.com/informerkit/informerkit/controller/client"
	"github.com/informerkit/informerkit/controller/events"
	"github.com/informerkit/informerkit/informer"
)

// Cluster is one engaged cluster of a Fleet: its API client, its informer factory, the
// controller client that reads from that factory's caches, and its event recorders. It
// lives from the engagement to the disengagement: then its Context is done, its informers
// stop and its clients are closed. A reconciler gets the Cluster its Request names.
type Cluster struct {
	name    string
	src     apiclient.Config // as the Provider gave it
	cfg     apiclient.Config // with the Fleet's defaults
	api     *apiclient.Client
	factory *informer.Factory
	client  *client.Client
	log     *slog.Logger
	fleet   *Fleet

	ctx    context.Context
	cancel context.CancelCauseFunc

	mu         sync.Mutex
	events     *events.Broadcaster // created by the first EventRecorderFor
	eventsDone chan struct{}       // closed when the broadcaster's Run returned
	health     health
}

// health is what a Fleet knows of whether a cluster answers (see markDown).
type health struct {
	down     bool
	outages  int // consecutive outages without a successful reconcile in between
	since    time.Time
	lastDown time.Time
}

// Name returns the cluster's name in the fleet.
func (c *Cluster) Name() string { return c.name }

// Client returns the cluster's controller client: reads from the cluster's informer caches
// (an informer started on the first read of a type), writes to its API server.
func (c *Cluster) Client() *client.Client { return c.client }

// APIClient returns the cluster's API client.
func (c *Cluster) APIClient() *apiclient.Client { return c.api }

// Factory returns the cluster's informer factory: the informers the fleet's controllers
// watch in it, and those its Client started.
func (c *Cluster) Factory() *informer.Factory { return c.factory }

// Config returns a copy of the configuration the cluster was engaged with (after the
// Fleet's defaults: Options.RequestTimeout, the watch protocol).
func (c *Cluster) Config() apiclient.Config { return c.cfg }

// Context returns a context done when the cluster is disengaged.
func (c *Cluster) Context() context.Context { return c.ctx }

// Logger returns the Fleet's logger with cluster=name.
func (c *Cluster) Logger() *slog.Logger { return c.log }

// EventRecorderFor returns a recorder of Events, written to this cluster (about its
// objects), whose source and reporting controller are name. The cluster's broadcaster
// starts with the first recorder (a goroutine while the cluster is engaged; clusters that
// record no event have none) and writes what is still queued when the cluster is
// disengaged within Options.EventOptions.DrainTimeout. Its counts are in the Fleet's
// metrics, labelled by cluster within the label limit (Options.MetricsClusters).
func (c *Cluster) EventRecorderFor(name string) events.EventRecorder {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.events == nil {
		b, err := events.NewBroadcaster(c.api, c.fleet.eventOptions())
		if err != nil {
			// The options were validated by New with a broadcaster of the hub's client.
			panic(fmt.Sprintf("multicluster: cluster %s: %v", c.name, err))
		}
		c.events = b
		c.eventsDone = make(chan struct{})
		done := c.eventsDone
		go func() {
			defer close(done)
			if err := b.Run(c.ctx); err != nil {
				c.log.Warn("events not written before the cluster was disengaged", "err", err)
			}
		}()
	}
	return c.events.NewRecorder(name)
}

// eventStats returns the cluster's event counts (zero without a recorder).
func (c *Cluster) eventStats() (events.Stats, bool) {
	c.mu.Lock()
	b := c.events
	c.mu.Unlock()
	if b == nil {
		return events.Stats{}, false
	}
	return b.Stats(), true
}

// IsDown reports whether the cluster is taken to be unreachable: a reconcile failed with an
// error that says the server did not answer (apiclient.IsUnreachable), and the server has
// not answered since. Its Requests wait aside meanwhile.
func (c *Cluster) IsDown() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.health.down
}

// Outage backoff: how long a down cluster's Requests wait, at most, before they are tried
// again without a sign of recovery (doubling with each outage in a row).
const (
	outageBaseWait = time.Second
	outageMaxWait  = time.Minute
)

// markDown records that a request to the cluster, sent at since, failed with err, which
// says that the server did not answer (apiclient.IsUnreachable). The first such failure of
// an outage starts the cluster's one recovery watch: it waits for the API client to see
// the server answer again (apiclient.Client.AwaitRecovery), or for the outage backoff to
// pass, and then lets the parked Requests of every controller run again.
func (c *Cluster) markDown(err error, since time.Time) {
	c.mu.Lock()
	if c.health.down || c.ctx.Err() != nil {
		c.mu.Unlock()
		return
	}
	c.health.down = true
	c.health.since = since
	c.health.lastDown = time.Now()
	wait := outageBaseWait << min(c.health.outages, 6)
	wait = min(wait, outageMaxWait)
	c.health.outages++
	c.mu.Unlock()
	c.log.Warn("cluster unreachable; its requests wait until it answers", "err", err, "wait", wait)
	c.fleet.noteHealth()
	c.fleet.bg.Go(func() {
		ctx, cancel := context.WithTimeout(c.ctx, wait)
		defer cancel()
		recovered := c.api.AwaitRecovery(ctx, err, since)
		c.mu.Lock()
		c.health.down = false
		c.mu.Unlock()
		if c.ctx.Err() != nil {
			return
		}
		if recovered {
			c.log.Info("cluster answers again")
		}
		c.fleet.noteHealth()
		c.fleet.unpark(c)
	})
}

// markUp records a reconcile that reached the cluster: the outage backoff starts over.
func (c *Cluster) markUp() {
	c.mu.Lock()
	c.health.outages = 0
	c.mu.Unlock()
}

// stop tears the cluster down once it was disengaged: its informers stopped, its event
// broadcaster drained, its connections closed.
func (c *Cluster) stop() {
	c.cancel(errDisengaged)
	c.factory.Shutdown()
	c.mu.Lock()
	done := c.eventsDone
	c.mu.Unlock()
	if done != nil {
		<-done
	}
	c.api.Close()
}

// errDisengaged is the cause of a disengaged cluster's context.
var errDisengaged = errors.New("multicluster: cluster disengaged")
