package apiclient

import (
	"bytes"
	"errors"
	"io"
	"reflect"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/informerkit/informerkit/internal/testobj"
	"github.com/informerkit/informerkit/meta"
)

// readAll decodes every frame of stream with a frameReader and decodeEvent, as the watch
// goroutine does, stopping at the first error.
func readAll(t *testing.T, r io.Reader, max int, kind string) ([]Event[*testobj.Pod], error) {
	t.Helper()
	fr := newFrameReader(r, max)
	var out []Event[*testobj.Pod]
	for {
		frame, err := fr.next()
		if err != nil {
			return out, err
		}
		ev, err := decodeEvent[*testobj.Pod](testDecoder(), frame, kind, fr.offset(len(frame)))
		if err != nil {
			return out, err
		}
		out = append(out, ev)
		if ev.Type == Error {
			return out, nil
		}
	}
}

const goodStream = `{"type":"ADDED","object":{"kind":"Pod","apiVersion":"v1","metadata":{"name":"a","namespace":"ns","resourceVersion":"10","annotations":{"x":"has \"quotes\" and } { braces \\"}},"spec":{"nodeName":"n1"}}}
{"type":"MODIFIED","object":{"kind":"Pod","apiVersion":"v1","metadata":{"name":"a","namespace":"ns","resourceVersion":"11"},"spec":{"nodeName":"n2"}}}

  {"object":{"kind":"Pod","apiVersion":"v1","metadata":{"resourceVersion":"12","annotations":{"k8s.io/initial-events-end":"true"}}},"type":"BOOKMARK"}{"type":"DELETED","object":{"kind":"Pod","apiVersion":"v1","metadata":{"name":"a","namespace":"ns","resourceVersion":"13"}}}
`

