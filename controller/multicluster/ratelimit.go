package multicluster

import (
	"sync"
	"time"

	"golang.org/x/time/rate"

	"github.com/informerkit/informerkit/workqueue"
)

// Defaults of the per-cluster rate limiter (DefaultRateLimiter): controller-runtime's
// default limiter's figures, with the token bucket per cluster instead of one for all.
const (
	DefaultBaseDelay    = 5 * time.Millisecond
	DefaultMaxDelay     = 1000 * time.Second
	DefaultClusterQPS   = 10
	DefaultClusterBurst = 100
)

// ClusterForgetter is a rate limiter that tracks something per cluster and lets go of it
// when the cluster is disengaged. A Controller calls ForgetCluster on its RateLimiter if
// the limiter has the method.
type ClusterForgetter interface {
	ForgetCluster(name string)
}

// ClusterRateLimiter delays the retries of a Request by the larger of an exponential
// per-Request backoff (base doubling to max, reset by Forget) and a token bucket of the
// Request's cluster: a cluster whose every reconcile fails retries at most qps per second
// after its burst, and spends none of the other clusters' tokens. (controller-runtime's
// default limiter has one bucket for the whole controller: one failing cluster of a
// thousand would delay the retries of all.) It is a workqueue.RateLimiter[Request] and a
// ClusterForgetter.
type ClusterRateLimiter struct {
	items workqueue.RateLimiter[Request]
	qps   rate.Limit
	burst int

	mu      sync.Mutex
	buckets map[string]*rate.Limiter
}

// NewClusterRateLimiter returns a ClusterRateLimiter; qps <= 0 means no bucket.
func NewClusterRateLimiter(base, max time.Duration, qps float64, burst int) *ClusterRateLimiter {
	return &ClusterRateLimiter{
		items: workqueue.NewItemExponentialFailureRateLimiter[Request](base, max),
		qps:   rate.Limit(qps), burst: burst,
		buckets: map[string]*rate.Limiter{},
	}
}

// DefaultRateLimiter returns the limiter of a Controller without ControllerOptions.RateLimiter:
// DefaultBaseDelay..DefaultMaxDelay per Request, DefaultClusterQPS (burst
// DefaultClusterBurst) per cluster.
func DefaultRateLimiter() *ClusterRateLimiter {
	return NewClusterRateLimiter(DefaultBaseDelay, DefaultMaxDelay, DefaultClusterQPS, DefaultClusterBurst)
}

// When returns the delay of req's next retry.
func (r *ClusterRateLimiter) When(req Request) time.Duration {
	d := r.items.When(req)
	if r.qps <= 0 {
		return d
	}
	r.mu.Lock()
	b, ok := r.buckets[req.Cluster]
	if !ok {
		b = rate.NewLimiter(r.qps, r.burst)
		r.buckets[req.Cluster] = b
	}
	r.mu.Unlock()
	return max(d, b.Reserve().Delay())
}

// NumRequeues returns how often req was delayed since it was last forgotten.
func (r *ClusterRateLimiter) NumRequeues(req Request) int { return r.items.NumRequeues(req) }

// Forget resets req's backoff.
func (r *ClusterRateLimiter) Forget(req Request) { r.items.Forget(req) }

// ForgetCluster drops cluster name's bucket.
func (r *ClusterRateLimiter) ForgetCluster(name string) {
	r.mu.Lock()
	delete(r.buckets, name)
	r.mu.Unlock()
}

// clusters returns how many buckets the limiter holds (for tests of leaks).
func (r *ClusterRateLimiter) clusters() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.buckets)
}
