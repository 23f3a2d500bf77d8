package apiclient

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"time"
)

// do runs a non-watch request and returns the whole body of a 2xx response.
func (c *Client) do(ctx context.Context, req Request) ([]byte, error) {
	resp, err := c.doRead(ctx, req)
	return resp.body, err
}

// response is the body of a 2xx answer and its Content-Type.
type response struct {
	body        []byte
	contentType string
}

// doRead runs a non-watch request and returns the whole body of a 2xx response with its
// Content-Type.
func (c *Client) doRead(ctx context.Context, req Request) (response, error) {
	var resp response
	err := c.doStream(ctx, req, func(r io.Reader, contentType string) error {
		var readErr error
		if resp.body, readErr = io.ReadAll(r); readErr != nil {
			err := fmt.Errorf("apiclient: %s %s: reading response: %w", req.Method, req.Path, readErr)
			if de := (*DecodeError)(nil); errors.As(readErr, &de) {
				return err // a body that is not what it says (gzip): sending again would not help
			}
			return &bodyError{err}
		}
		resp.contentType = contentType
		return nil
	})
	if err != nil {
		return response{}, err
	}
	return resp, nil
}

// bodyError marks a 2xx body that could not be read whole, which do retries (for an
// idempotent request) like a transport error: nothing has acted on the partial body.
type bodyError struct{ err error }

func (e *bodyError) Error() string { return e.err.Error() }
func (e *bodyError) Unwrap() error { return e.err }

// doStream is the one request loop of the client: it waits for the client-side rate
// limiter, sends req with the per-request timeout (Config.Timeout, which covers consume) and
// hands the body of a 2xx answer to consume as it arrives. Idempotent requests (GET, HEAD)
// that fail with 429, 5xx or a connection error are sent again up to Config.MaxRetries
// times (none with req.DisableRetries), after the server's Retry-After or an exponential
// back-off. Once consume has been called nothing is retried, because it may already have
// acted on part of the body, except when consume fails with a *bodyError (do's whole-body
// read, which acted on nothing).
func (c *Client) doStream(ctx context.Context, req Request, consume func(body io.Reader, contentType string) error) error {
	retries := c.maxRetries
	if req.DisableRetries || (req.Method != http.MethodGet && req.Method != http.MethodHead) {
		retries = 0
	}
	for attempt := 0; ; attempt++ {
		if err := c.waitLimiter(ctx); err != nil {
			return err
		}
		started, status, retryAfter, err := c.attemptStream(ctx, req, consume)
		if err == nil || ctx.Err() != nil {
			return err
		}
		if be := (*bodyError)(nil); errors.As(err, &be) {
			err, started, status = be.err, false, 0 // a body cut short: judged as a transport error
		}
		if started || attempt >= retries || !retryable(status, err) {
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
// (started is then true). status is the HTTP status (0 for transport errors). The answer
// must come within the client's response header deadline, and the body must not go silent
// for longer than its idle deadline (*TimeoutError).
func (c *Client) attemptStream(ctx context.Context, req Request, consume func(io.Reader, string) error) (started bool, status int, retryAfter time.Duration, err error) {
	if c.timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, c.timeout)
		defer cancel()
	}
	a := c.startAttempt(ctx, "response headers", req.Method, req.Path, c.timeouts.header)
	defer a.finish()
	hreq, err := c.newHTTPRequest(a.ctx, req)
	if err != nil {
		return false, 0, 0, err
	}
	resp, err := c.http.Do(hreq)
	if err != nil {
		return false, 0, 0, a.err(err)
	}
	a.answered()
	defer resp.Body.Close()
	a.bodyIdle = c.timeouts.bodyIdle
	resp.Body = readCloser{a.body(resp.Body), resp.Body}
	if resp.StatusCode < 200 || resp.StatusCode >= 300 {
		st := statusFromResponse(resp)
		ra, _ := st.RetryAfter()
		return false, resp.StatusCode, ra, st
	}
	if err := consume(decodedBody(resp.Header, resp.Body), resp.Header.Get("Content-Type")); err != nil {
		return true, resp.StatusCode, 0, err
	}
	return true, resp.StatusCode, 0, nil
}

// readCloser reads from one reader and closes another.
type readCloser struct {
	io.Reader
	io.Closer
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
