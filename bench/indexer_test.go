package bench

// Indexer comparison: informerkit's indexer.Indexer[*corev1.ConfigMap] and client-go's
// cache.NewIndexer on the same objects, with the same two indexes (namespace, and the "app"
// label), driven through the same small interface so both pay one dynamic call per
// operation. Each side uses its own MetaNamespaceKeyFunc and namespace index function; the
// label index function is written the same way for both.

import (
	"fmt"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/cache"

	"github.com/informerkit/informerkit/indexer"
)

const (
	indexerN          = 100_000
	indexerNamespaces = 100  // 1000 objects per namespace
	indexerApps       = 1000 // 100 objects per "app" label value
	appLabel          = "app"
	appIndex          = "app"
)

// configMaps returns n ConfigMaps spread over indexerNamespaces namespaces and indexerApps
// label values; appShift moves every object to the next label value.
func configMaps(n, appShift int, rv string) []*corev1.ConfigMap {
	out := make([]*corev1.ConfigMap, n)
	for i := range out {
		out[i] = &corev1.ConfigMap{
			ObjectMeta: metav1.ObjectMeta{
				Namespace:       fmt.Sprint("ns-", i%indexerNamespaces),
				Name:            fmt.Sprint("cm-", i),
				ResourceVersion: rv,
				Labels:          map[string]string{appLabel: fmt.Sprint("app-", (i+appShift)%indexerApps)},
			},
			Data: map[string]string{"key": "value"},
		}
	}
	return out
}

type cmIndexer interface {
	Add(*corev1.ConfigMap) error
	Update(*corev1.ConfigMap) error
	Delete(*corev1.ConfigMap) error
	// ByIndex returns the number of objects found, so that neither side converts its result.
	ByIndex(index, value string) (int, error)
	Replace([]*corev1.ConfigMap) error
}

type indexerImpl struct {
	name string
	new  func() cmIndexer
}

var indexerImpls = []indexerImpl{
	{"informerkit", func() cmIndexer { return newOurIndexer() }},
	{"client-go", func() cmIndexer { return newTheirIndexer() }},
}

// ---- informerkit

type ourIndexer struct {
	ix indexer.Indexer[*corev1.ConfigMap]
}

func newOurIndexer() *ourIndexer {
	return &ourIndexer{indexer.New(indexer.MetaNamespaceKeyFunc[*corev1.ConfigMap], indexer.Indexers[*corev1.ConfigMap]{
		indexer.NamespaceIndex: indexer.MetaNamespaceIndexFunc[*corev1.ConfigMap],
		appIndex:               func(cm *corev1.ConfigMap) ([]string, error) { return []string{cm.Labels[appLabel]}, nil },
	})}
}

func (o *ourIndexer) Add(cm *corev1.ConfigMap) error    { return o.ix.Add(cm) }
func (o *ourIndexer) Update(cm *corev1.ConfigMap) error { return o.ix.Update(cm) }
func (o *ourIndexer) Delete(cm *corev1.ConfigMap) error { return o.ix.Delete(cm) }
func (o *ourIndexer) ByIndex(index, value string) (int, error) {
	objs, err := o.ix.ByIndex(index, value)
	return len(objs), err
}
func (o *ourIndexer) Replace(list []*corev1.ConfigMap) error { return o.ix.Replace(list, "1") }

// ---- client-go

type theirIndexer struct {
	ix cache.Indexer
	// prepared holds, per list (keyed by its first element), the []interface{} client-go's
	// Replace takes: a reflector builds that slice as it decodes, so converting is not part
	// of client-go's Replace cost. Built on first use, before the timed loop.
	prepared map[*corev1.ConfigMap][]interface{}
}

func newTheirIndexer() *theirIndexer {
	return &theirIndexer{ix: cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{
		cache.NamespaceIndex: cache.MetaNamespaceIndexFunc,
		appIndex: func(obj interface{}) ([]string, error) {
			return []string{obj.(*corev1.ConfigMap).Labels[appLabel]}, nil
		},
	}), prepared: map[*corev1.ConfigMap][]interface{}{}}
}

func (t *theirIndexer) Add(cm *corev1.ConfigMap) error    { return t.ix.Add(cm) }
func (t *theirIndexer) Update(cm *corev1.ConfigMap) error { return t.ix.Update(cm) }
func (t *theirIndexer) Delete(cm *corev1.ConfigMap) error { return t.ix.Delete(cm) }
func (t *theirIndexer) ByIndex(index, value string) (int, error) {
	objs, err := t.ix.ByIndex(index, value)
	return len(objs), err
}

// Replace hands client-go the prepared []interface{} (its Replace only reads the slice).
func (t *theirIndexer) Replace(list []*corev1.ConfigMap) error {
	return t.ix.Replace(t.prepare(list), "1")
}

