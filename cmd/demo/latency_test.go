package main

import (
	"math"
	"testing"
	"time"
)

func TestQuantileInterpolatesWithinTheBucket(t *testing.T) {
	b := []bucket{{0.001, 0}, {0.01, 50}, {0.1, 90}, {math.Inf(1), 100}}
	for _, tc := range []struct {
		q    float64
		top  time.Duration
		want string
	}{
		{0.5, time.Second, "10ms"},         // the top of the second bucket
		{0.25, time.Second, "5.5ms"},       // half-way through it
		{0.9, time.Second, "100ms"},        // the top of the third
		{0.95, time.Second, "> 100ms"},     // in the unbounded one
		{0.5, 7 * time.Millisecond, "7ms"}, // never above the largest observation
		{0.1, time.Second, "2.8ms"},        // 10 of 50 in [1ms, 10ms]
		{0.0, time.Second, "1ms"},          // the first non-empty bucket's bottom
		{0.5, time.Second, "10ms"},
	} {
		if got := quantile(b, tc.q, tc.top); got != tc.want {
			t.Errorf("quantile(%v) = %s, want %s", tc.q, got, tc.want)
		}
	}
	if got := quantile(nil, 0.5, time.Second); got != "n/a" {
		t.Errorf("no buckets: %s", got)
	}
}
