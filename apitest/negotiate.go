package apitest

import (
	"bufio"
	"bytes"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"mime"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"sync"

	"go.yaml.in/yaml/v3"

	"github.com/informerkit/informerkit/apitest/internal/apierr"
	"github.com/informerkit/informerkit/apitest/internal/jsonobj"
	"github.com/informerkit/informerkit/internal/kubeproto"
	"github.com/informerkit/informerkit/internal/kubeschema"
	"github.com/informerkit/informerkit/meta"
)

// This file is content negotiation, as the kube-apiserver's: request bodies in JSON, YAML
// or protobuf (built-in kinds), responses in the first representation of the Accept header
// that the resource can give (protobuf for built-in kinds only), transformed to
// PartialObjectMetadata(List) or Table when the Accept header asks with as=...;g=meta.k8s.io.

const (
	mediaJSON     = "application/json"
	mediaYAML     = "application/yaml"
	mediaProtobuf = kubeproto.MediaType
)

type mediaFormat int

const (
	formatJSON mediaFormat = iota
	formatYAML
	formatProtobuf
)

func (f mediaFormat) contentType() string {
	switch f {
	case formatYAML:
		return mediaYAML
	case formatProtobuf:
		return mediaProtobuf
	}
	return mediaJSON
}

// output is the negotiated representation of a response.
type output struct {
	format mediaFormat
	// as is "", "Table", "PartialObjectMetadata" or "PartialObjectMetadataList";
	// asVersion is the meta.k8s.io version asked for ("v1" or "v1beta1").
	as, asVersion string
}

// plain reports a JSON response without transformation (the stored bytes as they are).
func (o output) plain() bool { return o.format == formatJSON && o.as == "" }

func (o output) asAPIVersion() string { return "meta.k8s.io/" + o.asVersion }

// builtin reports whether the resource's kind has a protobuf schema (the built-in kinds).
func (r *resource) builtin() bool {
	r.builtinOnce.Do(func() {
		_, r.isBuiltin = kubeschema.ForKind(r.typ.Group, r.typ.Version, r.typ.Kind)
		r.isBuiltin = r.isBuiltin && !r.typ.custom
	})
	return r.isBuiltin
}

// mediaTypes are the media types the resource reads and writes, in the server's order.
func (r *resource) mediaTypes() []string {
	if r.builtin() {
		return []string{mediaJSON, mediaYAML, mediaProtobuf}
	}
	return []string{mediaJSON, mediaYAML}
}

type acceptClause struct {
	typ, sub string
	q        float64
	params   map[string]string
}

// parseAccept splits an Accept header into clauses ordered as the kube-apiserver orders
// them (by q, then concrete types before wildcards, otherwise as written).
func parseAccept(h string) []acceptClause {
	var out []acceptClause
	for _, part := range strings.Split(h, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		mt, params, _ := strings.Cut(part, ";")
		typ, sub, ok := strings.Cut(strings.TrimSpace(mt), "/")
		if !ok {
			if strings.TrimSpace(mt) != "*" {
				continue
			}
			typ, sub = "*", "*"
		}
		c := acceptClause{typ: strings.TrimSpace(typ), sub: strings.TrimSpace(sub), q: 1}
		for _, p := range strings.Split(params, ";") {
			k, v, ok := strings.Cut(p, "=")
			if !ok {
				continue
			}
			k, v = strings.TrimSpace(k), strings.TrimSpace(v)
			if k == "q" {
				c.q, _ = strconv.ParseFloat(v, 64)
				continue
			}
			if c.params == nil {
				c.params = map[string]string{}
			}
			c.params[k] = v
		}
		out = append(out, c)
	}
	sort.SliceStable(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if a.q != b.q {
			return a.q > b.q
		}
		if (a.typ != "*") != (b.typ != "*") {
			return a.typ != "*"
		}
		return a.sub != "*" && b.sub == "*"
	})
	return out
}

// negotiate picks the response representation for a request on res (nil Status) or
// answers why none is acceptable (406).
func negotiate(r *http.Request, res *resource, watch bool) (output, *meta.Status) {
	h := r.Header.Get("Accept")
	if strings.TrimSpace(h) == "" {
		return output{}, nil
	}
	typeMatched := false
	for _, c := range parseAccept(h) {
		for i, mt := range []string{mediaJSON, mediaYAML, mediaProtobuf} {
			format := mediaFormat(i)
			typ, sub, _ := strings.Cut(mt, "/")
			if !(c.typ == "*" && c.sub == "*" || c.typ == typ && (c.sub == sub || c.sub == "*")) {
				continue
			}
			typeMatched = true
			if o, ok := acceptable(c, format, res, watch); ok {
				return o, nil
			}
		}
	}
	if !typeMatched {
		// No media type of the server at all: the kube-apiserver's router answers before
		// its handler, in its own words.
		types := res.mediaTypes()
		streams := []string{mediaJSON + ";stream=watch"}
		if res.builtin() {
			streams = append(streams, mediaProtobuf+";stream=watch")
		}
		st := apierr.New(http.StatusNotAcceptable, meta.StatusReasonNotAcceptable,
			"406: Not Acceptable\n\nAvailable representations: "+strings.Join(append(types, streams...), ", "))
		st.Details = &meta.StatusDetails{}
		return output{}, st
	}
	return output{}, apierr.NotAcceptable(res.mediaTypes())
}