func (t *theirIndexer) prepare(list []*corev1.ConfigMap) []interface{} {
	if len(list) == 0 {
		return nil
	}
	if p, ok := t.prepared[list[0]]; ok && len(p) == len(list) {
		return p
	}
	p := make([]interface{}, len(list))
	for i, cm := range list {
		p[i] = cm
	}
	t.prepared[list[0]] = p
	return p
}

// fill loads list without timing it.
func fill(b *testing.B, s cmIndexer, list []*corev1.ConfigMap) {
	b.Helper()
	if err := s.Replace(list); err != nil {
		b.Fatal(err)
	}
}

// BenchmarkIndexer: one operation per iteration on a store of indexerN objects.
//   - op=Add: adds fresh objects to a store that is refilled from empty every indexerN ops
//     (so on average it holds indexerN/2 objects).
//   - op=Update: replaces objects of a full store with new versions whose indexed values are
//     the same (the common case: spec or status changes).
//   - op=UpdateIndexChange: new versions whose "app" label changes every time.
//   - op=Delete: deletes from a full store, refilled every indexerN ops (untimed).
//   - op=ByIndex: returns the 100 objects of one "app" value, or the 1000 of one namespace.
//   - op=Replace: replaces the whole content with indexerN objects (one op = one Replace).
func BenchmarkIndexer(b *testing.B) {
	base := configMaps(indexerN, 0, "1")
	next := configMaps(indexerN, 0, "2")
	moved := configMaps(indexerN, 1, "3")
	apps := make([]string, indexerApps)
	for i := range apps {
		apps[i] = fmt.Sprint("app-", i)
	}
	namespaces := make([]string, indexerNamespaces)
	for i := range namespaces {
		namespaces[i] = fmt.Sprint("ns-", i)
	}
	n := fmt.Sprintf("n=%dk", indexerN/1000)

	for _, impl := range indexerImpls {
		b.Run("op=Add/"+n+"/impl="+impl.name, func(b *testing.B) {
			s := impl.new()
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				if i == indexerN {
					b.StopTimer()
					s, i = impl.new(), 0
					b.StartTimer()
				}
				if err := s.Add(base[i]); err != nil {
					b.Fatal(err)
				}
				i++
			}
		})
	}
	for _, impl := range indexerImpls {
		b.Run("op=Update/"+n+"/impl="+impl.name, func(b *testing.B) {
			s := impl.new()
			fill(b, s, base)
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				src := next
				if (i/indexerN)%2 == 1 {
					src = base
				}
				if err := s.Update(src[i%indexerN]); err != nil {
					b.Fatal(err)
				}
				i++
			}
		})
	}
	for _, impl := range indexerImpls {
		b.Run("op=UpdateIndexChange/"+n+"/impl="+impl.name, func(b *testing.B) {
			s := impl.new()
			fill(b, s, base)
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				src := moved
				if (i/indexerN)%2 == 1 {
					src = base
				}
				if err := s.Update(src[i%indexerN]); err != nil {
					b.Fatal(err)
				}
				i++
			}
		})
	}
	for _, impl := range indexerImpls {
		b.Run("op=Delete/"+n+"/impl="+impl.name, func(b *testing.B) {
			s := impl.new()
			fill(b, s, base)
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				if i == indexerN {
					b.StopTimer()
					fill(b, s, base)
					i = 0
					b.StartTimer()
				}
				if err := s.Delete(base[i]); err != nil {
					b.Fatal(err)
				}
				i++
			}
		})
	}
	for _, impl := range indexerImpls {
		b.Run("op=ByIndex/index=app/"+n+"/impl="+impl.name, func(b *testing.B) {
			s := impl.new()
			fill(b, s, base)
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				if got, err := s.ByIndex(appIndex, apps[i%indexerApps]); err != nil || got != indexerN/indexerApps {
					b.Fatal(got, err)
				}
				i++
			}
		})
	}
	for _, impl := range indexerImpls {
		b.Run("op=ByIndex/index=namespace/"+n+"/impl="+impl.name, func(b *testing.B) {
			s := impl.new()
			fill(b, s, base)
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				if got, err := s.ByIndex(cache.NamespaceIndex, namespaces[i%indexerNamespaces]); err != nil || got != indexerN/indexerNamespaces {
					b.Fatal(got, err)
				}
				i++
			}
		})
	}
	for _, impl := range indexerImpls {
		b.Run("op=Replace/"+n+"/impl="+impl.name, func(b *testing.B) {
			s := impl.new()
			if t, ok := s.(*theirIndexer); ok {
				t.prepare(next)
			}
			fill(b, s, base)
			b.ReportAllocs()
			for b.Loop() {
				if err := s.Replace(next); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
