package apiclient_test

import (
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"net/http"
	"sync/atomic"
	"testing"
	"testing/synctest"

	"github.com/informerkit/informerkit/apiclient"
	"github.com/informerkit/informerkit/apitest"
	"github.com/informerkit/informerkit/internal/testobj"
)

// gzipOf compresses prefix followed by n spaces (JSON whitespace, which the decoders accept
// until the size limit) at the best ratio: a bomb of about 1,000 to 1.
func gzipOf(prefix string, n int) []byte {
	var b bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&b, gzip.BestCompression)
	zw.Write([]byte(prefix))
	spaces := bytes.Repeat([]byte(" "), 1<<20)
	for n > 0 {
		k := min(n, len(spaces))
		zw.Write(spaces[:k])
		n -= k
	}
	zw.Close()
	return b.Bytes()
}

// TestAGzipBombIsRefused serves, as gzip, bodies that expand a thousandfold: a watch stream,
// a list and an object. Each read ends with a *DecodeError wrapping ErrGzipBomb after about
// a MiB of output, not at the end of the body (or, past 16 MiB, the event size limit); the GET is
// not sent again. A body that is not gzip at all, announced as gzip, is ErrMalformedGzip.
func TestAGzipBombIsRefused(t *testing.T) {
	bombs := map[string][]byte{
		"watch":  gzipOf(`{"type":"ADDED","object":`, 4<<20),
		"list":   gzipOf(`{"kind":"ConfigMapList","apiVersion":"v1","metadata":{},"items":[`, 4<<20),
		"object": gzipOf(`{"kind":"ConfigMap","apiVersion":"v1",`, 4<<20),
	}
	synctest.Test(t, func(t *testing.T) {
		netw := apitest.NewNetwork()
		var gets atomic.Int32
		notGzip := false
		srv, cfg := serveHostile(t, netw, hostileTransports[0], http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			gets.Add(1)
			body := bombs["object"]
			switch {
			case r.URL.Query().Get("watch") == "true":
				body = bombs["watch"]
			case r.URL.Path == "/api/v1/namespaces/ns/configmaps":
				body = bombs["list"]
			}
			if notGzip {
				body = []byte(`{"kind":"ConfigMapList","apiVersion":"v1","metadata":{},"items":[]}`)
			}
			w.Header().Set("Content-Type", "application/json")
			w.Header().Set("Content-Encoding", "gzip")
			w.Write(body)
		}))
		defer srv.Close()
		cfg.Compression = apiclient.CompressionGzip
		c, err := apiclient.New(cfg)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		cms := apiclient.NewResource[*testobj.ConfigMap](c, testobj.ConfigMapGVR).Namespace("ns")
		isBomb := func(what string, err error) {
			t.Helper()
			var de *apiclient.DecodeError
			if !errors.Is(err, apiclient.ErrGzipBomb) || !errors.As(err, &de) {
				t.Errorf("%s: error %v, want a *DecodeError wrapping ErrGzipBomb", what, err)
			} else if de.Offset > 8<<10 {
				t.Errorf("%s: refused after %d compressed bytes", what, de.Offset)
			}
		}

		w, err := cms.Watch(context.Background(), apiclient.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		var last apiclient.Event[*testobj.ConfigMap]
		for ev := range w.ResultChan() {
			last = ev
		}
		if last.Type != apiclient.Error {
			t.Errorf("watch: last event %s, want Error", last.Type)
		}
		isBomb("watch", last.Err)

		_, err = cms.ListEach(context.Background(), apiclient.ListOptions{}, func(*testobj.ConfigMap) error { return nil })
		isBomb("list", err)

		gets.Store(0)
		_, err = cms.Get(context.Background(), "a", apiclient.GetOptions{})
		isBomb("get", err)
		if n := gets.Load(); n != 1 {
			t.Errorf("the GET of a bomb was sent %d times, want once", n)
		}

		notGzip = true
		_, err = cms.List(context.Background(), apiclient.ListOptions{})
		if !errors.Is(err, apiclient.ErrMalformedGzip) {
			t.Errorf("a JSON body announced as gzip: error %v, want ErrMalformedGzip", err)
		}
	})
}
