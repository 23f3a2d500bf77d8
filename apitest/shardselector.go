package apitest

import (
	"net/http"
	"net/url"
	"strings"

	"github.com/informerkit/informerkit/apitest/internal/apierr"
	"github.com/informerkit/informerkit/meta"
	"github.com/informerkit/informerkit/sharding"
)

// parseShardSelector reads the shardSelector of a list, watch or deletecollection as
// kube-apiserver 1.36 with the ShardedListAndWatch gate does (its generic registry parses
// it for List, Watch and, through List, DeleteCollection); nil when absent or ignored.
func (s *Server) parseShardSelector(q url.Values) (*sharding.Selector, error) {
	if s.opts.NoShardSelector {
		return nil, nil
	}
	v := q.Get("shardSelector")
	if v == "" {
		return nil, nil
	}
	sel, err := sharding.Parse(v)
	if err != nil {
		return nil, err
	}
	return &sel, nil
}

// shardSelectorError is the kube-apiserver's answer to a selector it cannot parse: its
// registry returns a plain error, which the handler turns into a 500 with no reason.
func shardSelectorError(err error) *meta.Status {
	msg := strings.TrimPrefix(err.Error(), sharding.ErrInvalid.Error()+": ")
	return apierr.New(http.StatusInternalServerError, "", "invalid shard selector: "+msg)
}
