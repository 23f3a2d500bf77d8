package multicluster

import (
	"context"
	"maps"
	"sync"

	"github.com/informerkit/informerkit/apiclient"
)

// Manual is a Provider whose clusters the program sets itself (multicluster-runtime's
// "clusters" provider): a fixed list, clusters a test starts, clusters another system
// announces through your code. Set and Remove may be called before the Fleet runs (the
// clusters are reported when it starts) and while it runs. Its zero value is not usable:
// use NewManual.
type Manual struct {
	mu       sync.Mutex
	clusters map[string]*apiclient.Config
	set      ClusterSet // while Run runs
}

// NewManual returns a Manual provider with no cluster.
func NewManual() *Manual { return &Manual{clusters: map[string]*apiclient.Config{}} }

// Set adds cluster name, or gives it another configuration. The name is checked
// (ValidName) now; the Config when the Fleet engages it.
func (p *Manual) Set(name string, cfg *apiclient.Config) error {
	if err := ValidName(name); err != nil {
		return err
	}
	c := *cfg
	p.mu.Lock()
	defer p.mu.Unlock()
	p.clusters[name] = &c
	if p.set != nil {
		return p.set.Set(name, &c)
	}
	return nil
}

// Remove removes cluster name.
func (p *Manual) Remove(name string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	delete(p.clusters, name)
	if p.set != nil {
		p.set.Remove(name)
	}
}

// Run implements Provider: it reports the clusters set so far, then every change until ctx
// is done.
func (p *Manual) Run(ctx context.Context, set ClusterSet) error {
	p.mu.Lock()
	p.set = set
	for name, cfg := range maps.All(p.clusters) {
		if err := set.Set(name, cfg); err != nil {
			p.mu.Unlock()
			return err
		}
	}
	p.mu.Unlock()
	<-ctx.Done()
	p.mu.Lock()
	p.set = nil
	p.mu.Unlock()
	return nil
}
