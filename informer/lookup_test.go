package informer

import (
	"testing"

	"github.com/informerkit/informerkit/meta"
)

func TestFactoryLookup(t *testing.T) {
	f := NewFactoryWithOptions(newClient(t, newServer(t)), FactoryOptions{Namespace: "team"})
	if _, ok := Lookup[*ConfigMap](f, cmGVR); ok {
		t.Fatal("Lookup found an informer For never created")
	}
	inf := InformerFor[*ConfigMap](f, cmGVR)
	if got, ok := Lookup[*ConfigMap](f, cmGVR); !ok || got != inf {
		t.Fatal("Lookup did not find For's informer")
	}
	if _, ok := Lookup[*meta.Unstructured](f, cmGVR); ok {
		t.Fatal("Lookup found an informer of another type")
	}
	if f.Namespace() != "team" {
		t.Fatal("Namespace")
	}
}
