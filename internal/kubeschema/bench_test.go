package kubeschema

import "testing"

// BenchmarkLoad measures the first use of the table: the head of schema.json decoded and
// its type blocks indexed (bench/README.md, "kubeschema").
func BenchmarkLoad(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		if _, err := parse(schemaJSON); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkDecodePodTypes measures the decoding of the types a Pod holds (137 of the
// table's types), as the first encoding or decoding of a Pod does.
func BenchmarkDecodePodTypes(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		t, err := parse(schemaJSON)
		if err != nil {
			b.Fatal(err)
		}
		seen := map[*Type]bool{}
		var walk func(ty *Type)
		walk = func(ty *Type) {
			if ty == nil || seen[ty] {
				return
			}
			seen[ty] = true
			for _, f := range ty.Fields {
				if f.Kind == Message {
					walk(t.lookup(f.TypeName))
				}
			}
		}
		walk(t.lookup("io.k8s.api.core.v1.Pod"))
	}
}

// BenchmarkDecodeAll measures the decoding of the whole table.
func BenchmarkDecodeAll(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		t, err := parse(schemaJSON)
		if err != nil {
			b.Fatal(err)
		}
		t.all()
	}
}
