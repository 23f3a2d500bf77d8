// Package negotiation is apitest's content negotiation, as the kube-apiserver's: a
// response takes the first representation of the request's Accept header that the
// resource can give (JSON, YAML, or protobuf for the built-in kinds; watches have no
// YAML), transformed to a meta.k8s.io Table or PartialObjectMetadata(List) when the
// clause asks for one with as=...;g=meta.k8s.io;v=...; and a request body in JSON, YAML or
// protobuf becomes the JSON form (jsonobj), with the kube-apiserver's 400, 406 and 415.
//
// What the server writes in the negotiated representation (respond.go, watchenc.go) and
// the encodings of stored objects stay in apitest.
package negotiation

import (
	"net/http"
	"sort"
	"strconv"
	"strings"

	"github.com/informerkit/informerkit/apitest/internal/apierr"
	"github.com/informerkit/informerkit/internal/kubeproto"
	"github.com/informerkit/informerkit/meta"
)

// The media types apitest reads and writes.
const (
	MediaJSON     = "application/json"
	MediaYAML     = "application/yaml"
	MediaProtobuf = kubeproto.MediaType
	// MediaCBOR is served only with the kube-apiserver's CBORServingAndStorage gate on;
	// watch streams of it are MediaCBORSeq.
	MediaCBOR    = "application/cbor"
	MediaCBORSeq = "application/cbor-seq"
)

// Format is the media type of a representation.
type Format int

// The formats, one per media type.
const (
	JSON Format = iota
	YAML
	Protobuf
	CBOR
)

// Output is the negotiated representation of a response.
type Output struct {
	Format Format
	// As is "", "Table", "PartialObjectMetadata" or "PartialObjectMetadataList";
	// AsVersion is the meta.k8s.io version asked for ("v1" or "v1beta1").
	As, AsVersion string
}

// Plain reports a JSON response without transformation (the stored bytes as they are).
func (o Output) Plain() bool { return o.Format == JSON && o.As == "" }

// AsAPIVersion is the apiVersion of the transformed object ("meta.k8s.io/v1").
func (o Output) AsAPIVersion() string { return "meta.k8s.io/" + o.AsVersion }

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

// MediaTypes are the media types a resource reads and writes, in the server's order:
// protobuf for the built-in kinds only (builtin).
func MediaTypes(builtin bool) []string {
	if builtin {
		return []string{MediaJSON, MediaYAML, MediaProtobuf}
	}
	return []string{MediaJSON, MediaYAML}
}

// Negotiate picks the representation of the response to a request with the Accept header
// accept (the default, JSON, when it is empty) on a resource of a built-in kind or not,
// for a watch or not; or answers why none is acceptable (406).
func Negotiate(accept string, builtin, watch bool) (Output, *meta.Status) {
	return NegotiateCBOR(accept, builtin, watch, false)
}

// NegotiateCBOR is Negotiate on a server that serves application/cbor too (cbor: the
// CBORServingAndStorage gate), for built-in and custom resources alike, as kube-apiserver
// 1.37 does; a Table or PartialObjectMetadata is not served in CBOR here.
func NegotiateCBOR(accept string, builtin, watch, cbor bool) (Output, *meta.Status) {
	h := accept
	if strings.TrimSpace(h) == "" {
		return Output{}, nil
	}
	typeMatched := false
	for _, c := range parseAccept(h) {
		for i, mt := range []string{MediaJSON, MediaYAML, MediaProtobuf, MediaCBOR} {
			format := Format(i)
			if format == CBOR && !cbor {
				continue
			}
			typ, sub, _ := strings.Cut(mt, "/")
			if !(c.typ == "*" && c.sub == "*" || c.typ == typ && (c.sub == sub || c.sub == "*")) {
				continue
			}
			typeMatched = true
			if o, ok := acceptable(c, format, builtin, watch); ok {
				return o, nil
			}
		}
	}
	if !typeMatched {
		// No media type of the server at all: the kube-apiserver's router answers before
		// its handler, in its own words.
		types := MediaTypes(builtin)
		streams := []string{MediaJSON + ";stream=watch"}
		if builtin {
			streams = append(streams, MediaProtobuf+";stream=watch")
		}
		st := apierr.New(http.StatusNotAcceptable, meta.StatusReasonNotAcceptable,
			"406: Not Acceptable\n\nAvailable representations: "+strings.Join(append(types, streams...), ", "))
		st.Details = &meta.StatusDetails{}
		return Output{}, st
	}
	return Output{}, apierr.NotAcceptable(MediaTypes(builtin))
}

// acceptable applies a clause's parameters to one of the server's media types.
func acceptable(c acceptClause, format Format, builtin, watch bool) (Output, bool) {
	o := Output{Format: format}
	var g, v string
	hasConvert := false
	for k, val := range c.params {
		switch k {
		case "as":
			o.As, hasConvert = val, true
		case "g":
			g, hasConvert = val, true
		case "v":
			v, hasConvert = val, true
		case "stream":
			if val != "" && (val != "watch" || format == YAML) {
				return Output{}, false
			}
		}
	}
	if watch && format == YAML {
		return Output{}, false // YAML has no stream serializer
	}
	if format == CBOR && hasConvert {
		return Output{}, false
	}
	if !hasConvert {
		// Custom resources have no protobuf form of their own.
		return o, format != Protobuf || builtin
	}
	if g != "meta.k8s.io" || (v != "v1" && v != "v1beta1") {
		return Output{}, false
	}
	o.AsVersion = v
	switch o.As {
	case "Table":
		return o, format != Protobuf
	case "PartialObjectMetadata", "PartialObjectMetadataList":
		return o, true
	}
	return Output{}, false
}

// Discovery picks the form of a discovery document (/api, /apis) for the Accept header:
// the aggregated APIGroupDiscoveryList at version ("v2" or "v2beta1") in JSON or protobuf,
// as client-go asks first, or, with aggregated false, the legacy APIVersions or
// APIGroupList (plain JSON, or an Accept naming no aggregated form).
func Discovery(accept string) (version string, format Format, aggregated bool) {
	for _, c := range parseAccept(accept) {
		json := c.typ == "application" && c.sub == "json" || c.typ == "*"
		proto := c.typ == "application" && c.sub == "vnd.kubernetes.protobuf"
		if !json && !proto {
			continue
		}
		if c.params["g"] == "" && c.params["as"] == "" {
			return "", JSON, false // the legacy form is acceptable first
		}
		if c.params["g"] != "apidiscovery.k8s.io" || c.params["as"] != "APIGroupDiscoveryList" {
			continue
		}
		if v := c.params["v"]; v == "v2" || v == "v2beta1" {
			if proto {
				return v, Protobuf, true
			}
			return v, JSON, true
		}
	}
	return "", JSON, false
}
