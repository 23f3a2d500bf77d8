package apitest

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"

	"github.com/informerkit/informerkit/apitest/internal/apierr"
	"github.com/informerkit/informerkit/apitest/internal/jsonobj"
	"github.com/informerkit/informerkit/apitest/internal/negotiation"
	"github.com/informerkit/informerkit/internal/kubecbor"
	"github.com/informerkit/informerkit/internal/kubeproto"
	"github.com/informerkit/informerkit/internal/kubeschema"
	"github.com/informerkit/informerkit/meta"
)

// Responses in the negotiated representation (internal/negotiation picks it): one object,
// a list written without re-encoding the stored JSON, Tables, PartialObjectMetadata, and
// the Status of an error.

// outputOf returns the representation negotiated for the request being answered on w.
func outputOf(w http.ResponseWriter) negotiation.Output {
	if cw, ok := w.(*codeWriter); ok {
		return cw.out
	}
	return negotiation.Output{}
}

// writeBody writes a JSON document in the negotiated format; apiVersion/kind name its
// protobuf type (the JSON's own apiVersion and kind when empty).
func writeBody(w http.ResponseWriter, out negotiation.Output, code int, doc []byte) {
	switch out.Format {
	case negotiation.Protobuf:
		m, err := jsonobj.Decode(doc)
		var b []byte
		if err == nil {
			b, err = kubeproto.EncodeObject(m)
		}
		if err != nil {
			writeJSONBody(w, http.StatusInternalServerError, mustJSON(apierr.Internal("protobuf: "+err.Error())))
			return
		}
		w.Header().Set("Content-Type", negotiation.MediaProtobuf)
		w.WriteHeader(code)
		w.Write(b)
	case negotiation.CBOR:
		b, err := kubecbor.FromJSON(nil, doc)
		if err != nil {
			writeJSONBody(w, http.StatusInternalServerError, mustJSON(apierr.Internal("cbor: "+err.Error())))
			return
		}
		w.Header().Set("Content-Type", negotiation.MediaCBOR)
		w.WriteHeader(code)
		w.Write(b)
	case negotiation.YAML:
		w.Header().Set("Content-Type", negotiation.MediaYAML)
		w.WriteHeader(code)
		w.Write(negotiation.EncodeYAML(doc))
	default:
		writeJSONBody(w, code, doc)
	}
}

func writeJSONBody(w http.ResponseWriter, code int, doc []byte) {
	w.Header().Set("Content-Type", negotiation.MediaJSON)
	w.WriteHeader(code)
	w.Write(doc)
	if len(doc) == 0 || doc[len(doc)-1] != '\n' {
		w.Write([]byte("\n"))
	}
}

func mustJSON(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		b, _ = json.Marshal(apierr.Internal(err.Error()))
	}
	return b
}

// goTypeName is how the kube-apiserver's messages name an object's Go type (its internal
// type: *core.ConfigMap, *apps.Deployment).
func goTypeName(res *resource, list bool) string {
	if !res.builtin() {
		if list {
			return "*unstructured.UnstructuredList"
		}
		return "*unstructured.Unstructured"
	}
	k := res.typ.Kind
	if list {
		k += "List"
	}
	pkg, _, _ := strings.Cut(res.typ.Group, ".")
	if pkg == "" || res.typ.Group == "events.k8s.io" {
		pkg = "core"
	}
	return "*" + pkg + "." + k
}

// respondObject writes one stored object in the negotiated representation.
func (s *Server) respondObject(w http.ResponseWriter, r *http.Request, ri *reqInfo, code int, o *storedObj) {
	out := outputOf(w)
	switch out.As {
	case "Table":
		opts, st := tableOptions(r)
		if st != nil {
			writeStatus(w, st)
			return
		}
		writeBody(w, out, code, mustJSON(table(ri.res, []*storedObj{o}, meta.ListMeta{ResourceVersion: strconv.FormatUint(o.rv, 10)}, opts, true)))
		return
	case "PartialObjectMetadata":
		writeBody(w, out, code, mustJSON(partialMeta(o, out.AsAPIVersion())))
		return
	case "PartialObjectMetadataList":
		writeStatus(w, apierr.New(http.StatusNotAcceptable, meta.StatusReasonNotAcceptable,
			fmt.Sprintf("you requested PartialObjectMetadataList, but the requested object is not a list (%s)", goTypeName(ri.res, false))))
		return
	}
	if out.Format == negotiation.Protobuf && !ri.res.convertsAt(ri.version) {
		w.Header().Set("Content-Type", negotiation.MediaProtobuf)
		w.WriteHeader(code)
		w.Write(o.protobuf(ri.res))
		return
	}
	writeBody(w, out, code, atVersion(ri.res, ri.version, o.raw))
}

