package apitest_test

import (
	"strconv"
	"testing"

	"github.com/informerkit/informerkit/apiclient"
	"github.com/informerkit/informerkit/apitest"
)

// Without a watch cache, a list at resourceVersion=0 goes to storage and honours limit: it
// pages like a list at "", from a snapshot at the newest resourceVersion.
func TestWithoutWatchCacheListsAtZeroArePaged(t *testing.T) {
	e := newEnvWithOptions(t, apitest.Options{NoWatchCache: true})
	for i := range 5 {
		e.s.Create("configmaps", cm("c"+strconv.Itoa(i), nil, nil))
	}
	first, err := e.cms.List(e.ctx, apiclient.ListOptions{ResourceVersion: "0", Limit: 2})
	if err != nil {
		t.Fatal(err)
	}
	if len(first.Items) != 2 || first.Continue == "" || first.ResourceVersion != e.s.ResourceVersion() {
		t.Fatalf("rv=0 limit=2: %d items, continue %q, resourceVersion %s (server at %s)",
			len(first.Items), first.Continue, first.ResourceVersion, e.s.ResourceVersion())
	}
	names := []string{first.Items[0].Name, first.Items[1].Name}
	for cont := first.Continue; cont != ""; {
		page, err := e.cms.List(e.ctx, apiclient.ListOptions{Limit: 2, Continue: cont})
		if err != nil {
			t.Fatal(err)
		}
		for _, it := range page.Items {
			names = append(names, it.Name)
		}
		cont = page.Continue
	}
	if len(names) != 5 || names[0] != "c0" || names[4] != "c4" {
		t.Fatalf("paged names %v", names)
	}
	// Without limit the list is whole, as always.
	all, err := e.cms.List(e.ctx, apiclient.ListOptions{ResourceVersion: "0"})
	if err != nil || len(all.Items) != 5 || all.Continue != "" {
		t.Fatalf("rv=0 without limit: %v, %d items, continue %q", err, len(all.Items), all.Continue)
	}
}
