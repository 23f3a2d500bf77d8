package apitest

import (
	"encoding/json"
	"fmt"
	"sync"

	"github.com/informerkit/informerkit/internal/kubeproto"
	"github.com/informerkit/informerkit/internal/kubeschema"
	"github.com/informerkit/informerkit/meta"
)

// The other encodings of a stored object (list item JSON, protobuf message and envelope,
// PartialObjectMetadata), made on first use and cached: the object is immutable.

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
