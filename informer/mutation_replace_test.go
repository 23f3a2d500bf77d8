package informer

import (
	"log/slog"
	"testing"

	"github.com/informerkit/informerkit/indexer"
	"github.com/informerkit/informerkit/internal/testobj"
	"github.com/informerkit/informerkit/meta"
)

// A relist's changes reach the handlers one by one while the detector records them. A
// handler that runs as soon as it is told about the first object, and changes a value the
// second shares, must not make the detector record the second with the change: both are
// reported. (In an informer the listener's goroutine makes this a race that a loaded machine
// loses; here the change happens inside the callback, every time.)
func TestDetectorRecordsARelistBeforeHandlersSeeIt(t *testing.T) {
	var reports []*CacheMutationError
	keyFunc := indexer.MetaNamespaceKeyFunc[*testobj.ConfigMap]
	d := withMutationDetector(indexer.New(keyFunc, nil), "test", keyFunc, true,
		func(err *CacheMutationError) { reports = append(reports, err) }, slog.Default()).(*mutationDetector[*testobj.ConfigMap])
	shared := map[string]string{"app": "web"}
	list := []*testobj.ConfigMap{
		{ObjectMeta: meta.ObjectMeta{Namespace: "default", Name: "a", Labels: shared}},
		{ObjectMeta: meta.ObjectMeta{Namespace: "default", Name: "b", Labels: shared}},
	}
	if err := d.ReplaceAndDiff(list, "1", func(c indexer.Change[*testobj.ConfigMap]) {
		if c.Key == "default/a" {
			c.New.Labels["app"] = "changed" // a handler's bug
		}
	}); err != nil {
		t.Fatal(err)
	}
	d.sweep()
	got := map[string]bool{}
	for _, r := range reports {
		got[r.Key] = true
	}
	if !got["default/a"] || !got["default/b"] || len(reports) != 2 {
		t.Fatalf("reports %v, want one for default/a and one for default/b", reports)
	}
}
