package apiclient

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"time"
)

// noRetriesKey is the context key of WithoutRetries.
type noRetriesKey struct{}

// WithoutRetries returns a copy of ctx that makes every request sent with it go out once:
// the client does not retry it on 429, 5xx or connection errors, whatever Config.MaxRetries
// says. The caller gets the first failure at once, with the server's Retry-After in the
// *Status (see RetryAfter), and can apply its own policy.
//
// Use it when the caller has a backoff of its own. The reflector sends its LIST and WATCH
// requests with it: with the client's retries (up to 5 attempts, 250 ms doubling) under the
// reflector's backoff, a failing LIST took about 7 s to reach the reflector, and a 429's
// Retry-After was consumed by the client instead of slowing the reflector down. Watches and
// writes are never retried by the client anyway; the context only matters for GET requests
// (Get, List, ListEach, All, Do).
func WithoutRetries(ctx context.Context) context.Context {
	return context.WithValue(ctx, noRetriesKey{}, true)
}

// RetriesDisabled reports whether ctx (or a context derived from it) was made by
// WithoutRetries.
func RetriesDisabled(ctx context.Context) bool {
	v, _ := ctx.Value(noRetriesKey{}).(bool)
	return v
}

// retries returns how often a failed idempotent request sent with ctx may be retried.
func (c *Client) retries(ctx context.Context) int {
	if RetriesDisabled(ctx) {
		return 0
	}
	return c.maxRetries
}

// doStream runs a GET like do, but hands the body of the 2xx answer to consume as it
// arrives instead of reading it whole. Failures before the body starts (429, 5xx, connection
// errors) are retried like do's; once consume has been called nothing is retried, because
// consume may already have acted on part of the body. The per-request timeout
// (Config.Timeout) covers consume.
func (c *Client) doStream(ctx context.Context, req Request, consume func(body io.Reader) error) error {
	retries := c.retries(ctx)
	for attempt := 0; ; attempt++ {
		if err := c.waitLimiter(ctx); err != nil {
			return err
		}
		started, status, retryAfter, err := c.attemptStream(ctx, req, consume)
		if err == nil || started || ctx.Err() != nil {
			return err
		}
		if attempt >= retries || !retryable(status, err) {
			return err
		}
		delay := retryAfter
		if delay <= 0 {
			delay = backoff(attempt)
		}
		c.logger.Debug("apiclient: retrying request", "method", req.Method, "path", req.Path,
			"status", status, "attempt", attempt+1, "delay", delay)
		if err := sleepCtx(ctx, delay); err != nil {
			return err
		}
	}
}

// attemptStream sends one request and, for a 2xx answer, runs consume on the body
// (started is then true). status is the HTTP status (0 for transport errors).
func (c *Client) attemptStream(ctx context.Context, req Request, consume func(io.Reader) error) (started bool, status int, retryAfter time.Duration, err error) {
	if c.timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, c.timeout)
		defer cancel()
	}
	hreq, err := c.newHTTPRequest(ctx, req)
	if err != nil {
		return false, 0, 0, err
	}
	resp, err := c.http.Do(hreq)
	if err != nil {
		return false, 0, 0, err
	}
	defer resp.Body.Close()
	if resp.StatusCode < 200 || resp.StatusCode >= 300 {
		st := statusFromResponse(resp)
		ra, _ := st.RetryAfter()
		return false, resp.StatusCode, ra, st
	}
	if err := consume(resp.Body); err != nil {
		return true, resp.StatusCode, 0, err
	}
	return true, resp.StatusCode, 0, nil
}

// readError marks an error of the response body's reader, so that ListEach can tell a
// broken connection from a malformed body and from its callback's error.
type readError struct{ err error }

func (e *readError) Error() string { return e.err.Error() }
func (e *readError) Unwrap() error { return e.err }

// tagReads wraps every error but io.EOF that r returns in a *readError.
type tagReads struct{ r io.Reader }

func (t tagReads) Read(p []byte) (int, error) {
	n, err := t.r.Read(p)
	if err != nil && err != io.EOF {
		err = &readError{err}
	}
	return n, err
}

// listEach is Resource.ListEach for a path and query.
func listEach[T any](ctx context.Context, c *Client, path string, opts ListOptions, fn func(T) error) (ListMeta, error) {
	var meta ListMeta
	var fnErr error
	req := Request{Method: http.MethodGet, Path: path, Query: opts.Query(false)}
	err := c.doStream(ctx, req, func(body io.Reader) error {
		var err error
		meta, err = decodeListStream(tagReads{body}, c.maxEventSize, func(item T) error {
			if err := fn(item); err != nil {
				fnErr = err
				return err
			}
			return nil
		})
		return err
	})
	switch {
	case err == nil:
		return meta, nil
	case fnErr != nil && err == fnErr:
		return meta, err
	}
	if re := (*readError)(nil); errors.As(err, &re) {
		return meta, fmt.Errorf("apiclient: GET %s: reading response: %w", path, re.err)
	}
	return meta, err
}
