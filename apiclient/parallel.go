package apiclient

import (
	"math/bits"
	"runtime"
	"sync"
	"sync/atomic"
)

// Parallel decoding. A large JSON object costs far more to decode than to read (a 50 KB
// custom resource: about 20 µs of reading, 250 µs of decoding), so one goroutine that reads
// and decodes every frame of a watch or a list leaves the other cores idle. From the first
// frame at least parallelMinJSON (JSON) or parallelMinProto (protobuf) bytes long, and only
// when GOMAXPROCS is above 1 (decoding.parallel), a watch or
// a list hands its large frames, copied, to a bounded pool of decoding goroutines, and hands
// the results over in the order the frames came (an ordered collector); frames below the
// thresholds are still decoded where they are read.
// The pool's goroutines exist only while there is work (none at rest), the copies come from
// pools that the garbage collector empties, and the frames in flight are bounded by
// parallelWindow jobs and parallelBudget bytes (beyond one frame of any size). See
// bench/README.md "Parallel decode" for the figures that set the thresholds.
const (
	parallelMinJSON  = 16 << 10
	parallelMinProto = 64 << 10
	parallelBudget   = 8 << 20
	parallelMaxProcs = 8
)

// parallelThresholds are the sizes from which frames are decoded in parallel and the byte
// budget, as variables for tests (which lower them to exercise the parallel path with small
// objects).
var parallelThresholds = struct{ json, proto, budget int }{parallelMinJSON, parallelMinProto, parallelBudget}

// parallelWorkers is the pool's bound for Config.DecodeWorkers n: GOMAXPROCS if n is 0, at
// most parallelMaxProcs; below 2 there is no parallel decoding.
func parallelWorkers(n int) int {
	if n <= 0 {
		n = runtime.GOMAXPROCS(0)
		if parallelProcs > 0 {
			n = parallelProcs
		}
	}
	return min(n, parallelMaxProcs)
}

// parallelProcs, if positive, stands for GOMAXPROCS in parallelWorkers (tests set it so that
// the parallel path runs whatever the machine).
var parallelProcs int

// parallel reports whether the objects of dc may be decoded in parallel: with more than one
// worker. A DecodeOptions.Strings table (an informer's sharer) is called by every decoding
// goroutine for every string; the informer's (internal/share) reads its strings without a
// lock, so that it does not serialise them (bench/README.md, "Parallel decode").
func (dc decoding) parallel() bool { return parallelWorkers(dc.workers) > 1 }

// parallelMaxProtoEvent is the size from which a protobuf watch event is decoded on the
// reading goroutine again: a watch of 1 MB ConfigMaps measured 0.88× in parallel (lists of
// them 1.81×; events of 16–50 KB 1.37–1.78×), for a cause not found yet.
const parallelMaxProtoEvent = 1 << 20

// wantsParallelEvent is wantsParallel for a watch event.
func wantsParallelEvent(n int, protobuf bool) bool {
	return wantsParallel(n, protobuf) && !(protobuf && n >= parallelMaxProtoEvent)
}

// wantsParallel reports whether a frame of n bytes is worth decoding off the reading
// goroutine (the check of the sequential path, once per frame until one is).
func wantsParallel(n int, protobuf bool) bool {
	if protobuf {
		return n >= parallelThresholds.proto
	}
	return n >= parallelThresholds.json
}

// pjob is one frame in the pipeline: its copy (nil when it was decoded where it was read),
// and the result once done is closed.
type pjob[R any] struct {
	buf   *[]byte
	off   int64
	idx   int // a list item's index
	proto bool
	size  int
	done  chan struct{} // nil when decoded inline
	res   R
	err   error
	// srcErr ends the stream (a watch's transport error or end), after the jobs before it.
	srcErr error
	last   bool
}

// wait blocks until j is decoded.
func (j *pjob[R]) wait() {
	if j.done != nil {
		<-j.done
	}
}

// orderedPool decodes jobs with up to workers goroutines, each with its own decoder; the
// caller keeps the order (its FIFO of jobs) and waits for each job in turn.
type orderedPool[R any] struct {
	decode func(d *objectDecoder, j *pjob[R])
	newDec func() *objectDecoder
	jobs   chan *pjob[R]
	sem    chan struct{}
	wg     sync.WaitGroup

	inflight atomic.Int64  // bytes of the copies not yet handed over
	freed    chan struct{} // signalled when inflight drops
}

