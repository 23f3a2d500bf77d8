package informer

import (
	"testing"

	"github.com/informerkit/informerkit/internal/testobj"
	"github.com/informerkit/informerkit/meta"
)

func TestFactoryLookup(t *testing.T) {
	f := NewFactoryWithOptions(newClient(t, newServer(t)), FactoryOptions{Namespace: "team"})
	if _, ok := Lookup[*testobj.ConfigMap](f, testobj.ConfigMapGVR); ok {
		t.Fatal("Lookup found an informer For never created")
	}
	inf := InformerFor[*testobj.ConfigMap](f, testobj.ConfigMapGVR)
	if got, ok := Lookup[*testobj.ConfigMap](f, testobj.ConfigMapGVR); !ok || got != inf {
		t.Fatal("Lookup did not find For's informer")
	}
	if _, ok := Lookup[*meta.Unstructured](f, testobj.ConfigMapGVR); ok {
		t.Fatal("Lookup found an informer of another type")
	}
	if f.Namespace() != "team" {
		t.Fatal("Namespace")
	}
}
