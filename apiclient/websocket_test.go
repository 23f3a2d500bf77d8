package apiclient

import (
	"context"
	"encoding/base64"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/gorilla/websocket"

	"github.com/informerkit/informerkit/internal/testobj"
	"github.com/informerkit/informerkit/meta"
)

var upgrader = websocket.Upgrader{CheckOrigin: func(*http.Request) bool { return true }}

// wsWatchServer upgrades watch requests and sends lines as text messages, then either
// closes normally or (hold) waits for the client to go away.
func wsWatchServer(t *testing.T, lines []string, hold bool) (*recorder, *Client, chan http.Header) {
	headers := make(chan http.Header, 4)
	rec, c := newTestServer(t, func(w http.ResponseWriter, r *http.Request) {
		headers <- r.Header.Clone()
		conn, err := upgrader.Upgrade(w, r, nil)
		if err != nil {
			return
		}
		defer conn.Close()
		for _, l := range lines {
			if err := conn.WriteMessage(websocket.TextMessage, []byte(l)); err != nil {
				return
			}
		}
		if hold {
			conn.ReadMessage() // returns when the client closes
			return
		}
		conn.WriteMessage(websocket.CloseMessage, websocket.FormatCloseMessage(websocket.CloseNormalClosure, ""))
		conn.ReadMessage()
	})
	c.watchProtocol = WatchWebSocket
	return rec, c, headers
}

func TestWatchWebSocket(t *testing.T) {
	lines := strings.Split(strings.TrimSpace(goodStream), "\n")
	lines = append(lines[:2], `{"type":"BOOKMARK","object":{"kind":"Pod","metadata":{"resourceVersion":"12"}}}`)
	rec, c, headers := wsWatchServer(t, lines, false)
	w, err := NewResource[*testobj.Pod](c, testobj.PodGVR).Namespace("ns").WithKind("Pod").Watch(context.Background(), ListOptions{ResourceVersion: "3", AllowWatchBookmarks: true})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	var types []EventType
	for ev := range w.ResultChan() {
		if ev.Type == Error {
			t.Fatalf("error event %v", ev.Err)
		}
		types = append(types, ev.Type)
	}
	if !equalTypes(types, []EventType{Added, Modified, Bookmark}) {
		t.Fatalf("types %v", types)
	}
	if err := w.(interface{ Err() error }).Err(); err != nil {
		t.Fatalf("normal close: Err() = %v", err)
	}
	h := <-headers
	wantProto := bearerProtocolPrefix + base64.RawURLEncoding.EncodeToString([]byte("s3cret-token"))
	if h.Get("Sec-Websocket-Protocol") != wantProto || h.Get("Authorization") != "Bearer s3cret-token" || h.Get("Upgrade") != "websocket" {
		t.Errorf("handshake headers %v", h)
	}
	if q := rec.last().Query; q != "allowWatchBookmarks=true&resourceVersion=3&watch=true" {
		t.Errorf("query %s", q)
	}
}

