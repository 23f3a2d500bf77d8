package cluster

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
)

// compactRevKey is the etcd key (outside kube-apiserver's /registry prefix) where
// kube-apiserver's own compactor records the last compacted revision; the apiserver
// watches it to learn about compactions done by another apiserver.
const compactRevKey = "compact_rev_key"

// etcdCall POSTs a JSON request to etcd's gRPC gateway and decodes the JSON answer into out.
func (c *Cluster) etcdCall(ctx context.Context, path string, in, out any) error {
	body, err := json.Marshal(in)
	if err != nil {
		return err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.EtcdEndpoint+path, bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := c.etcdClient.Do(req)
	if err != nil {
		return fmt.Errorf("etcd %s: %w", path, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return fmt.Errorf("etcd %s: %w", path, err)
	}
	if resp.StatusCode != http.StatusOK {
		var e struct {
			Message string `json:"message"`
		}
		if json.Unmarshal(data, &e) == nil && e.Message != "" {
			return fmt.Errorf("etcd %s: %s: %s", path, resp.Status, e.Message)
		}
		return fmt.Errorf("etcd %s: %s: %s", path, resp.Status, bytes.TrimSpace(data))
	}
	if out == nil {
		return nil
	}
	if err := json.Unmarshal(data, out); err != nil {
		return fmt.Errorf("etcd %s: decode %q: %w", path, data, err)
	}
	return nil
}

// int64String decodes the gateway's int64 fields, which protojson writes as strings.
type int64String int64

func (n *int64String) UnmarshalJSON(b []byte) error {
	s := string(bytes.Trim(b, `"`))
	v, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return err
	}
	*n = int64String(v)
	return nil
}

type etcdHeader struct {
	Header struct {
		Revision int64String `json:"revision"`
	} `json:"header"`
}

// EtcdRevision returns etcd's current revision: the resourceVersion of the newest write to
// any resource of the cluster.
func (c *Cluster) EtcdRevision(ctx context.Context) (int64, error) {
	var out etcdHeader
	in := map[string]any{"key": base64.StdEncoding.EncodeToString([]byte(compactRevKey))}
	if err := c.etcdCall(ctx, "/v3/kv/range", in, &out); err != nil {
		return 0, err
	}
	return int64(out.Header.Revision), nil
}

// etcdPut writes key=value and returns the revision of the write.
func (c *Cluster) etcdPut(ctx context.Context, key, value string) (int64, error) {
	var out etcdHeader
	in := map[string]any{
		"key":   base64.StdEncoding.EncodeToString([]byte(key)),
		"value": base64.StdEncoding.EncodeToString([]byte(value)),
	}
	if err := c.etcdCall(ctx, "/v3/kv/put", in, &out); err != nil {
		return 0, err
	}
	return int64(out.Header.Revision), nil
}

// Compact compacts etcd at the current revision and returns it. Afterwards a watch or an
// exact list served from etcd (see UncachedResource) at any resourceVersion below rev-1
// gets 410 Expired; a watch from rev-1 or later still works.
//
// The compaction revision is that of a write to compact_rev_key, never one of an object.
// (Had an object been modified exactly at the compaction revision, a watch from the
// revision before would start at that modification, whose previous state is compacted,
// and kube-apiserver answers 500 InternalError "etcd event received with PrevKv=nil".)
//
// Compact is safe for concurrent use (parallel tests of one cluster).
func (c *Cluster) Compact(ctx context.Context) (rev int64, err error) {
	c.compactMu.Lock()
	defer c.compactMu.Unlock()
	current, err := c.EtcdRevision(ctx)
	if err != nil {
		return 0, err
	}
	if rev, err = c.etcdPut(ctx, compactRevKey, strconv.FormatInt(current, 10)); err != nil {
		return 0, err
	}
	return rev, c.CompactAt(ctx, rev)
}

// CompactAt compacts etcd at revision rev, physically, so that it has happened when
// CompactAt returns. Like kube-apiserver's own compactor, it first records rev under
// compact_rev_key, from which kube-apiserver learns the compacted revision and prunes the
// list snapshots of its watch cache (within about 15 seconds). Compacting at a revision that
// is already compacted, or in the future, is an error. Prefer Compact; see there why a
// compaction at an object's modification revision gives a 500 instead of a 410.
func (c *Cluster) CompactAt(ctx context.Context, rev int64) error {
	if _, err := c.etcdPut(ctx, compactRevKey, strconv.FormatInt(rev, 10)); err != nil {
		return err
	}
	compact := map[string]any{"revision": strconv.FormatInt(rev, 10), "physical": true}
	return c.etcdCall(ctx, "/v3/kv/compaction", compact, nil)
}
