package controller

import (
	"context"
	"fmt"
)

// Runnable is something a Manager runs: Start blocks until ctx is done (returning nil) or
// fails (returning an error, which stops the manager). *Controller is a Runnable.
type Runnable interface {
	Start(ctx context.Context) error
}

// RunnableFunc adapts a function to Runnable.
type RunnableFunc func(ctx context.Context) error

// Start calls f(ctx).
func (f RunnableFunc) Start(ctx context.Context) error { return f(ctx) }

// LeaderElectionRunnable is implemented by runnables that say whether they need leadership.
// A Runnable that does not implement it needs leadership (as in controller-runtime).
type LeaderElectionRunnable interface {
	NeedLeaderElection() bool
}

// WithoutLeaderElection wraps r so that the Manager runs it on every replica, leader or not
// (for example a cache warmer or a metrics exporter).
func WithoutLeaderElection(r Runnable) Runnable { return noLeaderElection{r} }

type noLeaderElection struct{ Runnable }

func (noLeaderElection) NeedLeaderElection() bool { return false }

func needsLeader(r Runnable) bool {
	if le, ok := r.(LeaderElectionRunnable); ok {
		return le.NeedLeaderElection()
	}
	return true
}

func runnableName(r Runnable) string {
	switch v := r.(type) {
	case *Controller:
		return "controller " + v.Name()
	case noLeaderElection:
		return runnableName(v.Runnable)
	case fmt.Stringer:
		return v.String()
	}
	return fmt.Sprintf("%T", r)
}
