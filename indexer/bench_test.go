package indexer

import (
	"fmt"
	"testing"
)

// benchObjects returns n objects spread over 100 namespaces and 1000 "app" label values.
func benchObjects(n int) []*testObj {
	objs := make([]*testObj, n)
	for i := range objs {
		objs[i] = obj(fmt.Sprint("ns-", i%100), fmt.Sprint("obj-", i), fmt.Sprint("app-", i%1000))
	}
	return objs
}

func benchIndexer() Indexer[*testObj] { return newTestIndexer(nil) }

const benchN = 100_000

// BenchmarkAdd adds fresh objects; the store is refilled from empty every benchN operations.
func BenchmarkAdd(b *testing.B) {
	objs := benchObjects(benchN)
	ix := benchIndexer()
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		if i == benchN {
			b.StopTimer()
			ix, i = benchIndexer(), 0
			b.StartTimer()
		}
		_ = ix.Add(objs[i])
		i++
	}
}

// BenchmarkUpdate updates objects of a full store with new objects whose indexed values are
// unchanged (the common case: status or spec changes).
func BenchmarkUpdate(b *testing.B) {
	objs := benchObjects(benchN)
	next := benchObjects(benchN)
	ix := benchIndexer()
	_ = ix.Replace(objs, "1")
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		_ = ix.Update(next[i%benchN])
		i++
	}
}

// BenchmarkUpdateIndexChange updates objects so that their "app" value changes every time.
func BenchmarkUpdateIndexChange(b *testing.B) {
	objs := benchObjects(benchN)
	moved := make([]*testObj, benchN)
	for i, o := range objs {
		moved[i] = obj(o.ns, o.name, fmt.Sprint("app-", (i+1)%1000))
	}
	ix := benchIndexer()
	_ = ix.Replace(objs, "1")
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		if (i/benchN)%2 == 0 {
			_ = ix.Update(moved[i%benchN])
		} else {
			_ = ix.Update(objs[i%benchN])
		}
		i++
	}
}

// BenchmarkDelete deletes objects of a full store; it is refilled every benchN operations.
func BenchmarkDelete(b *testing.B) {
	objs := benchObjects(benchN)
	ix := benchIndexer()
	_ = ix.Replace(objs, "1")
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		if i == benchN {
			b.StopTimer()
			_ = ix.Replace(objs, "1")
			i = 0
			b.StartTimer()
		}
		_ = ix.Delete(objs[i])
		i++
	}
}

// BenchmarkByIndex looks up the 100 objects of one "app" value.
func BenchmarkByIndex(b *testing.B) {
	ix := benchIndexer()
	_ = ix.Replace(benchObjects(benchN), "1")
	values := make([]string, 1000)
	for i := range values {
		values[i] = fmt.Sprint("app-", i)
	}
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		if got, _ := ix.ByIndex("app", values[i%1000]); len(got) != 100 {
			b.Fatal(len(got))
		}
		i++
	}
}

// BenchmarkReplace replaces the content with benchN objects.
func BenchmarkReplace(b *testing.B) {
	objs := benchObjects(benchN)
	ix := benchIndexer()
	b.ReportAllocs()
	for b.Loop() {
		_ = ix.Replace(objs, "1")
	}
}
