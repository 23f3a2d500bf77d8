package indexer_test

import (
	"fmt"
	"sort"

	"github.com/informerkit/informerkit/indexer"
)

// Pod is a minimal object: anything with GetNamespace and GetName works with the helpers.
type Pod struct {
	Namespace, Name, Node string
}

func (p *Pod) GetNamespace() string { return p.Namespace }
func (p *Pod) GetName() string      { return p.Name }

func ExampleNew() {
	pods := indexer.New(indexer.MetaNamespaceKeyFunc[*Pod], indexer.Indexers[*Pod]{
		indexer.NamespaceIndex: indexer.MetaNamespaceIndexFunc[*Pod],
		"node":                 func(p *Pod) ([]string, error) { return []string{p.Node}, nil },
	})
	_ = pods.Add(&Pod{Namespace: "default", Name: "web-1", Node: "n1"})
	_ = pods.Add(&Pod{Namespace: "default", Name: "web-2", Node: "n2"})
	_ = pods.Add(&Pod{Namespace: "kube-system", Name: "dns", Node: "n1"})

	onN1, _ := pods.IndexKeys("node", "n1")
	sort.Strings(onN1)
	fmt.Println("on n1:", onN1)

	inDefault, _ := pods.ByIndex(indexer.NamespaceIndex, "default")
	fmt.Println("in default:", len(inDefault))

	p, ok, _ := pods.GetByKey("kube-system/dns")
	fmt.Println(p.Name, ok)
	// Output:
	// on n1: [default/web-1 kube-system/dns]
	// in default: 2
	// dns true
}

func ExampleIndexer_AddIndexers() {
	pods := indexer.New(indexer.MetaNamespaceKeyFunc[*Pod], nil)
	_ = pods.Add(&Pod{Namespace: "a", Name: "x", Node: "n1"})

	// Existing objects are indexed by the new index right away.
	_ = pods.AddIndexers(indexer.Indexers[*Pod]{
		"node": func(p *Pod) ([]string, error) { return []string{p.Node}, nil },
	})
	fmt.Println(pods.ListIndexFuncValues("node"))

	// A name can be registered only once.
	err := pods.AddIndexers(indexer.Indexers[*Pod]{
		"node": func(p *Pod) ([]string, error) { return nil, nil },
	})
	fmt.Println(err)
	// Output:
	// [n1]
	// indexer: index already registered: "node"
}

func ExampleIndexError() {
	pods := indexer.New(indexer.MetaNamespaceKeyFunc[*Pod], indexer.Indexers[*Pod]{
		"node": func(p *Pod) ([]string, error) {
			if p.Node == "" {
				return nil, fmt.Errorf("pod is not scheduled")
			}
			return []string{p.Node}, nil
		},
	})
	// client-go would panic here; informerkit returns an error and stores nothing.
	err := pods.Add(&Pod{Namespace: "a", Name: "pending"})
	fmt.Println(err)
	fmt.Println(pods.Len())
	// Output:
	// indexer: index function "node" failed for key "a/pending": pod is not scheduled
	// 0
}

func ExampleSplitMetaNamespaceKey() {
	ns, name, _ := indexer.SplitMetaNamespaceKey("default/web")
	fmt.Printf("%q %q\n", ns, name)
	ns, name, _ = indexer.SplitMetaNamespaceKey("node-1")
	fmt.Printf("%q %q\n", ns, name)
	// Output:
	// "default" "web"
	// "" "node-1"
}
