package client

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/informerkit/informerkit/apiclient"
	"github.com/informerkit/informerkit/internal/testobj"
	"github.com/informerkit/informerkit/meta"
)

// A delete decided from a cache whose watch lags (apitest stalls it) while the object
// changed on the server: past the staleness bound the guard reads live and refuses with a
// *StaleObjectError; within a generous bound the precondition still makes the server refuse
// (409). Once the watch delivers, WaitFresh returns and the delete of the fresh copy works.
func TestGuardedDeleteOfAStaleObject(t *testing.T) {
	e := newEnv(t, Options{})
	if _, err := e.cms.Create(ctxT(t), testobj.NewConfigMap("a", "x", nil), apiclient.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	cached, err := e.cms.Get(ctxT(t), "a", "x", GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.srv.WaitForWatches(ctxT(t), "configmaps", 1); err != nil {
		t.Fatal(err)
	}
	release, _, err := e.srv.Faults().StallWatches("configmaps", 0)
	if err != nil {
		t.Fatal(err)
	}
	defer release()
	// Another writer changes the object; this client's cache does not see it.
	changed, err := e.srv.Update("configmaps", map[string]any{"metadata": map[string]any{"namespace": "a", "name": "x"}, "data": map[string]any{"v": "2"}})
	if err != nil {
		t.Fatal(err)
	}
	var stale *StaleObjectError
	err = e.cms.DeleteGuarded(ctxT(t), cached, -1, DeleteOptions{}) // any staleness reads live
	if !errors.As(err, &stale) || !errors.Is(err, ErrStaleObject) || stale.Cached != cached.ResourceVersion ||
		stale.Live != changed.ResourceVersion() || stale.Key != "a/x" {
		t.Fatalf("DeleteGuarded past the bound = %v (%+v)", err, stale)
	}
	err = e.cms.DeleteGuarded(ctxT(t), cached, time.Hour, DeleteOptions{})
	if !meta.IsConflict(err) {
		t.Fatalf("DeleteGuarded within the bound = %v, want the precondition's conflict", err)
	}
	_, err = e.cms.UpdateGuarded(ctxT(t), cached, -1, UpdateOptions{})
	if !errors.As(err, &stale) {
		t.Fatalf("UpdateGuarded past the bound = %v", err)
	}
	if err := e.cms.WaitFresh(ctxT(t), "abc"); err == nil {
		t.Fatal("WaitFresh of a bad resourceVersion")
	}
	short, cancel := context.WithTimeout(ctxT(t), 50*time.Millisecond)
	defer cancel()
	if err := e.cms.WaitFresh(short, changed.ResourceVersion()); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("WaitFresh with a stalled watch = %v", err)
	}
	release()
	if err := e.cms.WaitFresh(ctxT(t), changed.ResourceVersion()); err != nil {
		t.Fatalf("WaitFresh after the stall: %v", err)
	}
	fresh, err := e.cms.Get(ctxT(t), "a", "x", GetOptions{})
	if err != nil || fresh.ResourceVersion != changed.ResourceVersion() {
		t.Fatalf("Get after WaitFresh: %v %v", fresh, err)
	}
	if err := e.cms.DeleteGuarded(ctxT(t), fresh, -1, DeleteOptions{}); err != nil {
		t.Fatalf("DeleteGuarded of the fresh object: %v", err)
	}
	if _, err := e.srv.Get("configmaps", "a", "x"); !meta.IsNotFound(err) {
		t.Fatalf("the object survived: %v", err)
	}
}
