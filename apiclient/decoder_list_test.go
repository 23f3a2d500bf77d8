package apiclient

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"testing/iotest"
	"testing/synctest"
	"time"

	"github.com/informerkit/informerkit/internal/testobj"
	"github.com/informerkit/informerkit/meta"
)

// collect decodes a list body with decodeListStream and returns the names of its items.
func collect(r io.Reader, max int) ([]string, meta.ListMeta, error) {
	var names []string
	lm, err := decodeListStream(r, max, func(p *testobj.Pod) error {
		names = append(names, p.Namespace+"/"+p.Name+"@"+p.ResourceVersion+" "+p.Spec.NodeName)
		return nil
	})
	return names, lm, err
}

const podA = `{"kind":"Pod","apiVersion":"v1","metadata":{"name":"a","namespace":"ns","resourceVersion":"10","annotations":{"x":"has \"quotes\" and ] [ } { braces \\"}},"spec":{"nodeName":"n1"}}`
const podB = `{"metadata":{"name":"b","namespace":"ns","resourceVersion":"11"},"spec":{"nodeName":"n2"},"status":{"conditions":[{"type":"Ready"}]}}`

func TestDecodeListStreamMetadataBeforeOrAfterItems(t *testing.T) {
	want := []string{"ns/a@10 n1", "ns/b@11 n2"}
	for name, body := range map[string]string{
		"metadata first": `{"kind":"PodList","apiVersion":"v1","metadata":{"resourceVersion":"12","continue":"c1","remainingItemCount":3},"items":[` + podA + `,` + podB + `]}`,
		"metadata last":  `{"items":[` + podA + `, ` + podB + ` ],"apiVersion":"v1","kind":"PodList","metadata":{"resourceVersion":"12","continue":"c1","remainingItemCount":3}}` + "\n",
		"other members":  ` { "kind" : "PodList" , "extra":[1,{"a":[]},"]"], "n": -1.5e3, "t": true, "z": null, "metadata":{"resourceVersion":"12","continue":"c1","remainingItemCount":3}, "items" : [ ` + podA + ` , ` + podB + ` ] } `,
	} {
		for _, chunked := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/oneByteReads=%v", name, chunked), func(t *testing.T) {
				var r io.Reader = strings.NewReader(body)
				if chunked {
					r = iotest.OneByteReader(r)
				}
				names, lm, err := collect(r, 1<<20)
				if err != nil {
					t.Fatal(err)
				}
				if strings.Join(names, ",") != strings.Join(want, ",") {
					t.Fatalf("items %q, want %q", names, want)
				}
				if lm.ResourceVersion != "12" || lm.Continue != "c1" || lm.RemainingItemCount == nil || *lm.RemainingItemCount != 3 {
					t.Fatalf("meta %+v", lm)
				}
			})
		}
	}
}

func TestDecodeListStreamEmptyAndNullItems(t *testing.T) {
	for _, body := range []string{`{}`, `{"items":[]}`, `{"items":null,"metadata":{"resourceVersion":"5"}}`, `{"metadata":{"resourceVersion":"5"},"items":[ ]}`} {
		names, _, err := collect(strings.NewReader(body), 1<<20)
		if err != nil || len(names) != 0 {
			t.Fatalf("%s: %v, %v", body, names, err)
		}
	}
}

