package apiclient

import (
	"bytes"
	"compress/gzip"
	"errors"
	"io"
	"net/http"
	"os"
	"runtime"
	"testing"

	"github.com/informerkit/informerkit/internal/testobj"
)

// gzipMember compresses payload as one gzip member. flushFirst writes it as kube-apiserver's
// per-flush writer does (a sync flush, then the member's end: the data sits in a non-final
// deflate block); without it the data is in the final block, as a plain Close writes it.
func gzipMember(t testing.TB, payload []byte, flushFirst bool) []byte {
	t.Helper()
	var b bytes.Buffer
	zw, err := gzip.NewWriterLevel(&b, gzip.BestSpeed)
	if err != nil {
		t.Fatal(err)
	}
	zw.Write(payload)
	if flushFirst {
		zw.Flush()
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// stagedBody serves gzip members as a server that flushes them one at a time and then waits
// for its next events: it gives out the bytes of member k only once the reader has returned
// the payloads of every member before it (got), and records a failure otherwise.
type stagedBody struct {
	members [][]byte
	ends    []int // ends[k]: the payload bytes of members 0..k
	got     *bytes.Buffer
	k, off  int
	early   error
}

func (s *stagedBody) Read(p []byte) (int, error) {
	for s.k < len(s.members) && s.off == len(s.members[s.k]) {
		s.k++
		s.off = 0
	}
	if s.k == len(s.members) {
		return 0, io.EOF
	}
	if s.off == 0 && s.k > 0 && s.got.Len() < s.ends[s.k-1] && s.early == nil {
		s.early = errors.New("the reader asked for the next member before returning the previous one's bytes")
	}
	n := copy(p, s.members[s.k][s.off:]) // never past the member: the rest is not sent yet
	s.off += n
	return n, nil
}

// readGzip reads r in small reads into got, as a decoder does.
func readGzip(r io.Reader, got *bytes.Buffer) error {
	buf := make([]byte, 512)
	for {
		n, err := r.Read(buf)
		got.Write(buf[:n])
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
	}
}

func TestGzipStreamHandsEachMemberOverBeforeTheNextArrives(t *testing.T) {
	for _, flushFirst := range []bool{true, false} {
		payloads := [][]byte{
			[]byte(`{"type":"ADDED","object":{"metadata":{"name":"a"}}}` + "\n"),
			bytes.Repeat([]byte(`{"type":"ADDED","object":{"metadata":{"name":"b"}}}`+"\n"), 3000),
			{},
			[]byte(`{"type":"BOOKMARK","object":{"metadata":{"resourceVersion":"9"}}}` + "\n"),
		}
		var got bytes.Buffer
		s := &stagedBody{got: &got}
		var want []byte
		for _, p := range payloads {
			s.members = append(s.members, gzipMember(t, p, flushFirst))
			want = append(want, p...)
			s.ends = append(s.ends, len(want))
		}
		if err := readGzip(newGzipStream(s, GzipRatioLimit), &got); err != nil {
			t.Fatalf("flushFirst=%v: %v", flushFirst, err)
		}
		if s.early != nil {
			t.Errorf("flushFirst=%v: %v", flushFirst, s.early)
		}
		if !bytes.Equal(got.Bytes(), want) {
			t.Errorf("flushFirst=%v: read %d bytes, want %d", flushFirst, got.Len(), len(want))
		}
	}
}

// brokenBody returns data, then err.
type brokenBody struct {
	data []byte
	err  error
}

func (f *brokenBody) Read(p []byte) (int, error) {
	if len(f.data) == 0 {
		return 0, f.err
	}
	n := copy(p, f.data)
	f.data = f.data[n:]
	return n, nil
}

func TestGzipStreamErrors(t *testing.T) {
	payload := bytes.Repeat([]byte(`{"kind":"ConfigMap"}`), 100)
	member := gzipMember(t, payload, true)
	badCRC := bytes.Clone(member)
	badCRC[len(badCRC)-8] ^= 0xff
	cut := errors.New("connection reset by peer")
	for _, tc := range []struct {
		name    string
		body    io.Reader
		want    error // nil: a clean end
		wantOut []byte
	}{
		{"empty body", bytes.NewReader(nil), nil, nil},
		{"two members", bytes.NewReader(append(bytes.Clone(member), member...)), nil, append(bytes.Clone(payload), payload...)},
		{"not gzip", bytes.NewReader([]byte(`{"kind":"PodList"}`)), ErrMalformedGzip, nil},
		{"bad checksum", bytes.NewReader(badCRC), ErrMalformedGzip, payload},
		{"garbage after a member", bytes.NewReader(append(bytes.Clone(member), "<html><body>a proxy error</body></html>"...)), ErrMalformedGzip, payload},
		{"cut inside a member", bytes.NewReader(member[:len(member)/2]), io.ErrUnexpectedEOF, nil},
		{"cut inside a header", bytes.NewReader(append(bytes.Clone(member), member[:5]...)), io.ErrUnexpectedEOF, payload},
		{"transport error", &brokenBody{data: member[:len(member)/2], err: cut}, cut, nil},
	} {
		var got bytes.Buffer
		err := readGzip(newGzipStream(tc.body, GzipRatioLimit), &got)
		if tc.want == nil && err != nil || tc.want != nil && !errors.Is(err, tc.want) {
			t.Errorf("%s: error %v, want %v", tc.name, err, tc.want)
		}
		var de *DecodeError
		if isDecode := errors.As(err, &de); isDecode != (tc.want == ErrMalformedGzip) {
			t.Errorf("%s: error %v: a *DecodeError = %v, want %v", tc.name, err, isDecode, !isDecode)
		}
		if tc.wantOut != nil && !bytes.Equal(got.Bytes(), tc.wantOut) {
			t.Errorf("%s: read %d bytes before the error, want %d", tc.name, got.Len(), len(tc.wantOut))
		}
	}
}

func TestGzipBombIsRefusedWithinFixedMemory(t *testing.T) {
	// 32 MiB of zeros compress to about 32 KiB: ratio about 1,000.
	var b bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&b, gzip.BestCompression)
	zero := make([]byte, 1<<20)
	for range 32 {
		zw.Write(zero)
	}
	zw.Close()
	bomb := b.Bytes()

	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	n, err := io.Copy(io.Discard, newGzipStream(bytes.NewReader(bomb), GzipRatioLimit))
	runtime.ReadMemStats(&after)
	var de *DecodeError
	if !errors.Is(err, ErrGzipBomb) || !errors.As(err, &de) {
		t.Fatalf("read %d bytes of %d compressed, error %v: want a *DecodeError wrapping ErrGzipBomb", n, len(bomb), err)
	}
	if limit := max(gzipSlack, int64(GzipRatioLimit)*de.Offset) + 32<<10; n > limit {
		t.Errorf("read %d bytes of %d compressed before the refusal, more than the limit allows (%d)", n, de.Offset, limit)
	}
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 4<<20 {
		t.Errorf("reading the bomb allocated %d bytes, want a fixed amount (< 4 MiB)", alloc)
	}
	t.Logf("%d compressed bytes: refused after %d of them, %d bytes out, %d bytes allocated: %v", len(bomb), de.Offset, n, after.TotalAlloc-before.TotalAlloc, err)
}

func TestGzipOfRealListsIsFarBelowTheRatioLimit(t *testing.T) {
	for _, f := range []string{"../testdata/watch/apiclient/pods-list-500.json", "../internal/jsondec/testdata/real/podlist.pb"} {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		// Twice, the list is one long stream of pods in one member.
		payload := bytes.Repeat(data, 2)
		z := gzipMember(t, payload, true)
		var got bytes.Buffer
		if err := readGzip(newGzipStream(bytes.NewReader(z), GzipRatioLimit), &got); err != nil {
			t.Errorf("%s ×2 (ratio %.1f): %v", f, float64(len(payload))/float64(len(z)), err)
		} else if !bytes.Equal(got.Bytes(), payload) {
			t.Errorf("%s: content differs", f)
		}
	}
}

// FuzzGzipStream holds gzipStream to gzip.Reader in its multistream mode over the same
// bytes: the same content, and an error exactly when the reference has one, of the matching
// kind. Structured inputs (raw false) are members of data's segments (cuts gives their
// lengths), served member by member: gzipStream must hand each member's content over before
// it asks for the next member's bytes.
func FuzzGzipStream(f *testing.F) {
	f.Add([]byte(`{"type":"ADDED"}`+"\n"+`{"type":"BOOKMARK"}`+"\n"), []byte{17, 0, 3}, false, uint8(0))
	f.Add([]byte("\x1f\x8b\x08\x00\x00\x00\x00\x00\x00\xff"), []byte{}, true, uint8(1))
	f.Fuzz(func(t *testing.T, data, cuts []byte, raw bool, layout uint8) {
		if len(data) > 64<<10 || len(cuts) > 64 {
			return // each member costs a gzip.Writer: keep the executions fast
		}
		input := data
		var s *stagedBody
		var got bytes.Buffer
		if !raw {
			s = &stagedBody{got: &got}
			rest := data
			for i := 0; len(rest) > 0 || i == 0; i++ {
				n := len(rest)
				if i < len(cuts) {
					n = min(int(cuts[i]), len(rest))
				}
				s.members = append(s.members, gzipMember(t, rest[:n], layout>>(i%8)&1 == 0))
				rest = rest[n:]
				s.ends = append(s.ends, len(data)-len(rest))
			}
			input = bytes.Join(s.members, nil)
		}

		var refOut []byte
		var refErr error
		if zr, err := gzip.NewReader(bytes.NewReader(input)); err == io.EOF {
			refOut = nil // an empty body
		} else if err != nil {
			refErr = err
		} else {
			refOut, refErr = io.ReadAll(zr)
		}

		var body io.Reader = bytes.NewReader(input)
		if s != nil {
			body = s
		}
		err := readGzip(newGzipStream(body, 0), &got)
		switch {
		case refErr == nil && err != nil:
			t.Fatalf("error %v where gzip.Reader reads %d bytes", err, len(refOut))
		case refErr != nil && err == nil:
			t.Fatalf("no error where gzip.Reader fails with %v", refErr)
		case refErr == io.ErrUnexpectedEOF && err != io.ErrUnexpectedEOF:
			t.Fatalf("error %v where gzip.Reader has a cut stream", err)
		case refErr != nil && refErr != io.ErrUnexpectedEOF && !errors.Is(err, ErrMalformedGzip):
			t.Fatalf("error %v where gzip.Reader fails with %v", err, refErr)
		}
		if !bytes.Equal(got.Bytes(), refOut) {
			t.Fatalf("read %d bytes, gzip.Reader %d (errors %v, %v)", got.Len(), len(refOut), err, refErr)
		}
		if s != nil {
			if s.early != nil {
				t.Fatal(s.early)
			}
			if !bytes.Equal(got.Bytes(), data) {
				t.Fatalf("read %d bytes of %d", got.Len(), len(data))
			}
		}
	})
}

// TestCompressionPolicy checks which requests ask for gzip: CompressionAuto asks unless the
// server is on a loopback address, and a kubeconfig's disable-compression turns it off.
func TestCompressionPolicy(t *testing.T) {
	for _, tc := range []struct {
		host        string
		compression Compression
		want        bool
	}{
		{"https://10.0.0.1:6443", CompressionAuto, true},
		{"https://kube.example.com", CompressionAuto, true},
		{"https://127.0.0.1:6443", CompressionAuto, false},
		{"https://localhost:6443", CompressionAuto, false},
		{"https://[::1]:6443", CompressionAuto, false},
		{"https://127.0.0.1:6443", CompressionGzip, true},
		{"https://10.0.0.1:6443", CompressionNone, false},
	} {
		var asked string
		c, err := New(&Config{Host: tc.host, Compression: tc.compression, MaxRetries: -1,
			WrapTransport: handlerTransport(func(w http.ResponseWriter, r *http.Request) {
				asked = r.Header.Get("Accept-Encoding")
				writeJSON(w, http.StatusOK, map[string]any{"kind": "ConfigMap", "apiVersion": "v1", "metadata": map[string]any{"name": "x"}})
			})})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := NewResource[*testobj.ConfigMap](c, testobj.ConfigMapGVR).Namespace("ns").Get(t.Context(), "x", GetOptions{}); err != nil {
			t.Fatal(err)
		}
		if got := asked == "gzip"; got != tc.want {
			t.Errorf("%s with Compression %d: Accept-Encoding %q, want gzip %v", tc.host, tc.compression, asked, tc.want)
		}
		c.Close()
	}
}
