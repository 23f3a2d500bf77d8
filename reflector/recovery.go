package reflector

import (
	"context"
	"time"

	"github.com/informerkit/informerkit/apiclient"
)

// RecoveryAwaiter is an optional interface of an apiclient.ListerWatcher, which
// apiclient.Resource implements: AwaitRecovery waits until ctx is done or until the server,
// after err made a request sent at since fail because the server could not be reached, is
// reachable again, and reports whether it is (see apiclient.Client.AwaitRecovery). The
// reflector waits out every backoff through it, so that all the reflectors of one server
// try again together, within seconds of the server answering again, however long the outage
// was and however far their backoff had grown.
type RecoveryAwaiter interface {
	AwaitRecovery(ctx context.Context, err error, since time.Time) bool
}

// markAttempt records that a request is about to be sent (the since of AwaitRecovery).
func (r *Reflector[T]) markAttempt() { r.lastAttempt.Store(r.sinceCreated()) }

// wait waits d after err, the failure of the last request, and reports whether ctx is
// still live. With a RecoveryAwaiter the wait ends early when the server, unreachable
// when err happened, answers again; the backoff then starts over.
func (r *Reflector[T]) wait(ctx context.Context, d time.Duration, err error) bool {
	if d > 0 {
		r.st.backoffs.Add(1)
	}
	if r.recovery == nil || d <= 0 {
		return sleepCtx(ctx, d)
	}
	wctx, cancel := context.WithTimeout(ctx, d)
	defer cancel()
	if r.recovery.AwaitRecovery(wctx, err, r.timeAt(r.lastAttempt.Load())) && ctx.Err() == nil {
		r.st.recoveries.Add(1)
		r.backoff.reset()
		r.log.Info("server reachable again, retrying at once")
	}
	return ctx.Err() == nil
}

// retryAfter returns the delay the server asked for in err, or 0, at most
// apiclient.MaxRetryAfter whatever the ListerWatcher let through.
func retryAfter(err error) time.Duration {
	return min(retryAfterOf(err), apiclient.MaxRetryAfter)
}
