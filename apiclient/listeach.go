package apiclient

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"

	"github.com/informerkit/informerkit/meta"
)

// listEach is Resource.ListEach for a path and query: protobuf or JSON as the response's
// Content-Type says.
func listEach[T any](ctx context.Context, c *Client, dc decoding, gvr meta.GroupVersionResource, path string, opts ListOptions, fn func(T) error) (meta.ListMeta, error) {
	req := Request{Method: http.MethodGet, Path: path, Query: opts.Query(false), DisableRetries: opts.DisableRetries}
	pk := c.protoKind(gvr, dc.pk)
	if pk != nil {
		req.Accept = acceptProtobuf
	}
	kc := &kindCheck{want: dc.kind}
	lm, err := listEachOnce(ctx, c, dc, pk, req, kc, fn)
	if pk != nil && refusedMedia(err) {
		c.refuseProtobuf(gvr, err)
		req.Accept = ""
		lm, err = listEachOnce(ctx, c, dc, nil, req, kc, fn)
	}
	if err == nil && dc.kind == "" {
		c.learnKind(gvr, kc.got)
	}
	return lm, err
}

func listEachOnce[T any](ctx context.Context, c *Client, dc decoding, pk *protoKind, req Request, kc *kindCheck, fn func(T) error) (meta.ListMeta, error) {
	var lm meta.ListMeta
	var fnErr error
	od := newObjectDecoder(dc)
	defer od.release()
	each := func(item T) error {
		if err := fn(item); err != nil {
			fnErr = err
			return err
		}
		return nil
	}
	err := c.doStream(ctx, req, func(body io.Reader, contentType string) error {
		var err error
		if isProtobuf(contentType) {
			lm, err = decodeProtoListStream(tagReads{body}, c.maxEventSize, od, pk, kc, each)
		} else {
			lm, err = decodeListStreamWith(tagReads{body}, c.maxEventSize, od, kc, each)
		}
		return err
	})
	switch {
	case err == nil:
		return lm, nil
	case fnErr != nil && err == fnErr:
		return lm, err
	}
	if re := (*readError)(nil); errors.As(err, &re) {
		return lm, fmt.Errorf("apiclient: GET %s: reading response: %w", req.Path, re.err)
	}
	return lm, err
}
