// Package leaderelection elects one leader among the replicas of a controller on a
// coordination.k8s.io/v1 Lease: informerkit's counterpart of client-go's
// tools/leaderelection with a LeaseLock. The controller Manager uses it; it can also be used
// on its own.
//
// # Rules
//
//   - Durations: LeaseDuration > RenewDeadline > 1.2 × RetryPeriod > 0 (Config.Validate
//     explains what is wrong); LeaseDuration is at least 1 s (the Lease records seconds).
//   - A candidate takes the Lease over when it has been released or when
//     leaseDurationSeconds have passed, on the candidate's own clock, since it first observed
//     the Lease's current content: timestamps of other machines are never compared with the
//     local clock. Every update carries the resourceVersion read, so two candidates racing
//     for an expired Lease cannot both win.
//   - The leader renews every RetryPeriod. If RenewDeadline passes since the start of its
//     last successful renewal, it stops leading: the context given to OnStartedLeading is
//     cancelled with cause ErrLeadershipLost, before anyone else can start.
//   - With ReleaseOnCancel, a leader whose context ends releases the Lease so that a standby
//     takes over at once.
//
// Unlike client-go, a leader whose context ends keeps renewing until OnStartedLeading has
// returned and only then releases; a leader that sees another holder stops at once; a
// candidate watches the Lease, so it takes a released Lease at once and an expired one
// exactly LeaseDuration after the last renewal arrived; Run returns ErrLeadershipLost.
// docs/leaderelection.md has every rule and difference.
package leaderelection