// acceptable applies a clause's parameters to one of the server's media types.
func acceptable(c acceptClause, format mediaFormat, res *resource, watch bool) (output, bool) {
	o := output{format: format}
	var g, v string
	hasConvert := false
	for k, val := range c.params {
		switch k {
		case "as":
			o.as, hasConvert = val, true
		case "g":
			g, hasConvert = val, true
		case "v":
			v, hasConvert = val, true
		case "stream":
			if val != "" && (val != "watch" || format == formatYAML) {
				return output{}, false
			}
		}
	}
	if watch && format == formatYAML {
		return output{}, false // YAML has no stream serializer
	}
	if !hasConvert {
		// Custom resources have no protobuf form of their own.
		return o, format != formatProtobuf || res.builtin()
	}
	if g != "meta.k8s.io" || (v != "v1" && v != "v1beta1") {
		return output{}, false
	}
	o.asVersion = v
	switch o.as {
	case "Table":
		return o, format != formatProtobuf
	case "PartialObjectMetadata", "PartialObjectMetadataList":
		return o, true
	}
	return output{}, false
}

// readObject reads a request body in the media type of its Content-Type (JSON by default)
// into the JSON form: 415 for a media type the resource cannot read, 400 for a body that
// does not decode.
func readObject(r *http.Request, res *resource) (map[string]any, *meta.Status) {
	b, st := readBody(r)
	if st != nil {
		return nil, st
	}
	m, st := decodeAs(r.Header.Get("Content-Type"), b, res.mediaTypes())
	if st != nil && st.Code == http.StatusBadRequest && strings.HasPrefix(r.Header.Get("Content-Type"), mediaProtobuf) {
		// As the kube-apiserver words a body its protobuf decoder cannot read.
		why := "unexpected EOF"
		if _, err := kubeproto.Unwrap(b); err == nil || !strings.Contains(err.Error(), "exceeds") && !strings.Contains(err.Error(), "truncated") {
			why = strings.TrimPrefix(st.Message, "the body of the request does not decode as "+mediaProtobuf+": ")
		}
		st = apierr.BadRequest(fmt.Sprintf("the object provided is unrecognized (must be of type %s): %s (%s)", res.typ.Kind, why, summarizeBody(b)))
	}
	return m, st
}

// summarizeBody is the kube-apiserver's summary of a body in decode errors.
func summarizeBody(b []byte) string {
	const max = 30
	switch {
	case len(b) == 0:
		return "<empty>"
	case b[0] == '{':
		if len(b) > max {
			return string(b[:max]) + " ..."
		}
		return string(b)
	}
	if len(b) > max {
		return hex.EncodeToString(b[:max]) + " ..."
	}
	return hex.EncodeToString(b)
}

// decodeAs decodes b in media type ct ("" is JSON), accepted being what the endpoint reads.
func decodeAs(ct string, b []byte, accepted []string) (map[string]any, *meta.Status) {
	mt := mediaJSON
	if strings.TrimSpace(ct) != "" {
		var err error
		if mt, _, err = mime.ParseMediaType(ct); err != nil {
			return nil, apierr.UnsupportedMediaType(accepted)
		}
	}
	if !contains(accepted, mt) {
		return nil, apierr.UnsupportedMediaType(accepted)
	}
	var m map[string]any
	var err error
	switch mt {
	case mediaJSON:
		m, err = jsonobj.Decode(b)
	case mediaYAML:
		m, err = decodeYAML(b)
	case mediaProtobuf:
		m, err = kubeproto.DecodeObject(b)
	}
	if err != nil {
		return nil, apierr.BadRequest(fmt.Sprintf("the body of the request does not decode as %s: %v", mt, err))
	}
	if m == nil {
		return nil, apierr.BadRequest("the request body is not an object")
	}
	return m, nil
}

// decodeYAML decodes one YAML document into the JSON form (numbers as json.Number).
func decodeYAML(b []byte) (map[string]any, error) {
	var v any
	if err := yaml.Unmarshal(b, &v); err != nil {
		return nil, err
	}
	j, err := json.Marshal(yamlToJSON(v))
	if err != nil {
		return nil, err
	}
	return jsonobj.Decode(j)
}

