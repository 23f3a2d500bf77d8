package jsondec

import (
	"reflect"
	"unsafe"
)

// Field is a JSON member of a struct type by encoding/json's rules: its name and the index
// path of the Go field (through embedded structs, possibly through embedded pointers).
type Field struct {
	Name  string
	Index []int
	// Quoted: the field has the ",string" option.
	Quoted bool
}

// LookupField returns the member of struct type t that a JSON object member named name
// decodes into, as this package (and encoding/json) matches names: exactly, or else
// case-insensitively. Other decoders of Kubernetes objects (protobuf) use it to find the
// same Go fields the JSON would fill.
func LookupField(t reflect.Type, name string) (Field, bool) {
	infos := cachedFields(t)
	for _, f := range infos {
		if f.name == name {
			return Field{Name: f.name, Index: f.index, Quoted: f.quoted}, true
		}
	}
	folded := string(foldName(nil, []byte(name)))
	for _, f := range infos {
		if string(foldName(nil, []byte(f.name))) == folded {
			return Field{Name: f.name, Index: f.index, Quoted: f.quoted}, true
		}
	}
	return Field{}, false
}

var fieldsCache = map[reflect.Type][]fieldInfo{}

func cachedFields(t reflect.Type) []fieldInfo {
	compileMu.Lock()
	defer compileMu.Unlock()
	if f, ok := fieldsCache[t]; ok {
		return f
	}
	f := typeFields(t)
	fieldsCache[t] = f
	return f
}

// Into decodes JSON values into Go values of one type, as struct fields of that type are
// decoded: the way other decoders hand a value they do not decode themselves (a timestamp, a
// quantity) to the type's own JSON rules.
type Into struct{ c *codec }

// IntoFor returns the Into of Go type t (compiled once; keep it).
func IntoFor(t reflect.Type) Into { return Into{locationCodecFor(t)} }

// Decode decodes the JSON value data (the whole of it) into the value of type t at p.
func (in Into) Decode(dec *Decoder, data []byte, p unsafe.Pointer) error {
	c := in.c
	d := &dec.st
	d.reset(data, 0)
	if _, err := d.ws(); err != nil {
		return err
	}
	if err := c.dec(d, p); err != nil {
		return err
	}
	err := d.finish()
	d.data = nil
	return err
}

func locationCodecFor(t reflect.Type) *codec {
	m := modeKind
	if t.Kind() != reflect.Pointer && t.Kind() != reflect.Interface && t.Name() != "" && hasPointerMethods(t) {
		m = modeViaPointer
	}
	if c, ok := codecs.Load(codecKey{t, m}); ok {
		return c.(*codec)
	}
	compileMu.Lock()
	defer compileMu.Unlock()
	b := &builder{local: map[codecKey]*codec{}}
	c := b.location(t)
	for k, v := range b.local {
		codecs.Store(k, v)
	}
	return c
}
