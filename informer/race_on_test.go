//go:build race

package informer

// raceEnabled reports whether the tests run with the race detector (the heap gate keeps a
// baseline per mode).
const raceEnabled = true
