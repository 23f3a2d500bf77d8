package controller

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/informerkit/informerkit/leaderelection"
)

// Leader election across terms: campaign runs the elector for as long as the Manager runs,
// and, with ManagerOptions.LeaderElectionStepDown, campaigns again after each lost Lease.

// campaign runs leader election until runCtx is done. A lost Lease fails g (Start returns
// ErrLeaderElectionLost), unless the Manager steps down: then the term's runnables have
// returned (Elector.Run waits for lead, which waits for them) and the elector runs again.
func (m *Manager) campaign(runCtx context.Context, g *runGroup) {
	defer m.leaderGauge.Set(0)
	for {
		err := m.elector.Run(runCtx)
		if !errors.Is(err, leaderelection.ErrLeadershipLost) || runCtx.Err() != nil {
			return
		}
		if !m.opts.LeaderElectionStepDown {
			m.log.Error("leader election lost; stopping")
			g.fail(ErrLeaderElectionLost)
			return
		}
		m.stepDowns.Inc()
		m.log.Warn("leader election lost; stepped down, caches kept, campaigning again",
			"identity", m.elector.Identity(), "holder", m.elector.Leader())
	}
}

// runTerm runs a leader-only runnable for one term. Without step-down it is g.run. With it, an
// error the runnable returns once the term ended with a lost Lease (a drain that timed out, a
// runnable that returns ctx.Err()) is logged and does not stop the Manager: the runnable has
// returned, so the next term may start it again.
func (m *Manager) runTerm(g *runGroup, ctx context.Context, r Runnable) {
	if !m.opts.LeaderElectionStepDown {
		g.run(ctx, r)
		return
	}
	name := runnableName(r)
	g.running.add(name)
	defer g.running.done(name)
	err := r.Start(ctx)
	if err == nil {
		return
	}
	if errors.Is(context.Cause(ctx), ErrLeaderElectionLost) {
		m.log.Warn("leader-only runnable stopped with an error after the Lease was lost", "runnable", name, "err", err)
		return
	}
	g.log.Error("runnable failed", "runnable", name, "err", err)
	g.fail(fmt.Errorf("controller: runnable %s: %w", name, err))
}

// coldOnce makes a cold standby's start of its caches happen at its first term only: the
// caches then stay, warm, across the terms that follow.
type coldOnce struct {
	once sync.Once
	ok   bool
}

func (c *coldOnce) do(start func() bool) bool {
	c.once.Do(func() { c.ok = start() })
	return c.ok
}
