//go:build !race

package nodepool

// raceDetector: the test binary was built with -race (make test).
const raceDetector = false