func TestWatchWebSocketStopAndTooLarge(t *testing.T) {
	_, c, _ := wsWatchServer(t, []string{`{"type":"ADDED","object":{"metadata":{"name":"a"}}}`}, true)
	w, err := NewResource[*testobj.Pod](c, testobj.PodGVR).Watch(context.Background(), ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if ev := <-w.ResultChan(); ev.Type != Added {
		t.Fatalf("first %+v", ev)
	}
	w.Stop()
	if _, ok := <-w.ResultChan(); ok {
		t.Fatal("open after Stop")
	}

	big := `{"type":"ADDED","object":{"metadata":{"name":"` + strings.Repeat("x", 2000) + `"}}}`
	_, c2, _ := wsWatchServer(t, []string{big}, true)
	c2.maxEventSize = 1000
	w2, err := NewResource[*testobj.Pod](c2, testobj.PodGVR).Watch(context.Background(), ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer w2.Stop()
	if ev := <-w2.ResultChan(); ev.Type != Error || !errors.Is(ev.Err, ErrEventTooLarge) {
		t.Fatalf("big message: %+v", ev)
	}
	if _, ok := <-w2.ResultChan(); ok {
		t.Fatal("open after the error")
	}
}

func TestWatchAutoFallsBackAndRemembers(t *testing.T) {
	lines := []string{`{"type":"ADDED","object":{"metadata":{"name":"a"}}}`}
	rec, c := newTestServer(t, func(w http.ResponseWriter, r *http.Request) {
		// A server without WebSocket support: every watch gets a chunked stream.
		w.WriteHeader(200)
		for _, l := range lines {
			io.WriteString(w, l+"\n")
		}
	})
	c.watchProtocol = WatchAuto
	pods := NewResource[*testobj.Pod](c, testobj.PodGVR)
	for i := 0; i < 2; i++ {
		w, err := pods.Watch(context.Background(), ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		var n int
		for ev := range w.ResultChan() {
			if ev.Type != Added || ev.Object.Name != "a" {
				t.Fatalf("event %+v", ev)
			}
			n++
		}
		w.Stop()
		if n != 1 {
			t.Fatalf("watch %d: %d events", i, n)
		}
	}
	if rec.count() != 3 {
		t.Fatalf("%d requests, want 3 (one refused upgrade, two chunked watches)", rec.count())
	}
	// WebSocket only: the refusal is an error.
	c.watchProtocol = WatchWebSocket
	if _, err := pods.Watch(context.Background(), ListOptions{}); !errors.Is(err, ErrWebSocketRefused) {
		t.Fatalf("WatchWebSocket against a chunked server: %v", err)
	}
}

func TestWatchWebSocketAPIErrorIsNotARefusal(t *testing.T) {
	rec, c := newTestServer(t, func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, 403, map[string]any{"kind": "Status", "reason": "Forbidden", "code": 403, "message": "no"})
	})
	c.watchProtocol = WatchAuto
	if _, err := NewResource[*testobj.Pod](c, testobj.PodGVR).Watch(context.Background(), ListOptions{}); !meta.IsForbidden(err) {
		t.Fatalf("err %v", err)
	}
	if rec.count() != 1 || c.wsRefused.Load() {
		t.Fatalf("a 403 was taken for a refused upgrade")
	}
}

func TestWatchWebSocketRenewsCredentialsAfter401(t *testing.T) {
	dir := t.TempDir()
	script, _ := execScript(t, "2999-01-01T00:00:00Z")
	rec, c := newTestServer(t, func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") == "Bearer tok-1" {
			writeJSON(w, 401, map[string]any{"kind": "Status", "reason": "Unauthorized", "code": 401})
			return
		}
		conn, err := upgrader.Upgrade(w, r, nil)
		if err != nil {
			return
		}
		defer conn.Close()
		conn.WriteMessage(websocket.TextMessage, []byte(`{"type":"ADDED","object":{"metadata":{"name":"a"}}}`))
		conn.WriteMessage(websocket.CloseMessage, websocket.FormatCloseMessage(websocket.CloseNormalClosure, ""))
		conn.ReadMessage()
	})
	cfg := &Config{Host: c.Host(), Exec: execConfig(script, dir), WatchProtocol: WatchWebSocket, AllowCredentialsOverHTTP: true}
	ec, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer ec.Close()
	w, err := NewResource[*testobj.Pod](ec, testobj.PodGVR).Watch(context.Background(), ListOptions{})
	if err != nil {
		t.Fatalf("watch after a 401: %v", err)
	}
	defer w.Stop()
	if ev := <-w.ResultChan(); ev.Type != Added {
		t.Fatalf("event %+v", ev)
	}
	if rec.count() != 2 {
		t.Fatalf("%d handshakes, want 2", rec.count())
	}
}
