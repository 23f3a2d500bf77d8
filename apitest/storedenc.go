package apitest

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"sync"

	"github.com/informerkit/informerkit/internal/kubeproto"
	"github.com/informerkit/informerkit/internal/kubeschema"
	"github.com/informerkit/informerkit/meta"
)

// The other encodings of a stored object (list item JSON, protobuf message and envelope,
// PartialObjectMetadata), made on first use and cached: the object is immutable.

// writeProtobufList writes a list message (ListMeta = 1, items = 2) in its envelope, item by
// item: the envelope's length prefix is computed from the items' cached encodings first, so
// that a large list is never built whole in memory (the kube-apiserver, v1.33 on, streams
// protobuf lists too). The bytes are those of kubeproto.Wrap over the whole message. A write error
// (the client went away) cannot be answered: the status line is sent.
func writeProtobufList(w io.Writer, apiVersion, kind string, lm meta.ListMeta, items []*storedObj, item func(*storedObj) []byte) {
	lmt := kubeschema.Lookup("io.k8s.apimachinery.pkg.apis.meta.v1.ListMeta")
	lmMap, _ := toMap(lm)
	meta, err := kubeproto.Encode(lmt, lmMap)
	if err != nil {
		meta = nil
	}
	n := lenField(1, len(meta))
	for _, o := range items {
		n += lenField(2, len(item(o)))
	}
	// The envelope without its raw field is the magic and type meta (head), then the two
	// empty fields after raw (tail): raw goes between them.
	env := kubeproto.Wrap(apiVersion, kind, nil)
	head, tail := env[:len(env)-envelopeTail], env[len(env)-envelopeTail:]
	bw := bufio.NewWriterSize(w, 64<<10)
	bw.Write(head)
	bw.Write(appendUvarint(appendUvarint(nil, 2<<3|2), uint64(n)))
	bw.Write(appendLenField(nil, 1, meta))
	var b []byte
	for _, o := range items {
		v := item(o)
		b = appendUvarint(appendUvarint(b[:0], 2<<3|2), uint64(len(v)))
		bw.Write(b)
		bw.Write(v)
	}
	bw.Write(tail)
	bw.Flush()
}

// envelopeTail is the length of what kubeproto.Wrap writes after the raw field:
// contentEncoding (3) and contentType (4), both empty (a tag and a zero length each).
const envelopeTail = 4

// lenField is the length of a length-delimited field num holding n bytes.
func lenField(num, n int) int {
	return uvarintLen(uint64(num)<<3|2) + uvarintLen(uint64(n)) + n
}

func uvarintLen(v uint64) int {
	n := 1
	for v >= 0x80 {
		v >>= 7
		n++
	}
	return n
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
