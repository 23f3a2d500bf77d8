package configmapreplicator

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"time"

	"github.com/informerkit/informerkit/apiclient"
	"github.com/informerkit/informerkit/controller/controllerutil"
	"github.com/informerkit/informerkit/meta"
)

// freshWait bounds how long a reconcile waits for the cache to catch up with the server's
// replication before it gives up (an error: the reconcile is retried with back-off).
const freshWait = 30 * time.Second

// errStaleView: the cached replication is not the server's (deleted, or changed since it
// was cached); the reconcile wrote nothing from it.
var errStaleView = errors.New("the cached replication is behind the server")

// liveCheck confirms, before a reconcile's first creation, change or deletion of a copy, that
// the replication the reconcile decided from is the server's: a process restarted against a
// lagging cache (or one informer behind the server) must not re-create the copies of a
// replication deleted since, nor create or delete copies for a selector moved since (the
// explorer found it, docs/explore.md). One quorum read per reconcile that writes a copy;
// a reconcile that finds every copy up to date reads nothing.
type liveCheck struct {
	r    *Replicator
	repl *ConfigMapReplication
	done bool
	// gone: the server has no such replication any more.
	gone bool
	err  error
}

// confirm reads the replication from the server once per reconcile. It returns nil if the
// server's is the cached one; an error wrapping errStaleView if it is gone or newer, after
// waiting (up to freshWait) for the cache to hold the newer one, so that the reconcile
// that follows decides from it.
func (c *liveCheck) confirm(ctx context.Context) error {
	if c.done {
		return c.err
	}
	c.done = true
	res, err := c.r.replications.Resource()
	if err != nil {
		c.err = err
		return err
	}
	live, err := res.Get(ctx, c.repl.Name, apiclient.GetOptions{}) // no resourceVersion: a quorum read
	switch {
	case meta.IsNotFound(err):
		// Deleted: the cache's DELETED event is on its way and reconciles it again.
		c.gone, c.err = true, fmt.Errorf("%s: %w: deleted", c.repl.Name, errStaleView)
	case err != nil:
		c.err = fmt.Errorf("reading %s from the server: %w", c.repl.Name, err)
	case live.UID != c.repl.UID || live.ResourceVersion != c.repl.ResourceVersion:
		c.err = fmt.Errorf("%s: %w: cached at resourceVersion %s, the server has %s", c.repl.Name, errStaleView, c.repl.ResourceVersion, live.ResourceVersion)
		wctx, cancel := context.WithTimeout(ctx, freshWait)
		defer cancel()
		if err := c.r.replications.WaitFresh(wctx, live.ResourceVersion); err != nil {
			c.err = fmt.Errorf("waiting for the cache to hold %s at resourceVersion %s: %w", c.repl.Name, live.ResourceVersion, err)
		}
	}
	return c.err
}

// upToDate reports whether the existing copy cm already holds what writeCopy would write.
func upToDate(cm *ConfigMap, repl *ConfigMapReplication, src *ConfigMap) bool {
	return cm.Labels[LabelReplication] == repl.Name &&
		cm.Annotations[AnnotationSource] == key(src.Namespace, src.Name) &&
		maps.Equal(cm.Data, src.Data) &&
		maps.EqualFunc(cm.BinaryData, src.BinaryData, func(a, b []byte) bool { return string(a) == string(b) }) &&
		controllerutil.IsControlledBy(cm, repl)
}
