package apitest

import (
	"bytes"
	"strings"
	"testing"

	"github.com/informerkit/informerkit/internal/kubeproto"
	"github.com/informerkit/informerkit/internal/kubeschema"
	"github.com/informerkit/informerkit/meta"
)

// wholeProtobufList is the list body built whole, as apitest did before it streamed lists:
// the reference writeProtobufList's bytes must equal.
func wholeProtobufList(apiVersion, kind string, lm meta.ListMeta, items []*storedObj, item func(*storedObj) []byte) []byte {
	lmMap, _ := toMap(lm)
	lmb, err := kubeproto.Encode(kubeschema.Lookup("io.k8s.apimachinery.pkg.apis.meta.v1.ListMeta"), lmMap)
	if err != nil {
		lmb = nil
	}
	b := appendLenField(nil, 1, lmb)
	for _, o := range items {
		b = appendLenField(b, 2, item(o))
	}
	return kubeproto.Wrap(apiVersion, kind, b)
}

// TestWriteProtobufListIsWrapOfTheWholeList checks that the streamed list body is byte for
// byte the envelope of the whole list, for no items, an item with no encoding, and items and
// lists long enough for multi-byte length prefixes.
func TestWriteProtobufListIsWrapOfTheWholeList(t *testing.T) {
	enc := map[*storedObj][]byte{}
	var items []*storedObj
	for _, n := range []int{0, 1, 127, 128, 300, 16383, 16384, 70000} {
		o := &storedObj{}
		if n > 0 {
			enc[o] = []byte(strings.Repeat(string(rune('a'+n%26)), n))
		}
		items = append(items, o)
	}
	item := func(o *storedObj) []byte { return enc[o] }
	for _, tc := range []struct {
		name  string
		lm    meta.ListMeta
		items []*storedObj
	}{
		{"empty", meta.ListMeta{ResourceVersion: "7"}, nil},
		{"one", meta.ListMeta{ResourceVersion: "8", Continue: "abc"}, items[2:3]},
		{"all", meta.ListMeta{ResourceVersion: "123456"}, items},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var got bytes.Buffer
			writeProtobufList(&got, "v1", "PodList", tc.lm, tc.items, item)
			want := wholeProtobufList("v1", "PodList", tc.lm, tc.items, item)
			if !bytes.Equal(got.Bytes(), want) {
				t.Fatalf("streamed list: %d bytes, differs from the whole list's %d bytes", got.Len(), len(want))
			}
		})
	}
}
