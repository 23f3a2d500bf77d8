package apitest

import (
	"encoding/json"

	"github.com/informerkit/informerkit/apiclient"
	"github.com/informerkit/informerkit/apitest/internal/apierr"
	"github.com/informerkit/informerkit/apitest/internal/jsonobj"
	"github.com/informerkit/informerkit/apitest/internal/negotiation"
	"github.com/informerkit/informerkit/apitest/internal/printers"
	"github.com/informerkit/informerkit/internal/kubecbor"
	"github.com/informerkit/informerkit/internal/kubeproto"
	"github.com/informerkit/informerkit/meta"
)

// Watch events in the negotiated representation: JSON lines (shared by all plain JSON
// watchers), length-delimited protobuf WatchEvents, and events whose objects are
// PartialObjectMetadata or Tables.

// eventFrame returns the frame of an event about o (or, when o is nil, about the object
// whose JSON is raw). shared is the event's plain JSON frame, if already made.
func (w *watcher) eventFrame(typ apiclient.EventType, o *storedObj, raw, shared []byte) []byte {
	if o != nil {
		raw = o.raw
	}
	if len(w.res.served) > 1 {
		if v := atVersion(w.res, w.version, raw); &v[0] != &raw[0] {
			raw, shared = v, nil
		}
	}
	if w.out.Plain() {
		if shared != nil {
			return shared
		}
		return frameFor(typ, raw)
	}
	if w.out.Format == negotiation.Protobuf && w.out.As == "" && o != nil && !w.res.convertsAt(w.version) {
		return kubeproto.AppendFrame(nil, kubeproto.WatchEvent(string(typ), o.protobuf(w.res)))
	}
	return w.objectFrame(typ, mustDecode(raw))
}

// objectFrame transforms and encodes an event's object (JSON form) for this watcher.
func (w *watcher) objectFrame(typ apiclient.EventType, obj map[string]any) []byte {
	switch w.out.As {
	case "PartialObjectMetadata":
		obj = map[string]any{"kind": "PartialObjectMetadata", "apiVersion": w.out.AsAPIVersion(), "metadata": obj["metadata"]}
	case "Table":
		lm := meta.ListMeta{ResourceVersion: jsonobj.Str(jsonobj.Meta(obj), "resourceVersion")}
		t := printers.Table(w.res.typ.Group, w.res.typ.Kind, []map[string]any{obj}, lm, printers.Options{
			IncludeObject: w.info.Query.Get("includeObject"), NoHeaders: w.headersSent, Generic: w.res.typ.custom})
		w.headersSent = true
		b, _ := json.Marshal(t)
		obj = mustDecode(b)
	}
	return w.encodeFrame(string(typ), obj)
}

// errorFrame is an ERROR event carrying a Status.
func (w *watcher) errorFrame(st *meta.Status) []byte {
	m, _ := toMap(st)
	return w.encodeFrame(string(apiclient.Error), m)
}

func (w *watcher) encodeFrame(typ string, obj map[string]any) []byte {
	if w.out.Format == negotiation.Protobuf {
		b, err := kubeproto.EncodeObject(obj)
		if err != nil {
			st := apierr.Internal("protobuf: " + err.Error())
			m, _ := toMap(st)
			b, _ = kubeproto.EncodeObject(m)
			typ = string(apiclient.Error)
		}
		return kubeproto.AppendFrame(nil, kubeproto.WatchEvent(typ, b))
	}
	if w.out.Format == negotiation.CBOR {
		return cborEvent(typ, obj)
	}
	b, _ := json.Marshal(map[string]any{"type": typ, "object": obj})
	return append(b, '\n')
}

// cborEvent is a watch event as kube-apiserver 1.37 writes it in a CBOR sequence: a
// self-described map of "type" and "object", the object self-described again.
func cborEvent(typ string, obj map[string]any) []byte {
	js, _ := json.Marshal(obj)
	b := append(kubecbor.SelfDescribed[:len(kubecbor.SelfDescribed):len(kubecbor.SelfDescribed)], 0xa2, 0x46)
	b = append(b, "object"...)
	b, _ = kubecbor.FromJSON(b, js)
	b = append(b, 0x44)
	b = append(b, "type"...)
	b = append(b, 0x40|byte(len(typ)))
	return append(b, typ...)
}

// corruptFrame is a frame the client's decoder cannot read.
func (w *watcher) corruptFrame() []byte {
	if w.out.Format == negotiation.Protobuf {
		return kubeproto.AppendFrame(nil, []byte{0x0a, 0x7f, 0xff, 0xff})
	}
	if w.out.Format == negotiation.CBOR {
		return []byte{0xa1, 0x41, 0xff, 0x01} // a map whose key is not UTF-8
	}
	// Balanced braces (so a framing reader hands it over) but not JSON.
	return []byte(`{"type":"MODIFIED","object":{"kind":"` + w.res.typ.Kind + `","metadata":{"name":corrupt!}}}` + "\n")
}