func yamlToJSON(v any) any {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			x[k] = yamlToJSON(e)
		}
		return x
	case map[any]any:
		m := make(map[string]any, len(x))
		for k, e := range x {
			m[fmt.Sprint(k)] = yamlToJSON(e)
		}
		return m
	case []any:
		for i, e := range x {
			x[i] = yamlToJSON(e)
		}
	}
	return v
}

// encodeYAML writes a JSON document as YAML (numbers kept as numbers).
func encodeYAML(j []byte) []byte {
	d := json.NewDecoder(bytes.NewReader(j))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		return j
	}
	out, err := yaml.Marshal(numbersForYAML(v))
	if err != nil {
		return j
	}
	return out
}

func numbersForYAML(v any) any {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			x[k] = numbersForYAML(e)
		}
	case []any:
		for i, e := range x {
			x[i] = numbersForYAML(e)
		}
	case json.Number:
		if n, err := x.Int64(); err == nil {
			return n
		}
		f, _ := x.Float64()
		return f
	}
	return v
}

// outputOf returns the representation negotiated for the request being answered on w.
func outputOf(w http.ResponseWriter) output {
	if cw, ok := w.(*codeWriter); ok {
		return cw.out
	}
	return output{}
}

// writeBody writes a JSON document in the negotiated format; apiVersion/kind name its
// protobuf type (the JSON's own apiVersion and kind when empty).
func writeBody(w http.ResponseWriter, out output, code int, doc []byte) {
	switch out.format {
	case formatProtobuf:
		m, err := jsonobj.Decode(doc)
		var b []byte
		if err == nil {
			b, err = kubeproto.EncodeObject(m)
		}
		if err != nil {
			writeJSONBody(w, http.StatusInternalServerError, mustJSON(apierr.Internal("protobuf: "+err.Error())))
			return
		}
		w.Header().Set("Content-Type", mediaProtobuf)
		w.WriteHeader(code)
		w.Write(b)
	case formatYAML:
		w.Header().Set("Content-Type", mediaYAML)
		w.WriteHeader(code)
		w.Write(encodeYAML(doc))
	default:
		writeJSONBody(w, code, doc)
	}
}

func writeJSONBody(w http.ResponseWriter, code int, doc []byte) {
	w.Header().Set("Content-Type", mediaJSON)
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
	switch out.as {
	case "Table":
		opts, st := tableOptions(r)
		if st != nil {
			writeStatus(w, st)
			return
		}
		writeBody(w, out, code, mustJSON(table(ri.res, []*storedObj{o}, meta.ListMeta{ResourceVersion: strconv.FormatUint(o.rv, 10)}, opts, true)))
		return
	case "PartialObjectMetadata":
		writeBody(w, out, code, mustJSON(partialMeta(o, out.asAPIVersion())))
		return
	case "PartialObjectMetadataList":
		writeStatus(w, apierr.New(http.StatusNotAcceptable, meta.StatusReasonNotAcceptable,
			fmt.Sprintf("you requested PartialObjectMetadataList, but the requested object is not a list (%s)", goTypeName(ri.res, false))))
		return
	}
	if out.format == formatProtobuf {
		w.Header().Set("Content-Type", mediaProtobuf)
		w.WriteHeader(code)
		w.Write(o.protobuf(ri.res))
		return
	}
	writeBody(w, out, code, o.raw)
}

// respondList writes a list of stored objects in the negotiated representation, without
// re-encoding the stored JSON. Items of built-in kinds carry no apiVersion and kind, as
// from the kube-apiserver (whose storage drops them); custom resources' items keep them.
func (s *Server) respondList(w http.ResponseWriter, r *http.Request, ri *reqInfo, items []*storedObj, lm meta.ListMeta) {
	out := outputOf(w)
	res := ri.res
	switch out.as {
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
		if out.format == formatProtobuf {
			w.Header().Set("Content-Type", mediaProtobuf)
			w.WriteHeader(http.StatusOK)
			w.Write(protobufList(out.asAPIVersion(), "PartialObjectMetadataList", lm, items, func(o *storedObj) []byte { return o.protobufMeta() }))
			return
		}
		list := map[string]any{"kind": "PartialObjectMetadataList", "apiVersion": out.asAPIVersion(), "metadata": lm}
		metas := make([]any, 0, len(items))
		for _, o := range items {
			metas = append(metas, partialMeta(o, out.asAPIVersion()))
		}
		list["items"] = metas
		writeBody(w, out, http.StatusOK, mustJSON(list))
		return
	}
	gv := res.typ.GroupVersion().String()
	if out.format == formatProtobuf {
		w.Header().Set("Content-Type", mediaProtobuf)
		w.WriteHeader(http.StatusOK)
		w.Write(protobufList(gv, res.typ.Kind+"List", lm, items, func(o *storedObj) []byte { return o.protobufMessage(res) }))
		return
	}
	var buf bytes.Buffer
	var bw *bufio.Writer
	if out.format == formatJSON {
		w.Header().Set("Content-Type", mediaJSON)
		w.WriteHeader(http.StatusOK)
		bw = bufio.NewWriterSize(w, 64<<10)
	} else {
		bw = bufio.NewWriter(&buf)
	}
	meta, _ := json.Marshal(lm)
	fmt.Fprintf(bw, `{"kind":%q,"apiVersion":%q,"metadata":%s,"items":[`, res.typ.Kind+"List", gv, meta)
	builtin := res.builtin()
	for i, o := range items {
		if i > 0 {
			bw.WriteByte(',')
		}
		if builtin {
			bw.Write(o.listItem())
		} else {
			bw.Write(o.raw)
		}
	}
	bw.WriteString("]}\n")
	bw.Flush()
	if out.format != formatJSON {
		writeBody(w, out, http.StatusOK, buf.Bytes())
	}
}

