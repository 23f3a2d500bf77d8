// Package informer is informerkit's shared informer: a reflector feeding a DeltaFIFO, whose
// deltas update an indexed cache and are fanned out to event handlers, one listener per
// handler. It also holds the informer factory, listers and label selectors.
package informer