// The errors say what is wrong and where, as the watch decoder's do.
func TestDecodeListStreamErrors(t *testing.T) {
	for _, tc := range []struct {
		body   string
		sent   error
		detail string
		items  int // items handed over before the error
	}{
		{``, ErrMalformedList, "ends before the end of the list", 0},
		{`[]`, ErrMalformedList, "not a JSON object", 0},
		{`{"items":[` + podA + `,`, ErrMalformedList, "ends before the end of the list", 1},
		{`{"items":[` + podA + `,{"metadata":{"name":"b"`, ErrMalformedList, "items[1]: the response ends inside it", 1},
		{`{"items":[` + podA + `,7]}`, ErrMalformedList, "items[1] is not an object", 1},
		{`{"items":[null]}`, ErrMalformedList, "items[0] is not an object", 0},
		{`{"items":[{"metadata":{"name":5}}]}`, ErrMalformedList, "items[0]", 0},
		{`{"items":[` + podA + ` ` + podB + `]}`, ErrMalformedList, "expected ',' or ']' after items[0]", 1},
		{`{"items":{}}`, ErrMalformedList, "items is not an array", 0},
		{`{"metadata":{"resourceVersion":12},"items":[]}`, ErrMalformedList, "metadata", 0},
		{`{"items":[]} {}`, ErrMalformedList, "trailing data", 0},
		{`{"items":[] "kind":"x"}`, ErrMalformedList, "expected ',' or '}'", 0},
		{`{items:[]}`, ErrMalformedList, "expected a member name", 0},
		{`{"kind" "PodList"}`, ErrMalformedList, `expected ':' after "kind"`, 0},
		{`{"kind":nope}`, ErrMalformedList, "not a JSON value", 0},
		{`{"items":[` + podA + `,` + strings.Replace(podB, `"b"`, `"`+strings.Repeat("b", 300)+`"`, 1) + `]}`, ErrListItemTooLarge, "items[1]: more than 256 bytes", 1},
	} {
		n := 0
		_, err := decodeListStream(iotest.HalfReader(strings.NewReader(tc.body)), 256, func(*testobj.Pod) error { n++; return nil })
		var de *DecodeError
		if !errors.As(err, &de) || !errors.Is(err, tc.sent) || !strings.Contains(err.Error(), tc.detail) {
			t.Errorf("%.60s: err = %v, want %v mentioning %q", tc.body, err, tc.sent, tc.detail)
			continue
		}
		if n != tc.items {
			t.Errorf("%.60s: %d items handed over before the error, want %d", tc.body, n, tc.items)
		}
		if de.Offset < 0 || de.Offset > int64(len(tc.body)) {
			t.Errorf("%.60s: offset %d outside the body", tc.body, de.Offset)
		}
	}
}

func TestDecodeListStreamErrorOffsetPointsAtTheItem(t *testing.T) {
	body := `{"items":[` + podA + `,{"metadata":{"name":5}}]}`
	_, err := decodeListStream(strings.NewReader(body), 1<<20, func(*testobj.Pod) error { return nil })
	var de *DecodeError
	if !errors.As(err, &de) || de.Offset != int64(strings.Index(body, `{"metadata":{"name":5`)) {
		t.Fatalf("err = %#v", err)
	}
	var typeErr *json.UnmarshalTypeError
	if !errors.As(err, &typeErr) {
		t.Fatalf("the JSON decoder's error is not the cause: %v", err)
	}
}

func TestDecodeListStreamStopsAtTheCallbacksError(t *testing.T) {
	stop := errors.New("enough")
	n := 0
	body := `{"items":[` + podA + `,` + podB + `],"metadata":{"resourceVersion":"1"}}`
	_, err := decodeListStream(strings.NewReader(body), 1<<20, func(*testobj.Pod) error { n++; return stop })
	if err != stop || n != 1 {
		t.Fatalf("err = %v after %d items, want the callback's error as is after 1", err, n)
	}
}

// failingBody serves what r has, then fails with err.
type failingBody struct {
	r   io.Reader
	err error
}

func (b *failingBody) Read(p []byte) (int, error) {
	n, err := b.r.Read(p)
	if err == io.EOF {
		return n, b.err
	}
	return n, err
}

func (b *failingBody) Close() error { return nil }

