package main

import (
	"bufio"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/informerkit/informerkit/controller"
	"github.com/informerkit/informerkit/controller/metrics"
)

// printEventLatency prints what the controller measured of the time from each watch event's
// arrival at its informer to the start of the reconcile of the Request it enqueued
// (informerkit_controller_event_to_reconcile_seconds): the count, the quantiles the
// histogram gives, the mean and the largest.
func (d *demo) printEventLatency(ctl *controller.Controller, reg *metrics.Registry) {
	st := ctl.Stats()
	if st.WatchEvents == 0 {
		d.p.say("event → reconcile: no watch event was reconciled")
		return
	}
	mean := st.EventLatencySum / time.Duration(st.WatchEvents)
	b := histogram(reg, "informerkit_controller_event_to_reconcile_seconds", ctl.Name())
	top := st.EventLatencyMax.Round(time.Microsecond)
	d.p.say("\nevent → reconcile latency (a watch event's arrival at the informer to the start of its reconcile),\n"+
		"%d watch events: p50 %s, p90 %s, p99 %s (from the histogram's buckets), mean %v, max %v", st.WatchEvents,
		quantile(b, 0.5, top), quantile(b, 0.9, top), quantile(b, 0.99, top), mean.Round(time.Microsecond), top)
}

// bucket is one cumulative histogram bucket: count observations ≤ le.
type bucket struct {
	le    float64
	count float64
}

// histogram reads the buckets of a controller's histogram from the registry's text.
func histogram(reg *metrics.Registry, name, controllerName string) []bucket {
	var text strings.Builder
	_ = reg.WriteText(&text)
	prefix := name + `_bucket{controller="` + controllerName + `",le="`
	var out []bucket
	sc := bufio.NewScanner(strings.NewReader(text.String()))
	for sc.Scan() {
		l, ok := strings.CutPrefix(sc.Text(), prefix)
		if !ok {
			continue
		}
		le, rest, _ := strings.Cut(l, `"} `)
		bound, err1 := strconv.ParseFloat(le, 64)
		n, err2 := strconv.ParseFloat(rest, 64)
		if le == "+Inf" {
			bound, err1 = math.Inf(1), nil
		}
		if err1 == nil && err2 == nil {
			out = append(out, bucket{bound, n})
		}
	}
	return out
}

// quantile estimates the q-quantile from cumulative buckets by linear interpolation within
// the bucket it falls in, as Prometheus' histogram_quantile does, at most top (the largest
// observation; "> bound" when it falls in the last, unbounded bucket).
func quantile(b []bucket, q float64, top time.Duration) string {
	if len(b) == 0 || b[len(b)-1].count == 0 {
		return "n/a"
	}
	rank := q * b[len(b)-1].count
	lower, below := 0.0, 0.0
	for _, x := range b {
		if x.count >= rank {
			if math.IsInf(x.le, 1) {
				return fmt.Sprintf("> %v", secs(lower))
			}
			frac := 1.0
			if x.count > below {
				frac = (rank - below) / (x.count - below)
			}
			return fmt.Sprint(min(secs(lower+frac*(x.le-lower)), top))
		}
		lower, below = x.le, x.count
	}
	return "n/a"
}

func secs(s float64) time.Duration {
	return time.Duration(s * float64(time.Second)).Round(time.Microsecond)
}
