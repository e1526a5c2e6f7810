package convert

import (
	"runtime/debug"
	"sync"
)

// gcPercent is the garbage collector's headroom while a conversion runs:
// the heap may grow to 1.25 times the live data instead of twice it. The
// conversion's data is mostly flat slices without pointers, which cost the
// collector little to scan, so collecting more often costs little time.
const gcPercent = 25

var gcScope struct {
	sync.Mutex
	depth int
	saved int
}

// tightGC lowers the collector's headroom to gcPercent, unless it is lower
// already (GOGC), until the returned function is called. Nested and
// concurrent conversions share one scope; the last to end restores the
// setting.
func tightGC() (restore func()) {
	gcScope.Lock()
	if gcScope.depth == 0 {
		gcScope.saved = debug.SetGCPercent(gcPercent)
		if gcScope.saved < gcPercent {
			debug.SetGCPercent(gcScope.saved) // lower already, or off
		}
	}
	gcScope.depth++
	gcScope.Unlock()
	return func() {
		gcScope.Lock()
		defer gcScope.Unlock()
		if gcScope.depth--; gcScope.depth == 0 {
			debug.SetGCPercent(gcScope.saved)
		}
	}
}
