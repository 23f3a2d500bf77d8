//go:build !race

package multicluster_test

// raceEnabled: the tests run with the race detector (the cycle test does fewer cycles).
const raceEnabled = false
