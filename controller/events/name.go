package events

import (
	"fmt"
	"sync/atomic"
	"time"
)

// lastNameNanos is the suffix of the last Event name made in this process.
var lastNameNanos atomic.Int64

// eventName names a new Event about the object named obj: "<obj>.<nanoseconds in hex>", as
// client-go names them, but the nanoseconds are unique in the process: two Events made at
// one instant (a coarse clock, or testing/synctest's fake one, where time stands still)
// get consecutive values instead of one name, of which the server would refuse the second.
// Names made by another process can still collide; the sender then writes the Event again
// under a new name (Broadcaster.send).
func eventName(obj string, now time.Time) string {
	n := now.UnixNano()
	for {
		last := lastNameNanos.Load()
		next := max(n, last+1)
		if lastNameNanos.CompareAndSwap(last, next) {
			return fmt.Sprintf("%s.%x", obj, next)
		}
	}
}
