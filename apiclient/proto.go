package apiclient

import (
	"encoding/json"
	"mime"
	"reflect"
	"strings"
	"sync"

	"github.com/informerkit/informerkit/internal/kubeschema"
	"github.com/informerkit/informerkit/meta"
)

// Protobuf negotiation. A Resource of a built-in kind (one the kubeschema table has) whose Go
// type is a struct asks for application/vnd.kubernetes.protobuf first and JSON second, as
// client-go's typed clients do; everything else asks for JSON. What is decoded follows the
// response's Content-Type, whatever was asked.

const (
	mediaJSON     = "application/json"
	mediaProtobuf = "application/vnd.kubernetes.protobuf"
	// acceptProtobuf is client-go's Accept header for built-in kinds.
	acceptProtobuf = mediaProtobuf + ", " + mediaJSON
)

// protoKind is a built-in kind with its object and list message types.
type protoKind struct {
	group, version, kind string
	obj, list            *kubeschema.Type
	apiVersion           string // "v1", "apps/v1"
	listKind             string // "PodList"
}

func newProtoKind(group, version, kind string, obj, list *kubeschema.Type) *protoKind {
	pk := &protoKind{group: group, version: version, kind: kind, obj: obj, list: list, apiVersion: version, listKind: kind + "List"}
	if group != "" {
		pk.apiVersion = group + "/" + version
	}
	return pk
}

// isProtobuf reports whether a Content-Type is the protobuf media type (any parameters,
// such as stream=watch).
func isProtobuf(contentType string) bool {
	if !strings.HasPrefix(contentType, mediaProtobuf) {
		return false
	}
	mt, _, err := mime.ParseMediaType(contentType)
	return err == nil && mt == mediaProtobuf
}

// protoKindFor returns the protobuf kind of a collection: by its kind when it is known
// (WithKind, discovery), otherwise by its resource name; nil when the table has none.
func protoKindFor(gvr meta.GroupVersionResource, kind string) *protoKind {
	if kind != "" {
		ki, ok := kubeschema.ForKind(gvr.Group, gvr.Version, kind)
		if !ok || ki.List == nil {
			return nil
		}
		return newProtoKind(gvr.Group, gvr.Version, kind, ki.Type, ki.List)
	}
	return resourceKinds()[gvr]
}

// resourceKinds maps the resources of the table's listable kinds to them, the resource
// named as the kube-apiserver names a kind's resource (TestResourceNamesOfBuiltinKinds
// checks it against package kinds' table taken from discovery).
var resourceKinds = sync.OnceValue(func() map[meta.GroupVersionResource]*protoKind {
	m := map[meta.GroupVersionResource]*protoKind{}
	ambiguous := map[meta.GroupVersionResource]bool{}
	for _, ki := range kubeschema.Kinds() {
		if ki.List == nil || ki.Group == "meta.k8s.io" {
			continue
		}
		gvr := meta.GroupVersionResource{Group: ki.Group, Version: ki.Version, Resource: resourceName(ki.Kind)}
		if m[gvr] != nil {
			ambiguous[gvr] = true
		}
		m[gvr] = newProtoKind(ki.Group, ki.Version, ki.Kind, ki.Type, ki.List)
	}
	for gvr := range ambiguous {
		delete(m, gvr)
	}
	return m
})

// resourceName is the resource of a built-in kind: its lower-case plural.
func resourceName(kind string) string {
	r := strings.ToLower(kind)
	switch {
	case r == "endpoints":
		return r
	case strings.HasSuffix(r, "s"):
		return r + "es"
	case strings.HasSuffix(r, "y") && !strings.HasSuffix(r, "ay") && !strings.HasSuffix(r, "ey"):
		return r[:len(r)-1] + "ies"
	}
	return r + "s"
}

var (
	unmarshalerType  = reflect.TypeFor[json.Unmarshaler]()
	unstructuredType = reflect.TypeFor[meta.Unstructured]()
)

// protobufType reports whether Go type t can be decoded from protobuf field by field: a
// struct, or a pointer to one, that does not decode its JSON itself (Unstructured does).
func protobufType(t reflect.Type) bool {
	if t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	return t.Kind() == reflect.Struct && t != unstructuredType &&
		!reflect.PointerTo(t).Implements(unmarshalerType)
}

// protoKind returns pk unless protobuf is off for the client or was refused for gvr.
func (c *Client) protoKind(gvr meta.GroupVersionResource, pk *protoKind) *protoKind {
	if pk == nil || c.noProtobuf {
		return nil
	}
	if _, refused := c.protoRefused.Load(gvr); refused {
		return nil
	}
	return pk
}

// refuseProtobuf records that the server refused protobuf for gvr with err, which it
// returns, logged once per resource.
func (c *Client) refuseProtobuf(gvr meta.GroupVersionResource, err error) error {
	if _, loaded := c.protoRefused.LoadOrStore(gvr, true); !loaded {
		c.logger.Info("apiclient: the server refused protobuf; reading the resource as JSON from now on",
			"resource", gvr.String(), "setting", "Config.DisableProtobuf", "err", err)
	}
	return err
}

// refusedMedia reports whether err is the server's refusal of the Accept header (406) or
// of the media type (415): the request is sent again with JSON.
func refusedMedia(err error) bool {
	st, ok := meta.AsStatus(err)
	return ok && (st.Code == 406 || st.Code == 415)
}
