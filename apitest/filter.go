package apitest

import (
	"net/http"

	"github.com/informerkit/informerkit/apitest/internal/apierr"
	"github.com/informerkit/informerkit/apitest/internal/selector"
	"github.com/informerkit/informerkit/labels"
	"github.com/informerkit/informerkit/meta"
	"github.com/informerkit/informerkit/sharding"
)

// filter is the namespace and selectors of a list, watch or deletecollection.
type filter struct {
	namespace string
	labels    labels.Selector
	fields    selector.Fields
	shard     *sharding.Selector // nil: no shardSelector (or the server ignores it)
	// shardCounts: a shard selector counts as a selector for remainingItemCount (1.37).
	shardCounts bool
}

func (f *filter) empty() bool { return f.labels.Empty() && len(f.fields) == 0 && f.shard == nil }

func (f *filter) matches(o *storedObj) bool {
	if o == nil {
		return false
	}
	if f.namespace != "" && o.namespace != f.namespace {
		return false
	}
	if f.shard != nil && !f.shard.MatchesObject(o.uid, o.namespace) {
		return false
	}
	if !f.labels.Matches(o.labels) {
		return false
	}
	return len(f.fields) == 0 || f.fields.Matches(o.name, o.namespace, func() map[string]any { return mustDecode(o.raw) })
}

// parseFilter reads the namespace and selectors of a list, watch or deletecollection.
func (s *Server) parseFilter(r *http.Request, ri *reqInfo) (*filter, *meta.Status) {
	q := r.URL.Query()
	f := &filter{namespace: ri.namespace, shardCounts: s.rel.shardSelectorFilters()}
	var err error
	if f.shard, err = s.parseShardSelector(q); err != nil {
		return nil, shardSelectorError(err)
	}
	if f.labels, err = labels.Parse(q.Get("labelSelector")); err != nil {
		return nil, apierr.BadRequest(err.Error())
	}
	if f.fields, err = selector.ParseFields(q.Get("fieldSelector"), ri.res.typ.labels); err != nil {
		return nil, apierr.BadRequest(err.Error())
	}
	if ri.name != "" {
		// A watch of one object (legacy path form) is a watch with metadata.name=<name>.
		for _, fr := range f.fields {
			if fr.Field == "metadata.name" && !fr.Not && fr.Value != ri.name {
				return nil, apierr.BadRequest("fieldSelector metadata.name doesn't match requested name")
			}
		}
		f.fields = append(f.fields, selector.Requirement{Field: "metadata.name", Value: ri.name})
	}
	return f, nil
}

// shardInfo is what a filtered list echoes: the selector in the server's normal form.
func (f *filter) shardInfo() *meta.ShardInfo {
	if f.shard == nil {
		return nil
	}
	return &meta.ShardInfo{Selector: f.shard.String()}
}

// onlySharded reports a filter whose only selector is a shard selector.
func (f *filter) onlySharded() bool {
	return f.shard != nil && f.labels.Empty() && len(f.fields) == 0
}
