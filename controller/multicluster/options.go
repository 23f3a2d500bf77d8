package multicluster

import (
	"fmt"
	"log/slog"
	"time"

	"github.com/informerkit/informerkit/controller/client"
	"github.com/informerkit/informerkit/controller/events"
	"github.com/informerkit/informerkit/informer"
)

// Defaults of Options.
const (
	// DefaultRequestTimeout bounds every non-watch request to a cluster whose Config sets
	// no Timeout: a cluster that stops answering fails its requests within it rather than
	// after apiclient's 70 s response-header deadline.
	DefaultRequestTimeout = 30 * time.Second
	// DefaultClusterLabelLimit is how many clusters get a metric label value of their own.
	DefaultClusterLabelLimit = 100
	// DefaultEventDrainTimeout bounds the writing of a disengaged cluster's queued Events.
	DefaultEventDrainTimeout = 5 * time.Second
)

// OtherClusters is the cluster label value of the clusters beyond the label limit
// (ClusterLabels): their series are summed under it.
const OtherClusters = "_other"

// Standby says which clusters a replica of a spread fleet (Options.Spread) engages without
// reconciling them, so that it takes them over from synced caches.
type Standby int

const (
	// StandbyNext (the default) engages the clusters this replica would take over first if
	// their holder left: for each cluster, the replica that rendezvous hashing places it on
	// once its holder is gone. Each cluster is then cached on two replicas.
	StandbyNext Standby = iota
	// StandbyNone engages only the clusters this replica holds: a replica that takes a
	// cluster over lists it first.
	StandbyNone
	// StandbyAll engages every cluster on every replica.
	StandbyAll
)

// String returns the name of the constant ("Next", "None", "All").
func (s Standby) String() string {
	switch s {
	case StandbyNext:
		return "Next"
	case StandbyNone:
		return "None"
	case StandbyAll:
		return "All"
	}
	return fmt.Sprintf("Standby(%d)", int(s))
}

// ClusterLabels bound the cardinality of the cluster label of the Fleet's and its
// controllers' metrics: a thousand clusters must not make a thousand series per metric.
type ClusterLabels struct {
	// Limit is how many clusters at once get a label value of their own (their name), in
	// the order they are engaged; the others are counted under OtherClusters. A cluster's
	// series go when it is disengaged, and its slot passes to the next cluster engaged.
	// Default DefaultClusterLabelLimit; negative: none (every cluster is OtherClusters).
	Limit int
	// Select, if set, says which clusters may get a label of their own (opt-in: the
	// production clusters, say); the rest are OtherClusters. Default: any, within Limit.
	Select func(name string) bool
}

// Options are a Fleet's optional settings.
type Options struct {
	// Spread places every cluster on one replica of the Manager's sharding ring
	// (controller.ManagerOptions.Sharding must name a ring): by rendezvous hashing of its
	// name over the ring's buckets, so that a replica that joins or leaves moves about 1/N
	// of the clusters. A replica engages the clusters it holds and reconciles them only
	// while it holds them; a cluster passes to another replica only once the reconciles
	// begun on it have returned (no double reconcile). Controllers of a spread fleet run on
	// every replica. Default false: every replica engages every cluster, and the
	// controllers run where the Manager runs leader-only runnables.
	Spread bool
	// Standby says which clusters a replica of a spread fleet engages without reconciling
	// them (default StandbyNext).
	Standby Standby
	// RequestTimeout is the Timeout of the clusters' API clients whose Config has none
	// (default DefaultRequestTimeout; negative: none).
	RequestTimeout time.Duration
	// KeepWatchProtocol keeps the watch protocol of each cluster's Config. Default false: a
	// Config with apiclient.WatchAuto watches with WatchChunked, whose streams share the
	// client's HTTP/2 connections, instead of one WebSocket connection per watch.
	KeepWatchProtocol bool
	// SeparateTransports gives each cluster's API client an HTTP transport of its own.
	// Default false: the clients of the clusters that one server serves the same way (host,
	// TLS settings, proxy, Dial func value, exec plugin: apiclient.Transports) share one
	// transport, whose HTTP/2 connection carries all their watches.
	SeparateTransports bool
	// InformerOptions are the options of each cluster's informer factory (namespace,
	// selectors, stall timeout...). Default: informer.FactoryOptions' defaults, with the
	// cluster's logger.
	InformerOptions informer.FactoryOptions
	// ClientOptions are the options of each cluster's controller client. Their Registry
	// defaults to the Manager's Kinds and Logger to the cluster's logger.
	ClientOptions client.Options
	// EventOptions are the options of each cluster's event broadcaster. Registry defaults
	// to the Manager's Kinds, Logger to the Fleet's, DrainTimeout to
	// DefaultEventDrainTimeout, Instance to the Manager's Identity (else the host name).
	EventOptions events.Options
	// MetricsClusters bounds the cluster label of the metrics (see ClusterLabels).
	MetricsClusters ClusterLabels
	// Logger receives the Fleet's logs; each cluster's carry cluster=name (default the
	// Manager's logger).
	Logger *slog.Logger
}

func (o *Options) validate() error {
	if o.Standby < StandbyNext || o.Standby > StandbyAll {
		return fmt.Errorf("multicluster: invalid Standby %v", o.Standby)
	}
	if o.RequestTimeout == 0 {
		o.RequestTimeout = DefaultRequestTimeout
	}
	if o.MetricsClusters.Limit == 0 {
		o.MetricsClusters.Limit = DefaultClusterLabelLimit
	}
	if o.EventOptions.DrainTimeout == 0 {
		o.EventOptions.DrainTimeout = DefaultEventDrainTimeout
	}
	return nil
}
