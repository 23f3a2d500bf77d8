// Package leaderelection elects one leader among the replicas of a controller on a
// coordination.k8s.io/v1 Lease: informerkit's counterpart of client-go's
// tools/leaderelection with a LeaseLock. The controller Manager uses it; it can also be used
// on its own.
//
// # Rules
//
//   - Durations: LeaseDuration > RenewDeadline > 1.2 × RetryPeriod > 0 (Config.Validate
//     explains what is wrong), and LeaseDuration is at least 1 s because the Lease records it
//     in whole seconds.
//   - A candidate creates the Lease if it does not exist, and takes it over when it has been
//     released (holderIdentity "") or when leaseDurationSeconds have passed, on the
//     candidate's own clock, since the candidate first observed the Lease's current content.
//     Timestamps written by other machines are never compared with the local clock.
//   - A takeover increments leaseTransitions; a renewal keeps acquireTime and
//     leaseTransitions and moves renewTime.
//   - Every update carries the resourceVersion that was read (optimistic concurrency): two
//     candidates racing for an expired Lease cannot both win.
//   - The leader renews every RetryPeriod. If RenewDeadline passes since the start of its
//     last successful renewal, it stops leading: the context given to OnStartedLeading is
//     cancelled with cause ErrLeadershipLost. Because candidates wait LeaseDuration from a
//     moment after that renewal was written, the old leader has stopped before anyone else
//     can start, whatever the network does.
//   - With ReleaseOnCancel, a leader whose context ends releases the Lease (holderIdentity "",
//     leaseDurationSeconds 1) so that a standby takes over at its next retry.
//
// # Differences from client-go
//
//   - A leader whose context ends keeps renewing until OnStartedLeading has returned, and
//     only then releases: the work the Lease protects has stopped before it passes on.
//   - A leader that reads a Lease held by someone else stops at once rather than at its
//     renew deadline.
//   - A candidate retries exactly when the Lease it observes expires instead of at its next
//     jittered poll, which shortens failover by up to 1.2 × RetryPeriod.
//   - Run returns ErrLeadershipLost instead of leaving the caller to find out.
package leaderelection
