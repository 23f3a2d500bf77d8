package multicluster

import (
	"context"
	"fmt"
	"reflect"
	"unicode"
	"unsafe"

	"github.com/informerkit/informerkit/apiclient"
)

// Provider says which clusters a fleet has, as they come and go (multicluster-runtime's
// provider): Manual, KubeconfigDir, HubSecrets, ClusterProfiles, or your own.
type Provider interface {
	// Run tells set about the clusters until ctx is done, then returns nil: Set when a
	// cluster appears or its configuration changes, Remove when it goes. An error stops the
	// Fleet, and with it the Manager (as any runnable's). Run is called once per Fleet
	// start; the Fleet forgets what an earlier run reported.
	Run(ctx context.Context, set ClusterSet) error
}

// ClusterSet is the Fleet as its Provider sees it. Both methods return at once: engaging
// and disengaging happen on the Fleet's own goroutine.
type ClusterSet interface {
	// Set says that cluster name exists and is reached with cfg (which the Fleet copies).
	// A cfg equal to the last one given changes nothing (its funcs must be the same func
	// values, copied: a closure made again is another); another one makes the Fleet engage the cluster again with it, for rotated
	// credentials or a moved server. It fails for an empty or invalid name (see ValidName)
	// or a nil cfg; a cfg the API client refuses is reported by the Fleet (Fleet.Err,
	// logs, metrics) and retried at the next Set.
	Set(name string, cfg *apiclient.Config) error
	// Remove says that cluster name is gone: the Fleet disengages it. Unknown names are
	// ignored.
	Remove(name string)
}

// MaxNameLength bounds a cluster's name (a metric label value, a log field).
const MaxNameLength = 253

// ValidName returns an error unless name can name a cluster: 1 to MaxNameLength
// characters, printable, no spaces.
func ValidName(name string) error {
	if name == "" {
		return fmt.Errorf("multicluster: empty cluster name")
	}
	if len(name) > MaxNameLength {
		return fmt.Errorf("multicluster: cluster name of %d bytes (at most %d)", len(name), MaxNameLength)
	}
	for _, r := range name {
		if !unicode.IsPrint(r) || unicode.IsSpace(r) {
			return fmt.Errorf("multicluster: cluster name %q has a space or an unprintable character", name)
		}
	}
	return nil
}

// sameConfig reports whether two configurations reach the same cluster the same way: equal
// fields, the same func values (see sameFunc) and the same interface values.
func sameConfig(a, b *apiclient.Config) bool {
	if a == nil || b == nil {
		return a == b
	}
	x, y := *a, *b
	if !sameFunc(x.Dial, y.Dial) || !sameFunc(x.WrapTransport, y.WrapTransport) ||
		x.Metrics != y.Metrics || x.Tracer != y.Tracer || x.Logger != y.Logger {
		return false
	}
	x.Dial, y.Dial, x.WrapTransport, y.WrapTransport = nil, nil, nil, nil
	x.Metrics, y.Metrics, x.Tracer, y.Tracer, x.Logger, y.Logger = nil, nil, nil, nil, nil, nil
	return reflect.DeepEqual(x, y)
}

// sameFunc reports whether a and b are the same func value: both nil, or copies of one
// value. Not reflect's Pointer, which is the code's address: two method values of one
// method on two apitest servers (their Dial) share it, and would make a cluster moved to
// another server look unchanged. A closure or method value made again is another value,
// and re-engages the cluster: a Provider that builds Configs with funcs keeps the values.
func sameFunc[F any](a, b F) bool {
	return *(*unsafe.Pointer)(unsafe.Pointer(&a)) == *(*unsafe.Pointer)(unsafe.Pointer(&b))
}