// parallelWindow is how many jobs may be in flight (read, not yet handed over).
func parallelWindow(workers int) int { return 2 * workers }

func newOrderedPool[R any](workers int, newDec func() *objectDecoder, decode func(*objectDecoder, *pjob[R])) *orderedPool[R] {
	return &orderedPool[R]{
		decode: decode,
		newDec: newDec,
		jobs:   make(chan *pjob[R], parallelWindow(workers)+1),
		sem:    make(chan struct{}, workers),
		freed:  make(chan struct{}, 1),
	}
}

// reserve waits until a frame of n bytes fits the byte budget (or nothing is in flight); it
// returns false if stop is closed first.
func (p *orderedPool[R]) reserve(n int, stop <-chan struct{}) bool {
	for {
		in := p.inflight.Load()
		if in == 0 || in+int64(n) <= int64(parallelThresholds.budget) {
			p.inflight.Add(int64(n))
			return true
		}
		select {
		case <-p.freed:
		case <-stop:
			return false
		}
	}
}

// handedOver releases the budget of a job once its result is handed over.
func (p *orderedPool[R]) handedOver(j *pjob[R]) {
	if j.size == 0 {
		return
	}
	p.inflight.Add(-int64(j.size))
	select {
	case p.freed <- struct{}{}:
	default:
	}
}

// submit queues j, whose frame is copied from frame, for a decoding goroutine (starting one
// if fewer than the bound run). It never blocks: the caller keeps at most parallelWindow
// jobs in flight.
func (p *orderedPool[R]) submit(j *pjob[R], frame []byte) {
	j.buf = getFrameBuffer(len(frame))
	*j.buf = append((*j.buf)[:0], frame...)
	j.size = len(frame)
	j.done = make(chan struct{})
	p.jobs <- j
	select {
	case p.sem <- struct{}{}:
		p.wg.Add(1)
		go p.work()
	default:
	}
}

// work decodes queued jobs until there are none, then exits (releasing its decoder: nothing
// of the pool stays at rest); a job queued while it was leaving is taken by it again or by
// the goroutine its submit started.
func (p *orderedPool[R]) work() {
	defer p.wg.Done()
	d := p.newDec()
	defer d.release()
	for {
		for drained := false; !drained; {
			select {
			case j := <-p.jobs:
				p.decode(d, j)
				putFrameBuffer(j.buf)
				j.buf = nil
				close(j.done)
			default:
				drained = true
			}
		}
		<-p.sem
		if len(p.jobs) == 0 {
			return
		}
		select {
		case p.sem <- struct{}{}:
		default:
			return // another goroutine holds the slot and will take the job
		}
	}
}

// close waits for the decoding goroutines to exit. The caller submits nothing after it.
func (p *orderedPool[R]) close() { p.wg.Wait() }

// frameBuffers pools the copies of frames by size class (powers of two from 4 KB), so that
// a stream of 50 KB frames reuses 64 KB buffers and one 10 MB frame does not pin a 16 MB
// buffer for every later small one.
var frameBuffers [25]sync.Pool

func frameClass(n int) int { return max(bits.Len(uint(n-1)), 12) - 12 }

func getFrameBuffer(n int) *[]byte {
	c := frameClass(n)
	if c < len(frameBuffers) {
		if b, ok := frameBuffers[c].Get().(*[]byte); ok {
			return b
		}
		b := make([]byte, 0, 1<<(c+12))
		return &b
	}
	b := make([]byte, 0, n)
	return &b
}

func putFrameBuffer(b *[]byte) {
	if c := frameClass(cap(*b)); c < len(frameBuffers) && cap(*b) == 1<<(c+12) {
		frameBuffers[c].Put(b)
	}
}

// handOver is the ordered collector of a watch: one goroutine hands the jobs over in the
// order they were pushed, started by the push that finds none running and gone as soon as
// no job waits, so that a watch at rest keeps no goroutine beyond its reader. deliver
// returning false ends the stream: stop is closed and later pushes fail.
type handOver[R any] struct {
	order   chan *pjob[R]
	deliver func(*pjob[R]) bool
	stop    chan struct{}
	wg      sync.WaitGroup
	mu      sync.Mutex
	running bool // a goroutine is in run
	ended   bool // deliver returned false
}

