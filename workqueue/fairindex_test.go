package workqueue

import (
	"encoding/binary"
	"testing"
)

// FuzzNamespaceHash: the one-pass namespace hash of a key is the hash of the namespace
// namespaceOf finds, for keys with the slash at every offset of a word, none or several;
// and the tenant index (against a map, the reference) gives two keys one tenant exactly
// when their namespaces are equal, before and after the index is rebuilt.
func FuzzNamespaceHash(f *testing.F) {
	keys := []string{"", "/", "a/b", "name", "namespace-1/object-2", "12345678/x", "1234567/x",
		"123456789/x", "abcdefghijklmnop/q/r", "abcdefghijklmnopq", "abcdefghijklmnopqrstuvwxy/z", "abcdefghijklmno/p", "/leading", "trailing/", "ns//x",
		"abcdefghijklmnop-1/x", "abcdefghijklmnop-2/x", "abcdefghijklmnop\x00/x"}
	for i, k := range keys {
		f.Add(k, keys[(i+1)%len(keys)])
	}
	f.Fuzz(func(t *testing.T, key, other string) {
		ti := newTenantIndex()
		n, h, w := ti.namespaceHash(key)
		ns := namespaceOf(key)
		if n != len(ns) || key[:n] != ns {
			t.Fatalf("%q: namespace of %d bytes, want %q", key, n, ns)
		}
		if wantH, wantW := ti.hash(ns); h != wantH || w != wantW {
			t.Fatalf("%q: hash %08x words %x, of %q %08x %x", key, h, w, ns, wantH, wantW)
		}
		var b [16]byte
		copy(b[:], ns)
		if w != (nameWords{binary.LittleEndian.Uint64(b[:8]), binary.LittleEndian.Uint64(b[8:])}) {
			t.Fatalf("%q: words %x are not the first 16 bytes of %q", key, w, ns)
		}

		fs := newFairState[string](FairByNamespace())
		ids := map[string]uint32{}
		lookup := func(k string) {
			n, h, w := fs.index.namespaceHash(k)
			id := fs.lookupHashed(k[:n], h, w)
			if fs.tenants[id].name != namespaceOf(k) {
				t.Fatalf("%q: tenant %d is named %q", k, id, fs.tenants[id].name)
			}
			if want, ok := ids[namespaceOf(k)]; ok && id != want {
				t.Fatalf("%q: tenant %d, want %d (of %q)", k, id, want, namespaceOf(k))
			}
			for name, other := range ids {
				if other == id && name != namespaceOf(k) {
					t.Fatalf("%q: tenant %d is %q's too", k, id, name)
				}
			}
			ids[namespaceOf(k)] = id
		}
		for range 2 {
			lookup(key)
			lookup(other)
			lookup(other + "/" + key)
			fs.rebuildIndex()
		}
	})
}
