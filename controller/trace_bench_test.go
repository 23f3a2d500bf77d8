package controller

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/informerkit/informerkit/informer"
	"github.com/informerkit/informerkit/internal/testobj"
)

// BenchmarkEventTracking is what tying a watch event to its reconcile adds to one event: the
// handler's begin and end around an Add on the source queue, which records the trigger, and
// the worker's observation of it after its Get (the queue's own Add, Get and Done are in
// both variants; untracked, the Get hands out no trigger).
func BenchmarkEventTracking(b *testing.B) {
	obj := &testobj.ConfigMap{}
	reqs := make([]Request, 1024)
	for i := range reqs {
		reqs[i] = Request{Namespace: "ns", Name: fmt.Sprint(i)}
	}
	for _, tracked := range []bool{false, true} {
		b.Run(fmt.Sprintf("tracked=%v", tracked), func(b *testing.B) {
			wq := newTriggerQueue("c", Options{})
			defer wq.ShutDown()
			tk := newEventTracker("c", nil, nil)
			var q Queue = wq
			if tracked {
				q = newEventQueue(wq, tk)
			}
			info := informer.EventInfo{Arrived: time.Now()}
			ctx := context.Background()
			b.ReportAllocs()
			for i := 0; b.Loop(); i++ {
				_, eq, span := beginEvent[*testobj.ConfigMap](ctx, q, info, TriggerUpdate, obj, "i")
				q.Add(reqs[i&1023])
				endEvent(eq, span)
				r, trs, _, _ := wq.GetWithCauses(ctx, nil)
				if tracked {
					tk.observe(&Triggers{List: trs.List}, time.Now())
				}
				wq.Done(r)
			}
		})
	}
}
