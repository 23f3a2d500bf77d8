package main

import (
	"context"
	"testing"
	"time"

	"github.com/informerkit/informerkit/meta"

	corev1 "k8s.io/api/core/v1"

	"github.com/informerkit/informerkit/apiclient"
	"github.com/informerkit/informerkit/informer"
	"github.com/informerkit/informerkit/reflector"
)

// tunableLW is a collection that reports, on each Watch, the decoding options it was tuned
// with (apiclient.DecodeTunable), as apiclient.Resource takes them.
type tunableLW struct {
	opts    apiclient.DecodeOptions
	watched chan apiclient.DecodeOptions
}

func (l *tunableLW) List(ctx context.Context, opts apiclient.ListOptions) (*meta.List[*corev1.Pod], error) {
	return &meta.List[*corev1.Pod]{ListMeta: meta.ListMeta{ResourceVersion: "1"}}, nil
}

func (l *tunableLW) Watch(ctx context.Context, opts apiclient.ListOptions) (apiclient.Watcher[*corev1.Pod], error) {
	select {
	case l.watched <- l.opts:
	default:
	}
	return newIdleWatcher(), nil
}

func (l *tunableLW) WithDecodeOptions(o apiclient.DecodeOptions) apiclient.ListerWatcher[*corev1.Pod] {
	return &tunableLW{opts: o, watched: l.watched}
}

// idleWatcher sends nothing until stopped.
type idleWatcher struct {
	ch chan apiclient.Event[*corev1.Pod]
}

func newIdleWatcher() *idleWatcher { return &idleWatcher{ch: make(chan apiclient.Event[*corev1.Pod])} }

func (w *idleWatcher) ResultChan() <-chan apiclient.Event[*corev1.Pod] { return w.ch }
func (w *idleWatcher) Stop()                                           { close(w.ch) }

// The events phase's informer must decode as the sync phase's does: the informer's options
// (managedFields skipped, strings shared) reach the collection under replayLW. Before, they
// did not, and the events phase decoded every managedFields for the transform to drop it.
func TestReplayLWPassesDecodeOptions(t *testing.T) {
	base := &tunableLW{watched: make(chan apiclient.DecodeOptions, 1)}
	inf := informer.New[*corev1.Pod](replayLW[*corev1.Pod]{base, "1"},
		informer.Options[*corev1.Pod]{WatchList: reflector.WatchListOff})
	ctx, cancel := context.WithCancel(context.Background())
	go inf.Run(ctx)
	defer func() { cancel(); <-inf.Done() }()
	select {
	case o := <-base.watched:
		if !o.OmitManagedFields {
			t.Error("the watch under replayLW decodes managedFields; want them skipped (OmitManagedFields)")
		}
		if o.Strings == nil {
			t.Error("the watch under replayLW allocates every string; want the informer's shared strings (Strings)")
		}
	case <-time.After(time.Minute):
		t.Fatal("no watch within a minute")
	}
}
