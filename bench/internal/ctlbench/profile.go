//go:build benchprofile

package ctlbench

import (
	"os"
	"runtime/pprof"
)

// With the build tag benchprofile, "profile FILE" starts a CPU profile and "profile-stop"
// writes it. The measured binaries are built without it, so that runtime/pprof does not
// count in their size.
func init() {
	var f *os.File
	startProfile = func(path string) error {
		var err error
		if f, err = os.Create(path); err != nil {
			return err
		}
		return pprof.StartCPUProfile(f)
	}
	stopProfile = func(string) error {
		pprof.StopCPUProfile()
		return f.Close()
	}
}
