package controller

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"
	"time"

	"github.com/informerkit/informerkit/apitest"
	"github.com/informerkit/informerkit/internal/testobj"
	"github.com/informerkit/informerkit/meta"
)

// A resource no CRD defines stops Start within seconds, named, instead of after the
// 2-minute sync timeout with "caches did not sync".
func TestStartNamesAMissingResource(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		srv := newTestServerWithOptions(t, apitest.Options{InMemory: true})
		m := newManager(t, srv, ManagerOptions{})
		configMapController(t, m, "cm", forward(nil))
		mustInformer[*testobj.Widget](t, m)
		start := time.Now()
		err := m.Start(context.Background())
		var mre *MissingResourceError
		if !errors.As(err, &mre) || len(mre.Resources) != 1 || mre.Resources[0].GroupVersionResource != testobj.WidgetGVR {
			t.Fatalf("Start = %v, want a *MissingResourceError of widgets", err)
		}
		if want := "controller: widgets.example.com is not served: is its CRD installed?"; err.Error() != want {
			t.Errorf("error %q, want %q", err, want)
		}
		if took := time.Since(start); took > DefaultMissingResourceTimeout+missingCheckInterval {
			t.Errorf("Start failed after %v, want within %v", took, DefaultMissingResourceTimeout+missingCheckInterval)
		}
	})
}

// A CRD that serves another version, and a built-in resource the server does not serve, say
// so; a CRD installed while Start waits is no error.
func TestMissingResourceMessages(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		srv := newTestServerWithOptions(t, apitest.Options{InMemory: true})
		if err := srv.AddResource(apitest.ResourceType{Group: "example.com", Version: "v1beta1", Kind: "Widget", Plural: "widgets", Namespaced: true}); err != nil {
			t.Fatal(err)
		}
		m := newManager(t, srv, ManagerOptions{})
		mustInformer[*testobj.Widget](t, m)
		if _, err := InformerForWithOptions[*meta.Unstructured](m, InformerOptions{Resource: meta.GroupVersionResource{Group: "apps", Version: "v9", Resource: "deployments"}}); err != nil {
			t.Fatal(err)
		}
		err := m.Start(context.Background())
		want := "controller: deployments.apps/v9 is not served (apps serves v1): does this Kubernetes release serve it?; " +
			"widgets.example.com/v1 is not served (example.com serves v1beta1): is its CRD up to date?"
		if err == nil || err.Error() != want {
			t.Errorf("Start = %v\nwant %s", err, want)
		}
	})
	synctest.Test(t, func(t *testing.T) {
		srv := newTestServerWithOptions(t, apitest.Options{InMemory: true})
		m := newManager(t, srv, ManagerOptions{})
		mustInformer[*testobj.Widget](t, m)
		go func() {
			time.Sleep(DefaultMissingResourceTimeout - missingCheckInterval)
			if err := srv.AddResource(apitest.ResourceType{Group: "example.com", Version: "v1", Kind: "Widget", Plural: "widgets", Namespaced: true}); err != nil {
				t.Error(err)
			}
		}()
		stop, _ := startManager(t, m)
		time.Sleep(2 * DefaultMissingResourceTimeout)
		synctest.Wait()
		select {
		case <-m.synced:
		default:
			t.Fatal("the caches did not sync once the CRD was installed")
		}
		if err := stop(); err != nil {
			t.Fatalf("Start = %v", err)
		}
	})
}
