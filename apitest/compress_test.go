package apitest_test

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"crypto/tls"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/informerkit/informerkit/apitest"
)

// rawGet sends a GET (Accept-Encoding: gzip when gz) through a transport that leaves the body
// as the server wrote it. The caller closes the body.
func rawGet(t *testing.T, s *apitest.Server, path, accept string, gz bool) *http.Response {
	t.Helper()
	tr := &http.Transport{DisableCompression: true, ForceAttemptHTTP2: true}
	if pool := s.CertPool(); pool != nil {
		tr.TLSClientConfig = &tls.Config{RootCAs: pool}
	}
	t.Cleanup(tr.CloseIdleConnections)
	req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, s.URL+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	if tok := s.Token(); tok != "" {
		req.Header.Set("Authorization", "Bearer "+tok)
	}
	if accept != "" {
		req.Header.Set("Accept", accept)
	}
	if gz {
		req.Header.Set("Accept-Encoding", "gzip")
	}
	resp, err := (&http.Client{Transport: tr}).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	return resp
}

// readBody returns the body of resp, decompressed if it says gzip, and its raw length.
func readBody(t *testing.T, resp *http.Response) (body []byte, raw int) {
	t.Helper()
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	if resp.Header.Get("Content-Encoding") != "gzip" {
		return b, len(b)
	}
	zr, err := gzip.NewReader(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	out, err := io.ReadAll(zr)
	if err != nil {
		t.Fatal(err)
	}
	return out, len(b)
}

// TestResponsesAreGzippedAsByKubeAPIServer checks APIResponseCompression's threshold as
// kube-apiserver applies it: a body of exactly 128 KiB is sent as it is, one byte more is
// gzipped (when asked), whatever the format; and nothing is gzipped unless asked.
func TestResponsesAreGzippedAsByKubeAPIServer(t *testing.T) {
	s := apitest.NewServer()
	defer s.Close()
	path := "/api/v1/namespaces/default/configmaps/c"
	put := func(value string) {
		if _, err := s.Create("configmaps", map[string]any{"metadata": map[string]any{"name": "c", "namespace": "default"}, "data": map[string]any{"k": value}}); err != nil {
			if err := s.Delete("configmaps", "default", "c"); err != nil {
				t.Fatal(err)
			}
			if _, err := s.Create("configmaps", map[string]any{"metadata": map[string]any{"name": "c", "namespace": "default"}, "data": map[string]any{"k": value}}); err != nil {
				t.Fatal(err)
			}
		}
	}
	for _, accept := range []string{"application/json", "application/vnd.kubernetes.protobuf"} {
		// Size the value so that the body is exactly 128 KiB, then one byte more.
		put(strings.Repeat("x", 100_000))
		body, _ := readBody(t, rawGet(t, s, path, accept, false))
		k := 100_000 + 128<<10 - len(body)
		for _, tc := range []struct {
			value int
			gz    bool
			want  string
		}{
			{k, true, ""}, {k + 1, true, "gzip"}, {k + 1, false, ""},
		} {
			put(strings.Repeat("x", tc.value))
			resp := rawGet(t, s, path, accept, tc.gz)
			got, raw := readBody(t, resp)
			if enc := resp.Header.Get("Content-Encoding"); enc != tc.want {
				t.Errorf("%s, body of %d bytes, gzip asked %v: Content-Encoding %q, want %q", accept, len(got), tc.gz, enc, tc.want)
			}
			if tc.want == "gzip" && (resp.Header.Get("Vary") != "Accept-Encoding" || raw >= len(got)/10) {
				t.Errorf("%s: gzip body of %d bytes for %d, Vary %q", accept, raw, len(got), resp.Header.Get("Vary"))
			}
			if !bytes.Contains(got, []byte(strings.Repeat("x", tc.value))) {
				t.Errorf("%s: the body does not hold the value", accept)
			}
		}
	}
	// A list too, and a large one goes in one gzip stream.
	for i := range 300 {
		if _, err := s.Create("configmaps", map[string]any{"metadata": map[string]any{"name": fmt.Sprintf("l-%d", i), "namespace": "default"},
			"data": map[string]any{"k": strings.Repeat("y", 1000)}}); err != nil {
			t.Fatal(err)
		}
	}
	for _, accept := range []string{"application/json", "application/vnd.kubernetes.protobuf", "application/json;as=Table;v=v1;g=meta.k8s.io"} {
		resp := rawGet(t, s, "/api/v1/namespaces/default/configmaps", accept, true)
		got, raw := readBody(t, resp)
		if resp.Header.Get("Content-Encoding") != "gzip" || !strings.Contains(accept, "Table") && bytes.Count(got, []byte(strings.Repeat("y", 1000))) != 300 {
			t.Errorf("list as %s: Content-Encoding %q, %d raw bytes for %d", accept, resp.Header.Get("Content-Encoding"), raw, len(got))
		}
	}
}

// TestStreamingListsAreGzippedOneMemberPerFlush checks WatchListCompression as in 1.37: a
// watch with sendInitialEvents=true (given, or the default of a watch from "" or "0") and
// allowWatchBookmarks=true is gzipped when asked, each
// flush ending a gzip member, so that the initial events and their bookmark are readable
// before anything else is sent; a later event comes in a member of its own. Other watches are
// not compressed. As 1.36 (KubernetesVersion), no watch is.
func TestStreamingListsAreGzippedOneMemberPerFlush(t *testing.T) {
	for _, release := range []string{"v1.36.3", "v1.37.2"} {
		t.Run(release, func(t *testing.T) { testStreamingListsAreGzipped(t, release) })
	}
}

func testStreamingListsAreGzipped(t *testing.T, release string) {
	s := apitest.NewServerWithOptions(apitest.Options{KubernetesVersion: release})
	defer s.Close()
	gzip37 := map[bool]string{true: "gzip"}[release >= "v1.37"]
	var rv string
	for i := range 3 {
		o, err := s.Create("configmaps", map[string]any{"metadata": map[string]any{"name": fmt.Sprintf("w-%d", i), "namespace": "default"}})
		if err != nil {
			t.Fatal(err)
		}
		rv = o.ResourceVersion()
	}
	base := "/api/v1/namespaces/default/configmaps?watch=true"
	watchList := base + "&sendInitialEvents=true&allowWatchBookmarks=true&resourceVersionMatch=NotOlderThan"
	for _, tc := range []struct {
		path string
		gz   bool
		want string
	}{
		{watchList, true, gzip37},
		{watchList, false, ""},
		// A watch from "" or "0" is a streaming list by the kube-apiserver's defaults.
		{base + "&allowWatchBookmarks=true", true, gzip37},
		{base + "&allowWatchBookmarks=true&resourceVersion=" + rv, true, ""},
		{base + "&sendInitialEvents=true&resourceVersionMatch=NotOlderThan", true, ""}, // no bookmarks: not a streaming list
	} {
		resp := rawGet(t, s, tc.path, "", tc.gz)
		if enc := resp.Header.Get("Content-Encoding"); enc != tc.want {
			t.Errorf("%s (gzip asked %v): Content-Encoding %q, want %q", tc.path, tc.gz, enc, tc.want)
		}
		if tc.want != "gzip" {
			resp.Body.Close()
			continue
		}
		br := bufio.NewReader(resp.Body)
		zr, err := gzip.NewReader(br)
		if err != nil {
			t.Fatal(err)
		}
		// Member by member: the first holds the three objects and the end bookmark.
		zr.Multistream(false)
		first, err := io.ReadAll(zr)
		if err != nil {
			t.Fatal(err)
		}
		if n := bytes.Count(first, []byte(`"type":"ADDED"`)); n != 3 || !bytes.Contains(first, []byte(`"k8s.io/initial-events-end":"true"`)) {
			t.Fatalf("first member: %d ADDED events, end bookmark %v:\n%s", n, bytes.Contains(first, []byte("initial-events-end")), first)
		}
		if _, err := s.Create("configmaps", map[string]any{"metadata": map[string]any{"name": "late", "namespace": "default"}}); err != nil {
			t.Fatal(err)
		}
		if err := zr.Reset(br); err != nil {
			t.Fatal(err)
		}
		zr.Multistream(false)
		second, err := io.ReadAll(zr)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Contains(second, []byte(`"type":"ADDED"`)) || !bytes.Contains(second, []byte(`"name":"late"`)) {
			t.Errorf("second member: %s", second)
		}
		resp.Body.Close()
		if err := s.Delete("configmaps", "default", "late"); err != nil {
			t.Fatal(err)
		}
	}
}
