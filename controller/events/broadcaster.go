package events

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/informerkit/informerkit/apiclient"
	"github.com/informerkit/informerkit/kinds"
	"github.com/informerkit/informerkit/meta"
)

// Defaults of Options (client-go's tools/record constants, but for DrainTimeout).
const (
	// DefaultQueueSize is the number of events waiting to be written before new ones are
	// dropped.
	DefaultQueueSize = 1000
	// DefaultMaxTries is how often an event is sent before the recorder gives up on it.
	DefaultMaxTries = 12
	// DefaultRetryInterval is the wait between tries (the first one is randomised in
	// [0, interval) so that clients do not retry in step after a server restart), unless the
	// server asks for another with Retry-After.
	DefaultRetryInterval = 10 * time.Second
	// DefaultDrainTimeout bounds the time Run spends writing the queued events once its
	// context is done.
	DefaultDrainTimeout = 30 * time.Second
)

// Options are the optional settings of a Broadcaster. The zero value of each field is its
// default.
type Options struct {
	// QueueSize bounds the events waiting to be written (default DefaultQueueSize). Event
	// never blocks: past the bound, events are dropped and counted (Stats.Dropped).
	QueueSize int
	// MaxTries and RetryInterval govern the writes that fail with 429, 5xx or a connection
	// error (defaults DefaultMaxTries, DefaultRetryInterval); other failures are not
	// retried.
	MaxTries      int
	RetryInterval time.Duration
	// DrainTimeout bounds the writing of the queued events once Run's context is done
	// (default DefaultDrainTimeout).
	DrainTimeout time.Duration

	// CacheSize, AggregateMaxEvents, AggregateInterval, SpamBurst and SpamQPS configure the
	// correlator (defaults DefaultCacheSize, DefaultAggregateMaxEvents,
	// DefaultAggregateInterval, DefaultSpamBurst, DefaultSpamQPS).
	CacheSize          int
	AggregateMaxEvents int
	AggregateInterval  time.Duration
	SpamBurst          int
	SpamQPS            float64

	// Instance is the events' reportingInstance (default the host name).
	Instance string
	// Registry gives the kind and apiVersion of the objects events are about (default
	// kinds.Default). Cached objects do not carry them: their Go types must be registered.
	Registry *kinds.Registry
	// Logger receives a debug line per event and the errors (default slog.Default()).
	Logger *slog.Logger
}

// Stats are a broadcaster's counts since it was created.
type Stats struct {
	// Recorded counts the events handed to a Recorder, Queued those accepted in the queue.
	Recorded, Queued uint64
	// Dropped counts the events refused because the queue was full; Rejected those that
	// could not become an Event (an object of unknown kind, an invalid type); Late those
	// recorded after Run ended.
	Dropped, Rejected, Late uint64
	// Filtered counts the events the spam filter dropped.
	Filtered uint64
	// Created and Patched count successful writes; Failed the events given up on.
	Created, Patched, Failed uint64
	// Retries counts the writes sent again after a failure.
	Retries uint64
	// Renamed counts the creates answered AlreadyExists by another writer's Event of the
	// same name, and sent again under a new name.
	Renamed uint64
}

// Broadcaster writes the events of its Recorders to the API server, asynchronously: a
// Recorder queues an event and returns, and Run writes the queue one event at a time
// through the correlator (counting, aggregation, spam filter), retrying what failed for a
// reason that may pass. It is client-go's record.EventBroadcaster with its sink.
type Broadcaster struct {
	events *apiclient.Resource[*Event]
	opts   Options
	log    *slog.Logger
	corr   *correlator

	// mu guards closed and the close of queue, so that no Event sends on a closed channel.
	mu     sync.RWMutex
	closed bool
	queue  chan *Event
	ran    atomic.Bool

	recorded, queued, dropped, rejected, late atomic.Uint64
	filtered, created, patched, failed        atomic.Uint64
	retries, renamed                          atomic.Uint64
	lastDropLog                               atomic.Int64
}

