package reflector_test

import (
	"context"
	"fmt"
	"log/slog"
	"sort"
	"sync"

	"github.com/informerkit/informerkit/apiclient"
	"github.com/informerkit/informerkit/apitest"
	"github.com/informerkit/informerkit/indexer"
	"github.com/informerkit/informerkit/meta"
	"github.com/informerkit/informerkit/reflector"
)

// ConfigMap declares only the fields the example reads.
type ConfigMap struct {
	meta.TypeMeta
	meta.ObjectMeta `json:"metadata"`
	Data            map[string]string `json:"data,omitempty"`
}

// signalling is an indexer used as the reflector's Store, which also says when the first
// sync is in. (An informer puts a deltafifo here and learns this from the FIFO.)
type signalling struct {
	indexer.Indexer[*ConfigMap]
	once   sync.Once
	synced chan struct{}
}

func (s *signalling) Replace(list []*ConfigMap, resourceVersion string) error {
	err := s.Indexer.Replace(list, resourceVersion)
	s.once.Do(func() { close(s.synced) })
	return err
}

// A reflector keeping an indexer in step with the configmaps of an in-process API server.
func Example() {
	srv := apitest.NewServer()
	defer srv.Close()
	for _, name := range []string{"alpha", "beta"} {
		_, _ = srv.Create("configmaps", map[string]any{"metadata": map[string]any{"name": name, "namespace": "default"}})
	}
	client, err := apiclient.New(srv.Config())
	if err != nil {
		fmt.Println(err)
		return
	}
	defer client.Close()
	configMaps := apiclient.NewResource[*ConfigMap](client, meta.GroupVersionResource{Version: "v1", Resource: "configmaps"})

	store := &signalling{
		Indexer: indexer.New(indexer.MetaNamespaceKeyFunc[*ConfigMap], nil),
		synced:  make(chan struct{}),
	}
	r := reflector.New(configMaps, store, reflector.Options[*ConfigMap]{
		Logger: slog.New(slog.DiscardHandler),
	})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		r.Run(ctx)
	}()

	<-store.synced
	keys := store.ListKeys()
	sort.Strings(keys)
	fmt.Println(keys)

	cancel()
	<-done
	st := r.Stats()
	fmt.Printf("%s: %d list, by streaming list: %d, relists: %d\n", r.Name(), st.Lists, st.WatchListSyncs, st.Relists)
	// Output:
	// [default/alpha default/beta]
	// configmaps.v1: 1 list, by streaming list: 1, relists: 0
}

// mapStore is a minimal Store that implements IncrementalReplacer by updating in place: a
// relist never holds the old and the new content side by side.
type mapStore struct {
	mu   sync.Mutex
	objs map[string]*ConfigMap
	seen map[string]bool // keys added during the current replacement
	done chan string     // receives the resourceVersion of each finished replacement
}

func cmKey(o *ConfigMap) string { return o.Namespace + "/" + o.Name }

func (s *mapStore) Add(o *ConfigMap) error    { return s.put(o) }
func (s *mapStore) Update(o *ConfigMap) error { return s.put(o) }
func (s *mapStore) Resync() error             { return nil }

func (s *mapStore) Delete(o *ConfigMap) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.objs, cmKey(o))
	return nil
}

func (s *mapStore) put(o *ConfigMap) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.objs[cmKey(o)] = o
	return nil
}

// Replace is what the reflector would call if mapStore did not implement BeginReplace.
func (s *mapStore) Replace(list []*ConfigMap, rv string) error {
	r, _ := s.BeginReplace()
	for _, o := range list {
		_ = r.Add(o)
	}
	return r.Finish(rv)
}

func (s *mapStore) BeginReplace() (reflector.Replacement[*ConfigMap], error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.seen = map[string]bool{}
	return mapReplacement{s}, nil
}

type mapReplacement struct{ s *mapStore }

func (r mapReplacement) Add(o *ConfigMap) error {
	r.s.mu.Lock()
	defer r.s.mu.Unlock()
	r.s.seen[cmKey(o)] = true
	r.s.objs[cmKey(o)] = o // the old object becomes garbage right away
	return nil
}

func (r mapReplacement) Finish(rv string) error {
	r.s.mu.Lock()
	for k := range r.s.objs {
		if !r.s.seen[k] {
			delete(r.s.objs, k) // deleted while we were not watching
		}
	}
	r.s.seen = nil
	r.s.mu.Unlock()
	r.s.done <- rv
	return nil
}

func (r mapReplacement) Abort() {
	r.s.mu.Lock()
	r.s.seen = nil
	r.s.mu.Unlock()
}

// A Store that implements IncrementalReplacer receives lists item by item.
func ExampleIncrementalReplacer() {
	srv := apitest.NewServer()
	defer srv.Close()
	for _, name := range []string{"a", "b", "c"} {
		_, _ = srv.Create("configmaps", map[string]any{"metadata": map[string]any{"name": name, "namespace": "default"}})
	}
	client, err := apiclient.New(srv.Config())
	if err != nil {
		fmt.Println(err)
		return
	}
	defer client.Close()

	store := &mapStore{objs: map[string]*ConfigMap{}, done: make(chan string, 1)}
	configMaps := apiclient.NewResource[*ConfigMap](client, meta.GroupVersionResource{Version: "v1", Resource: "configmaps"})
	r := reflector.New(configMaps, store, reflector.Options[*ConfigMap]{
		WatchList: reflector.WatchListOff, // LIST pages (or streaming-list events) reach the store one by one either way
		Logger:    slog.New(slog.DiscardHandler),
	})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		r.Run(ctx)
	}()
	rv := <-store.done
	cancel()
	<-done

	store.mu.Lock()
	fmt.Println(len(store.objs), "objects; finished at the reflector's resourceVersion:", rv == r.LastSyncResourceVersion())
	store.mu.Unlock()
	// Output:
	// 3 objects; finished at the reflector's resourceVersion: true
}