func partialMeta(o *storedObj, apiVersion string) map[string]any {
	m := mustDecode(o.raw)
	return map[string]any{"kind": "PartialObjectMetadata", "apiVersion": apiVersion, "metadata": m["metadata"]}
}

// protobufList encodes a list message (ListMeta = 1, items = 2) in its envelope.
func protobufList(apiVersion, kind string, lm meta.ListMeta, items []*storedObj, item func(*storedObj) []byte) []byte {
	lmt := kubeschema.Lookup("io.k8s.apimachinery.pkg.apis.meta.v1.ListMeta")
	lmMap, _ := toMap(lm)
	meta, err := kubeproto.Encode(lmt, lmMap)
	if err != nil {
		meta = nil
	}
	var b []byte
	b = appendLenField(b, 1, meta)
	for _, o := range items {
		b = appendLenField(b, 2, item(o))
	}
	return kubeproto.Wrap(apiVersion, kind, b)
}

func appendLenField(b []byte, num int, v []byte) []byte {
	b = appendUvarint(b, uint64(num)<<3|2)
	b = appendUvarint(b, uint64(len(v)))
	return append(b, v...)
}

func appendUvarint(b []byte, v uint64) []byte {
	for v >= 0x80 {
		b = append(b, byte(v)|0x80)
		v >>= 7
	}
	return append(b, byte(v))
}

// storedCache holds encodings of a stored object computed on first use (the object is
// immutable, so they never change).
type storedCache struct {
	once     sync.Once
	listItem []byte // JSON without apiVersion and kind
	pbOnce   sync.Once
	pbMsg    []byte // protobuf message (no envelope)
	pbErr    error
	metaOnce sync.Once
	pbMeta   []byte // PartialObjectMetadata message
}

// listItem is the object's JSON as a list item of a built-in kind.
func (o *storedObj) listItem() []byte {
	o.cache.once.Do(func() {
		m := mustDecode(o.raw)
		delete(m, "apiVersion")
		delete(m, "kind")
		o.cache.listItem, _ = json.Marshal(m)
	})
	return o.cache.listItem
}

// protobufMessage is the object's protobuf message (no envelope); nil if it does not fit
// the schema (the object was stored with values of the wrong JSON type).
func (o *storedObj) protobufMessage(res *resource) []byte {
	o.cache.pbOnce.Do(func() {
		k, ok := kubeschema.ForKind(res.typ.Group, res.typ.Version, res.typ.Kind)
		if !ok {
			o.cache.pbErr = fmt.Errorf("no protobuf schema for %s", res.typ.Kind)
			return
		}
		o.cache.pbMsg, o.cache.pbErr = kubeproto.Encode(k.Type, mustDecode(o.raw))
	})
	return o.cache.pbMsg
}

// protobuf is the object in its protobuf envelope.
func (o *storedObj) protobuf(res *resource) []byte {
	return kubeproto.Wrap(res.typ.GroupVersion().String(), res.typ.Kind, o.protobufMessage(res))
}

// protobufMeta is the object's PartialObjectMetadata message.
func (o *storedObj) protobufMeta() []byte {
	o.cache.metaOnce.Do(func() {
		t := kubeschema.Lookup("io.k8s.apimachinery.pkg.apis.meta.v1.PartialObjectMetadata")
		m := mustDecode(o.raw)
		o.cache.pbMeta, _ = kubeproto.Encode(t, map[string]any{"metadata": m["metadata"]})
	})
	return o.cache.pbMeta
}