// NewBroadcaster returns a broadcaster that writes events through client. It validates the
// options; nothing is written until Run.
func NewBroadcaster(client *apiclient.Client, opts Options) (*Broadcaster, error) {
	if client == nil {
		panic("events.NewBroadcaster: nil client")
	}
	for name, v := range map[string]float64{
		"QueueSize": float64(opts.QueueSize), "MaxTries": float64(opts.MaxTries), "RetryInterval": float64(opts.RetryInterval),
		"DrainTimeout": float64(opts.DrainTimeout), "CacheSize": float64(opts.CacheSize), "AggregateMaxEvents": float64(opts.AggregateMaxEvents),
		"AggregateInterval": float64(opts.AggregateInterval), "SpamBurst": float64(opts.SpamBurst), "SpamQPS": opts.SpamQPS,
	} {
		if v < 0 {
			return nil, fmt.Errorf("events: NewBroadcaster: %s is negative", name)
		}
	}
	setDefault(&opts.QueueSize, DefaultQueueSize)
	setDefault(&opts.MaxTries, DefaultMaxTries)
	setDefault(&opts.RetryInterval, DefaultRetryInterval)
	setDefault(&opts.DrainTimeout, DefaultDrainTimeout)
	setDefault(&opts.CacheSize, DefaultCacheSize)
	setDefault(&opts.AggregateMaxEvents, DefaultAggregateMaxEvents)
	setDefault(&opts.AggregateInterval, DefaultAggregateInterval)
	setDefault(&opts.SpamBurst, DefaultSpamBurst)
	setDefault(&opts.SpamQPS, DefaultSpamQPS)
	if opts.Instance == "" {
		opts.Instance, _ = os.Hostname()
	}
	if opts.Registry == nil {
		opts.Registry = kinds.Default
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	return &Broadcaster{
		events: apiclient.NewResource[*Event](client, kinds.Event.GroupVersionResource()),
		opts:   opts,
		log:    opts.Logger.With("component", "event-recorder"),
		corr:   newCorrelator(opts.CacheSize, opts.AggregateMaxEvents, opts.AggregateInterval, opts.SpamBurst, opts.SpamQPS),
		queue:  make(chan *Event, opts.QueueSize),
	}, nil
}

func setDefault[T int | float64 | time.Duration](v *T, def T) {
	if *v == 0 {
		*v = def
	}
}

// Stats returns the broadcaster's counts.
func (b *Broadcaster) Stats() Stats {
	return Stats{
		Recorded: b.recorded.Load(), Queued: b.queued.Load(), Dropped: b.dropped.Load(), Rejected: b.rejected.Load(),
		Late: b.late.Load(), Filtered: b.filtered.Load(), Created: b.created.Load(), Patched: b.patched.Load(),
		Failed: b.failed.Load(), Retries: b.retries.Load(), Renamed: b.renamed.Load(),
	}
}

// enqueue queues e without blocking.
func (b *Broadcaster) enqueue(e *Event) {
	b.recorded.Add(1)
	b.mu.RLock()
	defer b.mu.RUnlock()
	if b.closed {
		b.late.Add(1)
		b.log.Debug("event recorded after the recorder stopped; dropped", "object", objectKey(e), "reason", e.Reason)
		return
	}
	select {
	case b.queue <- e:
		b.queued.Add(1)
	default:
		n := b.dropped.Add(1)
		// One log line per second at most: a full queue means many drops.
		now := time.Now().UnixNano()
		if last := b.lastDropLog.Load(); now-last >= int64(time.Second) && b.lastDropLog.CompareAndSwap(last, now) {
			b.log.Error("event queue full; dropping events", "queueSize", b.opts.QueueSize, "droppedSoFar", n,
				"object", objectKey(e), "reason", e.Reason)
		}
	}
}

// Run writes queued events until ctx is done, then stops accepting events and writes those
// still queued for at most DrainTimeout (a failing write is then tried once more, not
// MaxTries times). It returns nil once the queue is empty, or an error counting the events
// it could not write in time. A broadcaster runs once.
func (b *Broadcaster) Run(ctx context.Context) error {
	if !b.ran.CompareAndSwap(false, true) {
		return errors.New("events: Broadcaster.Run called twice")
	}
	reqCtx, cancelRequests := context.WithCancel(context.WithoutCancel(ctx))
	defer cancelRequests()
	draining := make(chan struct{})
	go func() {
		<-ctx.Done()
		b.mu.Lock()
		b.closed = true
		close(b.queue)
		b.mu.Unlock()
		close(draining)
		// The drain has its own deadline: past it, requests in flight are abandoned.
		t := time.NewTimer(b.opts.DrainTimeout)
		defer t.Stop()
		select {
		case <-t.C:
			cancelRequests()
		case <-reqCtx.Done():
		}
	}()
	abandoned := 0
	for e := range b.queue {
		if !b.write(reqCtx, e, draining) {
			abandoned++
		}
	}
	if abandoned > 0 {
		return fmt.Errorf("events: %d events not written within the drain timeout %v", abandoned, b.opts.DrainTimeout)
	}
	return nil
}

// write correlates e and writes it, retrying as Options say; draining shortens retries. It
// returns false if it gave up because ctx ended (the drain timed out).
func (b *Broadcaster) write(ctx context.Context, e *Event, draining <-chan struct{}) bool {
	if ctx.Err() != nil {
		b.failed.Add(1)
		return false
	}
	c := b.corr.correlate(e, time.Now())
	if c.skip {
		b.filtered.Add(1)
		b.log.Debug("event dropped by the spam filter", "object", objectKey(e), "reason", e.Reason)
		return true
	}
	var st sendState
	for try := 1; ; try++ {
		err := b.send(ctx, c, &st)
		if err == nil {
			return true
		}
		retry := retryable(err)
		select {
		case <-draining:
			retry = retry && try < 2
		default:
		}
		if !retry || try >= b.opts.MaxTries || ctx.Err() != nil {
			b.failed.Add(1)
			if ctx.Err() != nil {
				return false
			}
			b.log.Error("could not write event; giving up", "object", objectKey(c.event), "reason", c.event.Reason, "tries", try, "err", err)
			return true
		}
		delay := b.opts.RetryInterval
		if try == 1 {
			delay = time.Duration(rand.Int64N(int64(delay)) + 1)
		}
		if ra, ok := meta.RetryAfter(err); ok && ra > delay {
			delay = ra
		}
		b.log.Debug("could not write event; retrying", "object", objectKey(c.event), "reason", c.event.Reason, "in", delay, "err", err)
		b.retries.Add(1)
		t := time.NewTimer(delay)
		select {
		case <-t.C:
		case <-draining:
			t.Stop()
		case <-ctx.Done():
			t.Stop()
		}
	}
}

// sendState is what the tries of one event have learnt.
type sendState struct {
	// createMayHaveWritten: a create failed without saying that it was refused (the
	// connection broke, a 500 or 504), so the server may hold the Event already.
	createMayHaveWritten bool
}

// maxRenames bounds the new names one event is given when its name is taken.
const maxRenames = 5

// send writes one correlated event: a patch of the existing one, or (first occurrence, or
// the existing one is gone) a create.
func (b *Broadcaster) send(ctx context.Context, c correlation, st *sendState) error {
	ev := c.event
	events := b.events.Namespace(ev.Namespace)
	var out *Event
	var err error
	if c.patch != nil && ev.Count > 1 {
		out, err = events.Patch(ctx, ev.Name, apiclient.MergePatchType, c.patch, apiclient.PatchOptions{})
		if err == nil {
			b.patched.Add(1)
		}
	}
	if c.patch == nil || ev.Count <= 1 || meta.IsNotFound(err) {
		out, err = b.create(ctx, events, ev, st)
	}
	if err != nil {
		return err
	}
	b.corr.written(c.key, out)
	b.log.Debug("event written", "object", objectKey(ev), "type", ev.Type, "reason", ev.Reason, "count", out.Count, "name", out.Name)
	return nil
}

// create creates ev. A name already taken (AlreadyExists) is either this very Event, which
// an earlier try created before its answer was lost, or another writer's: a process that
// named an Event about the same object at the same nanosecond, or a name chosen by hand.
// The first is success; the second gets the Event created again under a new name. client-go
// gives up on AlreadyExists; a recorder that drops an Event for its name loses it silently.
func (b *Broadcaster) create(ctx context.Context, events *apiclient.Resource[*Event], ev *Event, st *sendState) (*Event, error) {
	create := *ev
	create.ResourceVersion = ""
	for renames := 0; ; renames++ {
		out, err := events.Create(ctx, &create, apiclient.CreateOptions{})
		switch {
		case err == nil:
			b.created.Add(1)
			return out, nil
		case !meta.IsAlreadyExists(err):
			if mayHaveWritten(err) {
				st.createMayHaveWritten = true
			}
			return nil, err
		case st.createMayHaveWritten:
			b.created.Add(1)
			b.log.Debug("event created by an earlier try whose answer was lost", "object", objectKey(ev), "name", create.Name)
			return &create, nil
		case renames == maxRenames:
			return nil, fmt.Errorf("events: %d names in a row were taken: %w", maxRenames+1, err)
		}
		old := create.Name
		create.Name = eventName(ev.InvolvedObject.Name, time.Now())
		b.renamed.Add(1)
		b.log.Debug("event name taken by another event; writing it under a new name", "object", objectKey(ev), "taken", old, "name", create.Name)
	}
}

// mayHaveWritten: a write failed without the server saying it refused it, so it may have
// been applied.
func mayHaveWritten(err error) bool {
	st, ok := meta.AsStatus(err)
	if !ok {
		return !errors.Is(err, context.Canceled)
	}
	return st.Code == 500 || st.Code == 504
}

// retryable: the server may accept the same write later.
func retryable(err error) bool {
	st, ok := meta.AsStatus(err)
	if !ok {
		return !errors.Is(err, context.Canceled) // a transport error
	}
	return st.Code == 429 || (st.Code >= 500 && st.Code != 501)
}

func objectKey(e *Event) string {
	o := e.InvolvedObject
	if o.Namespace == "" {
		return o.Kind + " " + o.Name
	}
	return o.Kind + " " + o.Namespace + "/" + o.Name
}
