package informer

import (
	"crypto/tls"
	"encoding/pem"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/informerkit/informerkit/apiclient"
	"github.com/informerkit/informerkit/apitest"
	"github.com/informerkit/informerkit/internal/testobj"
	"github.com/informerkit/informerkit/meta"
)

// noWebSocketProxy is a reverse proxy in front of an apitest server that does not support
// WebSocket, as many proxies and load balancers: it drops the hop-by-hop Upgrade and
// Connection headers, so that the server answers every watch as an ordinary chunked stream,
// a 200 to the client's upgrade. It records when it first did so. A hostile proxy of the
// test's own, not a fake of the API: the API behind it is apitest's.
type noWebSocketProxy struct {
	rp *httputil.ReverseProxy

	mu           sync.Mutex
	firstRefusal time.Time
	refusals     int
}

func (p *noWebSocketProxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if strings.EqualFold(r.Header.Get("Upgrade"), "websocket") {
		p.mu.Lock()
		if p.refusals == 0 {
			p.firstRefusal = time.Now()
		}
		p.refusals++
		p.mu.Unlock()
		r.Header.Del("Upgrade")
		r.Header.Del("Connection")
	}
	p.rp.ServeHTTP(w, r)
}

func (p *noWebSocketProxy) first() (time.Time, int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.firstRefusal, p.refusals
}

// TestAFactoryBehindAProxyWithoutWebSocketSyncsAtOnce: every watch of a 20-resource factory
// goes through a proxy without WebSocket support. With WatchAuto each informer is synced and
// watching within a second of the first refusal (measured in fake time: at once), where
// each used to wait out the 30 s watch deadline first. With WatchChunked the proxy changes
// nothing. The figure is logged.
func TestAFactoryBehindAProxyWithoutWebSocketSyncsAtOnce(t *testing.T) {
	for _, proto := range []apiclient.WatchProtocol{apiclient.WatchAuto, apiclient.WatchChunked} {
		name := map[apiclient.WatchProtocol]string{apiclient.WatchAuto: "websocket", apiclient.WatchChunked: "http2"}[proto]
		t.Run(name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) { testBehindAProxy(t, proto) })
		})
	}
}

func testBehindAProxy(t *testing.T, proto apiclient.WatchProtocol) {
	// 0, 1 or 2 objects per resource: a watch whose first events make less than a KiB is
	// what held the WebSocket handshake (it read a KiB of the body before giving up).
	const resources = 20
	objects := func(i int) int { return i % 3 }
	netw := apitest.NewNetwork()
	srv := apitest.NewServerWithOptions(apitest.Options{Network: netw, TLS: true})
	defer srv.Close()
	var gvrs []meta.GroupVersionResource
	for i := range resources {
		rt := apitest.ResourceType{Group: "example.com", Version: "v1", Kind: fmt.Sprintf("Thing%02d", i),
			Plural: fmt.Sprintf("thing%02ds", i), Namespaced: true}
		if err := srv.AddResource(rt); err != nil {
			t.Fatal(err)
		}
		gvrs = append(gvrs, meta.GroupVersionResource{Group: rt.Group, Version: rt.Version, Resource: rt.Plural})
		for j := range objects(i) {
			if _, err := srv.Create(rt.Plural+".example.com", map[string]any{"apiVersion": "example.com/v1", "kind": rt.Kind,
				"metadata": map[string]any{"namespace": "default", "name": fmt.Sprintf("o%d", j)}, "spec": map[string]any{"size": j}}); err != nil {
				t.Fatal(err)
			}
		}
	}

	// The proxy, on TLS with HTTP/2, forwards to the server over the same network.
	backend, _ := url.Parse(srv.URL)
	rp := httputil.NewSingleHostReverseProxy(backend)
	rp.FlushInterval = -1
	rp.Transport = &http.Transport{DialContext: netw.Dial, ForceAttemptHTTP2: true, TLSClientConfig: &tls.Config{RootCAs: srv.CertPool()}}
	proxy := &noWebSocketProxy{rp: rp}
	ps := httptest.NewUnstartedServer(proxy)
	ps.Listener.Close()
	ln, err := netw.Listen("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ps.Listener = ln
	ps.EnableHTTP2 = true
	ps.StartTLS()
	defer ps.Close()
	defer rp.Transport.(*http.Transport).CloseIdleConnections()

	cfg := &apiclient.Config{Host: ps.URL, Dial: netw.Dial, WatchProtocol: proto,
		TLS: apiclient.TLSConfig{CAData: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: ps.Certificate().Raw})}}
	c, err := apiclient.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	f := testFactory(t, c, FactoryOptions{})
	defer f.Shutdown() // before the servers close: their connections end with the watches
	var infs []*Informer[*testobj.Widget]
	for _, gvr := range gvrs {
		infs = append(infs, InformerFor[*testobj.Widget](f, gvr))
	}
	start := time.Now()
	ctx := t.Context()
	f.Start(ctx)

	// Synced and watching: every cache holds its objects, and every resource has an open
	// watch on the server. Checked at each fake millisecond, once everything that can run
	// has (synctest.Wait), for at most a second after the first refusal.
	ready := func() (string, bool) {
		for i, inf := range infs {
			if !inf.HasSynced() || len(inf.GetStore().List()) != objects(i) {
				return fmt.Sprintf("%s not synced", inf.Name()), false
			}
			if len(srv.Watches(gvrs[i].Resource+".example.com")) == 0 {
				return fmt.Sprintf("%s not watching", inf.Name()), false
			}
		}
		return "", true
	}
	for {
		synctest.Wait()
		what, ok := ready()
		if ok {
			break
		}
		first, n := proxy.first()
		if proto == apiclient.WatchAuto && n > 0 && time.Since(first) > time.Second {
			t.Fatalf("%v after the first refusal: %s", time.Since(first), what)
		}
		if time.Since(start) > time.Minute {
			t.Fatalf("a minute after the start: %s", what)
		}
		time.Sleep(time.Millisecond)
	}
	first, refusals := proxy.first()
	switch proto {
	case apiclient.WatchAuto:
		if refusals == 0 {
			t.Fatal("no watch tried WebSocket")
		}
		t.Logf("%d informers synced and watching %v after the first refused upgrade (%d refused upgrades; fake time)", resources, time.Since(first), refusals)
		var fallbacks uint64
		for _, inf := range infs {
			fallbacks += inf.Stats().Reflector.Fallbacks
		}
		if fallbacks != uint64(refusals) {
			t.Errorf("the reflectors counted %d fallbacks, want one per refused upgrade (%d)", fallbacks, refusals)
		}
	case apiclient.WatchChunked:
		if refusals != 0 {
			t.Errorf("%d upgrades with WatchChunked", refusals)
		}
	}
	for _, w := range srv.Watches("") {
		if w.Protocol == "websocket" {
			t.Errorf("a watch went over WebSocket through a proxy without it: %+v", w)
		}
	}
}