// respondList writes a list of stored objects in the negotiated representation, without
// re-encoding the stored JSON. Items of built-in kinds carry no apiVersion and kind, as
// from the kube-apiserver (whose storage drops them); custom resources' items keep them.
func (s *Server) respondList(w http.ResponseWriter, r *http.Request, ri *reqInfo, items []*storedObj, lm meta.ListMeta) {
	out := outputOf(w)
	res := ri.res
	switch out.As {
	case "Table":
		opts, st := tableOptions(r)
		if st != nil {
			writeStatus(w, st)
			return
		}
		writeBody(w, out, http.StatusOK, mustJSON(table(res, items, lm, opts, true)))
		return
	case "PartialObjectMetadata":
		writeStatus(w, apierr.New(http.StatusNotAcceptable, meta.StatusReasonNotAcceptable,
			fmt.Sprintf("you requested PartialObjectMetadata, but the requested object is a list (%s)", goTypeName(res, true))))
		return
	case "PartialObjectMetadataList":
		if out.Format == negotiation.Protobuf {
			w.Header().Set("Content-Type", negotiation.MediaProtobuf)
			w.WriteHeader(http.StatusOK)
			writeProtobufList(w, out.AsAPIVersion(), "PartialObjectMetadataList", lm, items, func(o *storedObj) []byte { return o.protobufMeta() })
			return
		}
		list := map[string]any{"kind": "PartialObjectMetadataList", "apiVersion": out.AsAPIVersion(), "metadata": lm}
		metas := make([]any, 0, len(items))
		for _, o := range items {
			metas = append(metas, partialMeta(o, out.AsAPIVersion()))
		}
		list["items"] = metas
		writeBody(w, out, http.StatusOK, mustJSON(list))
		return
	}
	gv := res.typ.GroupVersion().String()
	if ri.version != "" {
		gv = meta.GroupVersion{Group: res.typ.Group, Version: ri.version}.String()
	}
	if out.Format == negotiation.Protobuf {
		w.Header().Set("Content-Type", negotiation.MediaProtobuf)
		w.WriteHeader(http.StatusOK)
		message := func(o *storedObj) []byte { return o.protobufMessage(res) }
		if res.convertsAt(ri.version) {
			k, _ := kubeschema.ForKind(res.typ.Group, ri.version, res.typ.Kind)
			message = func(o *storedObj) []byte { b, _ := kubeproto.Encode(k.Type, itemAt(res, ri.version, o)); return b }
		}
		writeProtobufList(w, gv, res.typ.Kind+"List", lm, items, message)
		return
	}
	var buf bytes.Buffer
	var bw *bufio.Writer
	if out.Format == negotiation.JSON {
		w.Header().Set("Content-Type", negotiation.MediaJSON)
		w.WriteHeader(http.StatusOK)
		bw = bufio.NewWriterSize(w, 64<<10)
	} else {
		bw = bufio.NewWriter(&buf)
	}
	meta, _ := json.Marshal(lm)
	fmt.Fprintf(bw, `{"kind":%q,"apiVersion":%q,"metadata":%s,"items":[`, res.typ.Kind+"List", gv, meta)
	builtin := res.builtin() || res.typ.builtinJSON
	for i, o := range items {
		if i > 0 {
			bw.WriteByte(',')
		}
		if res.convertsAt(ri.version) {
			b, _ := json.Marshal(itemAt(res, ri.version, o))
			bw.Write(b)
		} else if builtin {
			bw.Write(o.listItem())
		} else {
			bw.Write(atVersion(res, ri.version, o.raw))
		}
	}
	bw.WriteString("]}\n")
	bw.Flush()
	if out.Format != negotiation.JSON {
		writeBody(w, out, http.StatusOK, buf.Bytes())
	}
}

func partialMeta(o *storedObj, apiVersion string) map[string]any {
	m := mustDecode(o.raw)
	return map[string]any{"kind": "PartialObjectMetadata", "apiVersion": apiVersion, "metadata": m["metadata"]}
}
