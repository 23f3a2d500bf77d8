package e2e

import (
	"fmt"
	"testing"
	"time"

	"github.com/informerkit/informerkit/apiclient"
	"github.com/informerkit/informerkit/apitest"
	"github.com/informerkit/informerkit/e2e/cluster"
	"github.com/informerkit/informerkit/sharding"
)

// TestShardSelectorIgnoredWithoutGate: this package's kube-apiserver runs without the alpha
// gate ShardedListAndWatch (1.36's default). It ignores shardSelector, valid or not, and
// answers without metadata.shardInfo, as apitest with Options.NoShardSelector does; that
// absence is how a client detects the missing support. (e2e/sharding runs with the gate on.)
func TestShardSelectorIgnoredWithoutGate(t *testing.T) {
	c := cluster.ForTest(t)
	ac := acClient(t, c, nil)
	ctx := acCtx(t, 2*time.Minute)
	ns := acNamespace(t, ac)
	real := apiclient.NewResource[*acConfigMap](ac, acConfigMaps).Namespace(ns)

	s := apitest.NewServerWithOptions(apitest.Options{NoShardSelector: true, KubernetesVersion: c.Version})
	defer s.Close()
	fc, err := apiclient.New(s.Config())
	if err != nil {
		t.Fatal(err)
	}
	defer fc.Close()
	fake := apiclient.NewResource[*acConfigMap](fc, acConfigMaps).Namespace("default")

	for i := range 6 {
		for _, r := range []*apiclient.Resource[*acConfigMap]{real, fake} {
			if _, err := r.Create(ctx, newCM(fmt.Sprintf("cm-%d", i), nil), apiclient.CreateOptions{}); err != nil {
				t.Fatal(err)
			}
		}
	}
	tiny := sharding.NewSelector(sharding.FieldUID, sharding.Range{Start: 0, End: 1}).String()
	for _, sel := range []string{tiny, "shardRange(object.metadata.name, '0x0', '0x1')"} {
		for name, r := range map[string]*apiclient.Resource[*acConfigMap]{"kube-apiserver": real, "apitest": fake} {
			l, err := r.List(ctx, apiclient.ListOptions{ShardSelector: sel})
			if err != nil {
				t.Fatalf("%s: %q: %v", name, sel, err)
			}
			if len(l.Items) != 6 || l.ShardInfo != nil {
				t.Errorf("%s without the gate, %q: %d items, shardInfo %+v; want all 6 and none", name, sel, len(l.Items), l.ShardInfo)
			}
		}
	}
}
