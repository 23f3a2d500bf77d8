package client

import (
	"fmt"
	"reflect"
	"slices"

	"github.com/informerkit/informerkit/informer"
	"github.com/informerkit/informerkit/meta"
)

// StartedOnRead returns the informers this client created for a read of a type that had
// none (Options.DisableStartOnRead off): an inventory names them as acquired by a cached
// read.
func (c *Client) StartedOnRead() []informer.AnyInformer {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Clone(c.readStarted)
}

// startOnRead creates T's informer for gvr for a read, if Options.AdmitStartOnRead admits
// it.
func startOnRead[T meta.Object](c *Client, gvr meta.GroupVersionResource) (*informer.Informer[T], error) {
	if admit := c.opts.AdmitStartOnRead; admit != nil {
		if err := admit(gvr, reflect.TypeFor[T]()); err != nil {
			return nil, fmt.Errorf("client: reading %s as %v starts no informer: %w", gvr, reflect.TypeFor[T](), err)
		}
	}
	inf := informer.InformerFor[T](c.factory, gvr)
	c.mu.Lock()
	if !slices.ContainsFunc(c.readStarted, func(i informer.AnyInformer) bool { return i == informer.AnyInformer(inf) }) {
		c.readStarted = append(c.readStarted, inf)
	}
	c.mu.Unlock()
	return inf, nil
}
