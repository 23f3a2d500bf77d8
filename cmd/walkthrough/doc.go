// Package walkthrough generates docs/walkthrough.md and docs/walkthrough.svg from a run:
// a scenario on apitest (a streaming list, a MODIFIED event, a slow handler, a reconcile
// during which its object changes, a 410 and the relist, a resync) whose every stage
// reports what it does (informer.Options.Observe, workqueue.Config.Observe, the tracing
// spans, the watch events on the wire). The run is inside a testing/synctest bubble, and
// the reports are put in an order that depends only on what causes what, so that the
// walkthrough regenerates byte for byte on any machine; its figures (time and allocations
// per stage) are measured by the same run and kept out of the comparison.
//
// make walkthrough regenerates the files; TestWalkthroughIsCurrent fails when the
// checked-in ones differ from what the code does.
package walkthrough
