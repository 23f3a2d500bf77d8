package walkthrough

import _ "unsafe" // for go:linkname

// nanotime is the runtime's monotonic clock. Inside a testing/synctest bubble time.Now
// returns the bubble's fake time, which stands still while the stages work; the figures
// need the real one. runtime.nanotime is one of the runtime's functions kept reachable by
// linkname for the packages that use it (go.dev/issue/67401).
//
//go:linkname nanotime runtime.nanotime
func nanotime() int64
