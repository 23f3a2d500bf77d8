package kubecbor

import (
	"sync"

	"github.com/informerkit/informerkit/internal/jsondec"
)

var bufPool = sync.Pool{New: func() any { return new([]byte) }}

// Unmarshal decodes the CBOR data item data into v as jsondec.Unmarshal decodes its JSON
// text: the same Go types, json tags and errors (a *SyntaxError for bad CBOR).
func Unmarshal(data []byte, v any) error {
	return UnmarshalWith(nil, data, v)
}

// UnmarshalWith is Unmarshal through dec (its options and scratch space); a nil dec decodes
// as jsondec.Unmarshal does.
func UnmarshalWith(dec *jsondec.Decoder, data []byte, v any) error {
	bp := bufPool.Get().(*[]byte)
	defer bufPool.Put(bp)
	js, err := ToJSON((*bp)[:0], data)
	if cap(js) <= 1<<20 {
		*bp = js[:0]
	}
	if err != nil {
		return err
	}
	if dec == nil {
		return jsondec.Unmarshal(js, v)
	}
	return dec.Unmarshal(js, v)
}
