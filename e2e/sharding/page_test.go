package sharding_test

import (
	"strconv"
	"testing"

	"github.com/informerkit/informerkit/meta"

	"github.com/informerkit/informerkit/apiclient"
	"github.com/informerkit/informerkit/sharding"
)

// TestShardSelectorPageMetadata: a sharded page's list metadata (continue token,
// remainingItemCount) is present on both servers alike.
func TestShardSelectorPageMetadata(t *testing.T) {
	ctx := ctxFor(t)
	real, fake := realSide(t), apitestSide(t)
	seed(t, ctx, real, "pages", 2, 20)
	seed(t, ctx, fake, "pages", 2, 20)
	sel := sharding.NewSelector(sharding.FieldNamespace, sharding.FullRange).String()
	for _, rv := range []string{"", "0"} {
		var got [2]*meta.List[*configMap]
		for i, s := range []side{real, fake} {
			l, err := s.cms.Namespace("pages-0").List(ctx, apiclient.ListOptions{ShardSelector: sel, Limit: 5, ResourceVersion: rv})
			if err != nil {
				t.Fatal(err)
			}
			got[i] = l
		}
		for i, name := range []string{"kube-apiserver", "apitest"} {
			rem := "none"
			if got[i].RemainingItemCount != nil {
				rem = strconv.FormatInt(*got[i].RemainingItemCount, 10)
			}
			t.Logf("rv=%q %s: %d items, continue %v, remainingItemCount %s, shardInfo %v", rv, name, len(got[i].Items), got[i].Continue != "", rem, got[i].ShardInfo != nil)
		}
		if len(got[0].Items) != len(got[1].Items) || (got[0].Continue == "") != (got[1].Continue == "") ||
			(got[0].RemainingItemCount == nil) != (got[1].RemainingItemCount == nil) || (got[0].ShardInfo == nil) != (got[1].ShardInfo == nil) {
			t.Errorf("rv=%q: the servers' pages differ (see the log)", rv)
		}
	}
}