func TestDecodeGoodStream(t *testing.T) {
	for name, r := range map[string]io.Reader{
		"whole":   strings.NewReader(goodStream),
		"onebyte": iotest.OneByteReader(strings.NewReader(goodStream)),
		"half":    iotest.HalfReader(strings.NewReader(goodStream)),
	} {
		t.Run(name, func(t *testing.T) {
			evs, err := readAll(t, r, 1<<20, "Pod")
			if err != io.EOF {
				t.Fatalf("err = %v, want io.EOF", err)
			}
			want := []struct {
				typ EventType
				rv  string
			}{{Added, "10"}, {Modified, "11"}, {Bookmark, "12"}, {Deleted, "13"}}
			if len(evs) != len(want) {
				t.Fatalf("got %d events, want %d", len(evs), len(want))
			}
			for i, w := range want {
				if evs[i].Type != w.typ || evs[i].Object.ResourceVersion != w.rv {
					t.Errorf("event %d = %s rv %s, want %s rv %s", i, evs[i].Type, evs[i].Object.ResourceVersion, w.typ, w.rv)
				}
			}
			if got := evs[0].Object.Annotations["x"]; got != `has "quotes" and } { braces \` {
				t.Errorf("annotation = %q", got)
			}
			if evs[1].Object.Spec.NodeName != "n2" {
				t.Errorf("nodeName = %q", evs[1].Object.Spec.NodeName)
			}
			if evs[2].Object.Annotations[InitialEventsEndAnnotation] != "true" {
				t.Errorf("bookmark annotations = %v", evs[2].Object.Annotations)
			}
		})
	}
}

func TestDecodeErrors(t *testing.T) {
	cases := []struct {
		name   string
		stream string
		want   error // sentinel, or nil for a non-DecodeError
		ok     int   // events decoded before the error
		other  error
	}{
		{"garbage before object", `xyz{"type":"ADDED","object":{}}`, ErrMalformedEvent, 0, nil},
		{"top-level array", `[{"type":"ADDED"}]`, ErrMalformedEvent, 0, nil},
		{"not json inside", `{"type":"ADDED","object":{"metadata":{"name":}}}`, ErrMalformedEvent, 0, nil},
		{"missing type", `{"object":{"metadata":{}}}`, ErrMalformedEvent, 0, nil},
		{"type not string", `{"type":1,"object":{}}`, ErrMalformedEvent, 0, nil},
		{"missing object", `{"type":"ADDED"}`, ErrMalformedEvent, 0, nil},
		{"null object", `{"type":"MODIFIED","object":null}`, ErrMalformedEvent, 0, nil},
		{"object not an object", `{"type":"ADDED","object":"str"}`, ErrMalformedEvent, 0, nil},
		{"wrong field type", `{"type":"ADDED","object":{"metadata":{"name":5}}}`, ErrMalformedEvent, 0, nil},
		{"bad separator", `{"type":"ADDED" "object":{}}`, ErrMalformedEvent, 0, nil},
		{"bad literal", `{"type":"ADDED","x":nope,"object":{}}`, ErrMalformedEvent, 0, nil},
		{"unknown type", `{"type":"ADDED","object":{"kind":"Pod"}}{"type":"EXPLODED","object":{}}`, ErrUnknownEventType, 1, nil},
		{"wrong kind", `{"type":"ADDED","object":{"kind":"Secret","metadata":{}}}`, ErrWrongKind, 0, nil},
		{"error without object", `{"type":"ERROR"}`, ErrMalformedEvent, 0, nil},
		{"error object not status", `{"type":"ERROR","object":{"code":"x"}}`, ErrMalformedEvent, 0, nil},
		{"truncated", `{"type":"ADDED","object":{"kind":"Pod","metadata":{"name":"a"`, nil, 0, io.ErrUnexpectedEOF},
		{"truncated in string", `{"type":"ADDED","object":{"kind":"Pod\"`, nil, 0, io.ErrUnexpectedEOF},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			evs, err := readAll(t, iotest.HalfReader(strings.NewReader(c.stream)), 1<<20, "Pod")
			if len(evs) != c.ok {
				t.Fatalf("decoded %d events before the error, want %d (err %v)", len(evs), c.ok, err)
			}
			if c.want == nil {
				if !errors.Is(err, c.other) {
					t.Fatalf("err = %v, want %v", err, c.other)
				}
				return
			}
			var de *DecodeError
			if !errors.As(err, &de) || !errors.Is(err, c.want) {
				t.Fatalf("err = %v, want a *DecodeError wrapping %v", err, c.want)
			}
			if de.Error() == "" || !strings.Contains(de.Error(), c.want.Error()) {
				t.Fatalf("message %q does not say %q", de.Error(), c.want)
			}
		})
	}
}

func TestDecodeEventTooLarge(t *testing.T) {
	big := `{"type":"ADDED","object":{"kind":"Pod","metadata":{"name":"` + strings.Repeat("x", 5000) + `"}}}`
	small := `{"type":"ADDED","object":{"kind":"Pod","metadata":{"name":"ok"}}}`
	// An endless stream: the decoder must give up after the limit, not read everything.
	endless := io.MultiReader(strings.NewReader(small+big[:100]), neverEnding('x'))
	evs, err := readAll(t, endless, 4096, "")
	if !errors.Is(err, ErrEventTooLarge) {
		t.Fatalf("err = %v, want ErrEventTooLarge", err)
	}
	if len(evs) != 1 || evs[0].Object.Name != "ok" {
		t.Fatalf("events before the large one = %+v", evs)
	}
	var de *DecodeError
	if errors.As(err, &de); de.Offset != int64(len(small)) {
		t.Errorf("offset = %d, want %d", de.Offset, len(small))
	}
	// Exactly at the limit is fine.
	evs, err = readAll(t, strings.NewReader(big), len(big), "")
	if err != io.EOF || len(evs) != 1 {
		t.Fatalf("event of exactly the limit: %d events, err %v", len(evs), err)
	}
}

type neverEnding byte

func (b neverEnding) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = byte(b)
	}
	return len(p), nil
}

func TestDecodeErrorEventStatus(t *testing.T) {
	stream := `{"type":"ERROR","object":{"kind":"Status","apiVersion":"v1","status":"Failure","message":"too old resource version: 1 (5)","reason":"Expired","code":410}}`
	evs, err := readAll(t, strings.NewReader(stream), 1<<20, "Pod")
	if err != nil || len(evs) != 1 {
		t.Fatalf("events %v err %v", evs, err)
	}
	ev := evs[0]
	if ev.Type != Error || ev.Object != nil {
		t.Fatalf("event = %+v", ev)
	}
	if !meta.IsResourceExpired(ev.Err) {
		t.Fatalf("err %v: IsResourceExpired=%v", ev.Err, meta.IsResourceExpired(ev.Err))
	}
	st, _ := meta.AsStatus(ev.Err)
	if st.Code != 410 || !strings.Contains(st.Message, "too old") {
		t.Errorf("status = %+v", st)
	}
}

func TestDecodeEventExported(t *testing.T) {
	ev, err := decodeEvent[*meta.Unstructured](testDecoder(), []byte(`{"type":"ADDED","object":{"kind":"Widget","apiVersion":"x.io/v1","metadata":{"name":"w"},"spec":{"n":3}}}`), "Widget", 0)
	if err != nil {
		t.Fatal(err)
	}
	if n, _, _ := meta.NestedInt64(ev.Object.Object, "spec", "n"); n != 3 || ev.Object.GetName() != "w" {
		t.Fatalf("object = %v", ev.Object.Object)
	}
}

func FuzzFrameReader(f *testing.F) {
	f.Add([]byte(goodStream), 64)
	f.Add([]byte(`{"a":"\\\"}"}`), 3)
	f.Add([]byte(`{"type":"ADDED","object":{}`), 1)
	f.Fuzz(func(t *testing.T, data []byte, chunk int) {
		if chunk <= 0 || chunk > 1<<16 {
			chunk = 1
		}
		// Reading in chunks must give the same frames as reading at once.
		a := frames(newFrameReader(bytes.NewReader(data), 1<<20))
		b := frames(newFrameReader(iotest.HalfReader(bytes.NewReader(data)), 1<<20))
		if len(a) != len(b) {
			t.Fatalf("frame counts differ: %d vs %d", len(a), len(b))
		}
		for i := range a {
			if a[i] != b[i] {
				t.Fatalf("frame %d differs", i)
			}
			compareEventDecoders(t, []byte(a[i]), "Pod")
		}
	})
}

func frames(fr *frameReader) []string {
	var out []string
	for {
		f, err := fr.next()
		if err != nil {
			return out
		}
		out = append(out, string(f))
	}
}

// testDecoder is the default (compiled) decoder.
func testDecoder() *objectDecoder { return newObjectDecoder(decoding{}) }

// compareEventDecoders decodes frame with both decoders and fails unless both fail or both
// give the same event.
func compareEventDecoders(t *testing.T, frame []byte, kind string) {
	t.Helper()
	a, errA := decodeEvent[*testobj.Pod](newObjectDecoder(decoding{}), frame, kind, 0)
	b, errB := decodeEvent[*testobj.Pod](newObjectDecoder(decoding{decoder: JSONStandard}), frame, kind, 0)
	if (errA == nil) != (errB == nil) {
		t.Fatalf("%q: compiled decoder error %v, encoding/json error %v", frame, errA, errB)
	}
	if errA == nil && !reflect.DeepEqual(a, b) {
		t.Fatalf("%q: compiled decoder %+v, encoding/json %+v", frame, a, b)
	}
}

func TestEventDecodersAgree(t *testing.T) {
	frames := []string{
		`{"type":"ADDED","object":{"kind":"Pod","metadata":{"name":"a","labels":{"x":"y"}},"spec":{"nodeName":"n"}}}`,
		`{"object":{"kind":"Pod","metadata":{"name":"late type"}},"type":"MODIFIED"}`,
		`{"type":"DELETED","object":{"kind":"Node","metadata":{"name":"wrong kind"}}}`,
		`{"type":"ERROR","object":{"kind":"Status","code":410,"reason":"Expired","message":"too old"}}`,
		`{"type":"ERROR","object":{}}`, `{"type":"ERROR"}`, `{"type":"ERROR","object":null}`,
		`{"type":"ADDED","object":null}`, `{"type":"ADDED"}`, `{"type":"ADDED","object":[]}`, `{"type":"ADDED","object":"x"}`,
		`{"type":"WHAT","object":{}}`, `{"object":{}}`, `{}`, `[]`, `{"type":1,"object":{}}`,
		`{"type":"ADDED","object":{"metadata":{"name":1}}}`, `{"type":"ADDED","object":{"metadata":{"name":"a"}}} x`,
		`{"type":"ADDED","object":{"metadata":{"name":"a"}},"extra":[1,2,{"z":null}]}`,
		`{"type":"ADDED","object":{"metadata":{"name":"a"}},"extra":[1 2]}`,
		`{"type":"ADDED","object":{"metadata":{"name":"a",}}}`,
		`{"type":"BOOKMARK","object":{"kind":"Pod","metadata":{"resourceVersion":"12","annotations":{"k8s.io/initial-events-end":"true"}}}}`,
		`{"type":"ADDED","object":{"metadata":{"name":"first"}},"object":{"metadata":{"name":"second"}}}`,
		`{"type":"ADDED","type":"MODIFIED","object":{"metadata":{"name":"a"}}}`,
		` {"type" : "ADDED" , "object" : { "metadata" : { "name" : "spaces" } } } `,
	}
	for _, f := range frames {
		compareEventDecoders(t, []byte(f), "Pod")
	}
}