func newHandOver[R any](window int, deliver func(*pjob[R]) bool) *handOver[R] {
	return &handOver[R]{order: make(chan *pjob[R], window), deliver: deliver, stop: make(chan struct{})}
}

// push queues j (waiting while window jobs wait) and makes sure a goroutine hands it over;
// false once the stream has ended. Only one goroutine pushes.
func (h *handOver[R]) push(j *pjob[R]) bool {
	select {
	case h.order <- j:
	case <-h.stop:
		return false
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.ended {
		return false
	}
	if !h.running {
		h.running = true
		h.wg.Add(1)
		go h.run()
	}
	return true
}

// run hands over the queued jobs until none waits. It looks at the queue under the mutex
// before leaving: a job pushed after that look finds running false and starts another.
func (h *handOver[R]) run() {
	defer h.wg.Done()
	for {
		select {
		case j := <-h.order:
			if !h.deliver(j) {
				h.mu.Lock()
				h.ended, h.running = true, false
				h.mu.Unlock()
				close(h.stop)
				return
			}
		default:
			h.mu.Lock()
			if len(h.order) == 0 {
				h.running = false
				h.mu.Unlock()
				return
			}
			h.mu.Unlock()
		}
	}
}

// wait waits for the goroutine handing over (called by the pushing goroutine, at its end).
func (h *handOver[R]) wait() { h.wg.Wait() }

// inOrder is the ordered collector of a list: the goroutine that reads the items also hands
// them over, in order, as they are done (at the latest when the window is full or the byte
// budget reached), so that fn is called from the caller's goroutine as in the sequential
// path.
type inOrder[R any] struct {
	pool   *orderedPool[R]
	fifo   []*pjob[R]
	window int
	hand   func(j *pjob[R]) error // hands one decoded item over (its error, or fn's)
}

func newInOrder[R any](od *objectDecoder, decode func(*objectDecoder, *pjob[R]), hand func(*pjob[R]) error) *inOrder[R] {
	workers := parallelWorkers(od.dc.workers)
	return &inOrder[R]{pool: newOrderedPool(workers, od.clone, decode), window: parallelWindow(workers), hand: hand}
}

// add queues an item of the bytes v: decoded by the pool if large, else here (inline). It
// then hands over what is done; an error from that ends the list.
func (o *inOrder[R]) add(j *pjob[R], v []byte, inline func(*pjob[R])) error {
	if wantsParallel(len(v), j.proto) {
		for o.pool.inflight.Load() > 0 && o.pool.inflight.Load()+int64(len(v)) > int64(parallelThresholds.budget) {
			if err := o.handHead(); err != nil {
				return err
			}
		}
		o.pool.submit(j, v)
	} else {
		inline(j)
	}
	o.fifo = append(o.fifo, j)
	for len(o.fifo) > 0 {
		if h := o.fifo[0]; len(o.fifo) < o.window && h.done != nil {
			select {
			case <-h.done:
			default:
				return nil
			}
		}
		if err := o.handHead(); err != nil {
			return err
		}
	}
	return nil
}

// handHead waits for the oldest item and hands it over.
func (o *inOrder[R]) handHead() error {
	h := o.fifo[0]
	o.fifo[0] = nil
	o.fifo = o.fifo[1:]
	if len(o.fifo) == 0 {
		o.fifo = o.fifo[:0:0]
	}
	h.wait()
	o.pool.handedOver(h)
	return o.hand(h)
}

// flush hands over every item queued, in order; the first error ends it.
func (o *inOrder[R]) flush() error {
	for len(o.fifo) > 0 {
		if err := o.handHead(); err != nil {
			return err
		}
	}
	return nil
}

// close waits for the pool's goroutines (items not handed over are dropped).
func (o *inOrder[R]) close() {
	if o != nil {
		o.pool.close()
	}
}

// failAfter returns err once the items read before it are handed over, as the sequential
// path would have handed them over before it read what failed (an error among them comes
// first).
func (o *inOrder[R]) failAfter(err error) error {
	if o != nil {
		if ferr := o.flush(); ferr != nil {
			return ferr
		}
	}
	return err
}
