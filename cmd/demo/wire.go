package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
)

// wireTracer traces the reflectors' requests on the wire: each LIST with its result, each
// WATCH, and every watch event of the demo's objects as it arrives. Other requests (the
// controller's writes, the Lease) pass untraced: the reconcile lines show the writes.
type wireTracer struct {
	base http.RoundTripper
	p    *printer
}

// tracedResources are the collections the example's informers list and watch.
var tracedResources = map[string]string{"configmaps": "ConfigMap", "namespaces": "Namespace", "configmapreplications": "ConfigMapReplication"}

func (t *wireTracer) RoundTrip(req *http.Request) (*http.Response, error) {
	parts := strings.Split(strings.Trim(req.URL.Path, "/"), "/")
	resource := parts[len(parts)-1]
	// A collection path ends with the resource: /api/v1/configmaps,
	// /api/v1/namespaces/x/configmaps, /apis/g/v/configmapreplications.
	if req.Method != http.MethodGet || tracedResources[resource] == "" || (resource == "namespaces" && len(parts) != 3) {
		return t.base.RoundTrip(req)
	}
	q := req.URL.Query()
	if q.Get("watch") == "true" {
		if q.Get("sendInitialEvents") == "true" {
			t.p.line("reflector", fmt.Sprintf("WATCH %s as a streaming list (sendInitialEvents=true, rv=%q): the initial objects come as ADDED events",
				resource, q.Get("resourceVersion")))
		} else {
			t.p.line("reflector", fmt.Sprintf("WATCH %s from rv=%q", resource, q.Get("resourceVersion")))
		}
		resp, err := t.base.RoundTrip(req)
		if err == nil && resp.StatusCode == http.StatusOK {
			resp.Body = &eventTee{ReadCloser: resp.Body, p: t.p, resource: resource}
		}
		return resp, err
	}
	resp, err := t.base.RoundTrip(req)
	if err != nil || resp.StatusCode != http.StatusOK {
		return resp, err
	}
	body, rerr := io.ReadAll(resp.Body)
	resp.Body.Close()
	resp.Body = io.NopCloser(bytes.NewReader(body))
	if rerr != nil {
		return resp, nil
	}
	var list struct {
		Metadata struct {
			ResourceVersion string `json:"resourceVersion"`
			Continue        string `json:"continue"`
		} `json:"metadata"`
		Items []json.RawMessage `json:"items"`
	}
	if json.Unmarshal(body, &list) == nil {
		more := ""
		if list.Metadata.Continue != "" {
			more = " (more pages)"
		}
		t.p.line("reflector", fmt.Sprintf("LIST %s (rv=%q) → %d items at rv=%s%s", resource, q.Get("resourceVersion"),
			len(list.Items), list.Metadata.ResourceVersion, more))
	}
	return resp, nil
}

// eventTee prints the watch events of the demo's objects as the decoder reads them.
type eventTee struct {
	io.ReadCloser
	p        *printer
	resource string
	partial  []byte
}

func (e *eventTee) Read(b []byte) (int, error) {
	n, err := e.ReadCloser.Read(b)
	if n > 0 {
		e.partial = append(e.partial, b[:n]...)
		for {
			i := bytes.IndexByte(e.partial, '\n')
			if i < 0 {
				break
			}
			e.event(e.partial[:i])
			e.partial = e.partial[i+1:]
		}
		if len(e.partial) > 1<<20 { // not line-delimited: stop looking
			e.partial = nil
		}
	}
	return n, err
}

func (e *eventTee) event(line []byte) {
	var ev struct {
		Type   string `json:"type"`
		Object struct {
			Kind     string `json:"kind"`
			Metadata struct {
				Namespace       string            `json:"namespace"`
				Name            string            `json:"name"`
				ResourceVersion string            `json:"resourceVersion"`
				Annotations     map[string]string `json:"annotations"`
			} `json:"metadata"`
		} `json:"object"`
	}
	if json.Unmarshal(line, &ev) != nil {
		return
	}
	if ev.Type == "BOOKMARK" {
		if ev.Object.Metadata.Annotations["k8s.io/initial-events-end"] == "true" {
			e.p.line("watch", fmt.Sprintf("BOOKMARK %s rv=%s marks the end of the initial list: the cache can sync",
				e.resource, ev.Object.Metadata.ResourceVersion))
		}
		return
	}
	m := ev.Object.Metadata
	if !relevant(m.Namespace, m.Name) {
		return
	}
	name := m.Name
	if m.Namespace != "" {
		name = m.Namespace + "/" + m.Name
	}
	e.p.line("watch", fmt.Sprintf("%s %s %s rv=%s", ev.Type, ev.Object.Kind, name, m.ResourceVersion))
}
