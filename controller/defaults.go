package controller

import (
	"log/slog"

	"github.com/informerkit/informerkit/controller/metrics"
	"github.com/informerkit/informerkit/kinds"
)

// setDefaults fills the fields of o left at their zero value with their documented
// defaults.
func (o *ManagerOptions) setDefaults() {
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	if o.CacheSyncTimeout <= 0 {
		o.CacheSyncTimeout = DefaultCacheSyncTimeout
	}
	if o.MaxStaleness <= 0 {
		o.MaxStaleness = DefaultMaxStaleness
	}
	if o.MissingResourceTimeout == 0 {
		o.MissingResourceTimeout = DefaultMissingResourceTimeout
	}
	if o.GracefulShutdownTimeout <= 0 {
		o.GracefulShutdownTimeout = DefaultGracefulShutdownTimeout
	}
	if o.DiscoveryInterval <= 0 {
		o.DiscoveryInterval = DefaultDiscoveryInterval
	}
	if o.Registry == nil {
		o.Registry = metrics.NewRegistry()
	}
	if o.Kinds == nil {
		o.Kinds = kinds.Default
	}
}