// ListEach retries a request refused before the body starts, like List, but never one whose
// body it has started to hand out; ListOptions.DisableRetries turns retries off for one call.
func TestListEachRetries(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var calls atomic.Int32
		var cut atomic.Bool
		cfg := &Config{Host: "http://api", QPS: -1, WrapTransport: func(http.RoundTripper) http.RoundTripper {
			return roundTripFunc(func(r *http.Request) (*http.Response, error) {
				n := calls.Add(1)
				h := http.Header{"Content-Type": {"application/json"}}
				if n == 1 {
					h.Set("Retry-After", "3")
					return &http.Response{StatusCode: 503, Header: h, Body: io.NopCloser(strings.NewReader(`{"kind":"Status","code":503,"reason":"ServiceUnavailable"}`)), Request: r}, nil
				}
				body := `{"metadata":{"resourceVersion":"7"},"items":[` + podA + `,` + podB + `]}`
				if cut.Load() {
					return &http.Response{StatusCode: 200, Header: h, Body: &failingBody{strings.NewReader(body[:strings.Index(body, podB)+10]), syscall.ECONNRESET}, Request: r}, nil
				}
				return &http.Response{StatusCode: 200, Header: h, Body: io.NopCloser(strings.NewReader(body)), Request: r}, nil
			})
		}}
		c, err := New(cfg)
		if err != nil {
			t.Fatal(err)
		}
		pods := NewResource[*testobj.Pod](c, testobj.PodGVR)
		start := time.Now()
		n := 0
		lm, err := pods.ListEach(context.Background(), ListOptions{}, func(*testobj.Pod) error { n++; return nil })
		if err != nil || n != 2 || lm.ResourceVersion != "7" || calls.Load() != 2 {
			t.Fatalf("ListEach = %+v, %v with %d items after %d calls", lm, err, n, calls.Load())
		}
		if d := time.Since(start); d != 3*time.Second {
			t.Fatalf("retried after %v, want the Retry-After of 3s", d)
		}

		calls.Store(0)
		_, err = pods.ListEach(context.Background(), ListOptions{DisableRetries: true}, func(*testobj.Pod) error { return nil })
		if !meta.IsServiceUnavailable(err) || calls.Load() != 1 {
			t.Fatalf("DisableRetries: %v after %d calls, want the 503 at once", err, calls.Load())
		}
		if d, ok := meta.RetryAfter(err); !ok || d != 3*time.Second {
			t.Fatalf("RetryAfter = %v, %v", d, ok)
		}
		calls.Store(0)
		if _, err := pods.List(context.Background(), ListOptions{DisableRetries: true}); !meta.IsServiceUnavailable(err) || calls.Load() != 1 {
			t.Fatalf("List DisableRetries: %v after %d calls", err, calls.Load())
		}

		// A body cut half-way is not retried: the items before the cut were handed out.
		calls.Store(1)
		cut.Store(true)
		n = 0
		_, err = pods.ListEach(context.Background(), ListOptions{}, func(*testobj.Pod) error { n++; return nil })
		if !errors.Is(err, syscall.ECONNRESET) || !strings.Contains(err.Error(), "reading response") || calls.Load() != 2 || n != 1 {
			t.Fatalf("cut body: %v after %d calls and %d items", err, calls.Load(), n)
		}
	})
}

// FuzzDecodeListStream: the decoder never panics, gives the same result however the body is
// split into reads, and agrees with encoding/json (what List uses) on bodies both accept.
func FuzzDecodeListStream(f *testing.F) {
	f.Add([]byte(`{"kind":"PodList","metadata":{"resourceVersion":"12"},"items":[`+podA+`,`+podB+`]}`), 3)
	f.Add([]byte(`{"items":[`+podA+`],"metadata":{"continue":"x"}}`), 1)
	f.Add([]byte(`{"a":[1,"]",{"b":null}],"items":null}`), 2)
	f.Add([]byte(`{"items":[{"metadata":{"name":"\u0041\\"}}]}`), 5)
	f.Fuzz(func(t *testing.T, data []byte, chunk int) {
		run := func(r io.Reader) (string, []byte) {
			var items [][]byte
			lm, err := decodeListStream(r, 1<<16, func(p *testobj.Pod) error {
				b, _ := json.Marshal(p)
				items = append(items, b)
				return nil
			})
			out, _ := json.Marshal(struct {
				Meta  meta.ListMeta
				Items [][]byte
			}{lm, items})
			if err != nil {
				return err.Error(), out
			}
			return "", out
		}
		errA, a := run(bytes.NewReader(data))
		errB, b := run(iotest.HalfReader(bytes.NewReader(data)))
		if errA != errB || !bytes.Equal(a, b) {
			t.Fatalf("whole read: %q %s\nhalf reads: %q %s", errA, a, errB, b)
		}
		var l meta.List[*testobj.Pod]
		if json.Unmarshal(data, &l) != nil || errA != "" {
			return
		}
		// Both accept the body. They differ only where encoding/json merges repeated
		// members (items twice: it keeps the last array; ListEach hands out both).
		var items [][]byte
		for _, p := range l.Items {
			if p == nil {
				t.Fatalf("encoding/json accepted a null item that ListEach accepted too")
			}
			x, _ := json.Marshal(p)
			items = append(items, x)
		}
		want, _ := json.Marshal(struct {
			Meta  meta.ListMeta
			Items [][]byte
		}{l.ListMeta, items})
		if !bytes.Equal(a, want) && strings.Count(strings.ToLower(string(data)), `"items"`) < 2 {
			t.Fatalf("ListEach %s\nencoding/json %s", a, want)
		}
	})
}
