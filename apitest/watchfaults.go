package apitest

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/informerkit/informerkit/apiclient"
	"github.com/informerkit/informerkit/meta"
)

// The faults injected on open watches (faults.go's CutWatches, StallWatches, ...), as a
// watcher carries them out between events.

type ctlKind int

const (
	ctlCut ctlKind = iota
	ctlCutAfter
	ctlAbort
	ctlError
	ctlStall
	ctlCorrupt
	ctlOversize
	ctlForeign
	// ctlEnd ends the stream cleanly without recording a fault: the storage behind it is
	// gone (crdserve.go).
	ctlEnd
)

type watchCtl struct {
	kind    ctlKind
	n       int
	d       time.Duration
	release chan struct{}
	status  *meta.Status
	// partition: a ctlStall that also stops answering WebSocket pings (PartitionWatches).
	partition bool
	// event and object are the event of a ctlForeign (SendWatchEvent).
	event  apiclient.EventType
	object map[string]any
}

// applyCtl carries out one injected fault; a non-nil error ends the watch.
func (w *watcher) applyCtl(ctx context.Context, c watchCtl) error {
	s := w.s
	name := w.res.typ.name()
	switch c.kind {
	case ctlCut:
		w.sink.flush()
		s.recordFault(FaultRecord{Kind: FaultCutWatch, Resource: name, WatchID: w.id})
		return errWatchEnded
	case ctlEnd:
		w.sink.flush()
		return errWatchEnded
	case ctlAbort:
		s.recordFault(FaultRecord{Kind: FaultAbortWatch, Resource: name, WatchID: w.id})
		return errAbort
	case ctlCutAfter:
		if c.n <= 0 {
			w.sink.flush()
			s.recordFault(FaultRecord{Kind: FaultCutWatch, Resource: name, WatchID: w.id, Detail: "after events"})
			return errWatchEnded
		}
		w.cutAfter = w.sent.Load() + int64(c.n)
	case ctlError:
		s.recordFault(FaultRecord{Kind: FaultWatchError, Resource: name, WatchID: w.id, Code: int(c.status.Code), Detail: c.status.Message})
		w.sendError(c.status)
		return errWatchEnded
	case ctlCorrupt:
		s.recordFault(FaultRecord{Kind: FaultCorruptFrame, Resource: name, WatchID: w.id})
		// Balanced braces (so a framing reader hands it over) but not JSON.
		w.sink.write(w.corruptFrame())
		w.sink.flush()
	case ctlForeign:
		s.recordFault(FaultRecord{Kind: FaultForeignEvent, Resource: name, WatchID: w.id,
			Detail: fmt.Sprintf("%s %v", c.event, c.object["kind"])})
		w.sink.write(w.objectFrame(c.event, c.object))
		w.sink.flush()
	case ctlOversize:
		s.recordFault(FaultRecord{Kind: FaultOversizedFrame, Resource: name, WatchID: w.id, Detail: strconv.Itoa(c.n) + " bytes"})
		w.sink.write(w.bookmarkFrame(w.lastRV.Load(), false, c.n))
		w.sink.flush()
	case ctlStall:
		w.sink.flush()
		kind := FaultStall
		if c.partition {
			kind = FaultPartition
			w.partitioned.Store(true)
			defer w.partitioned.Store(false)
		}
		s.recordFault(FaultRecord{Kind: kind, Resource: name, WatchID: w.id, Detail: c.d.String()})
		var timer <-chan time.Time
		if c.d > 0 {
			t := time.NewTimer(c.d)
			defer t.Stop()
			timer = t.C
		}
		for {
			select {
			case <-timer:
				s.recordFault(FaultRecord{Kind: FaultStallEnd, Resource: name, WatchID: w.id})
				return nil
			case <-c.release:
				s.recordFault(FaultRecord{Kind: FaultStallEnd, Resource: name, WatchID: w.id, Detail: "released"})
				return nil
			case <-ctx.Done():
				return errWatchEnded
			case <-w.wake:
				// Only cuts and aborts act during a stall; the rest waits.
				var keep []watchCtl
				for _, o := range w.takeCtl() {
					if o.kind == ctlCut || o.kind == ctlAbort || o.kind == ctlError {
						if err := w.applyCtl(ctx, o); err != nil {
							return err
						}
						continue
					}
					keep = append(keep, o)
				}
				w.ctlMu.Lock()
				w.ctl = append(keep, w.ctl...)
				w.ctlMu.Unlock()
			}
		}
	}
	return nil
}
