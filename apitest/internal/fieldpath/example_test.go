package fieldpath_test

import (
	"fmt"

	"github.com/informerkit/informerkit/apitest/internal/fieldpath"
)

func Example() {
	c := fieldpath.KeyOf(fieldpath.KeyField{Name: "name", Value: "nginx"})
	owned := fieldpath.NewSet(
		fieldpath.MakePath("spec", "replicas"),
		fieldpath.MakePath("spec", "template", "spec", "containers", c),
		fieldpath.MakePath("spec", "template", "spec", "containers", c, "image"),
	)
	fmt.Println(string(owned.FieldsV1()))
	changed := fieldpath.NewSet(fieldpath.MakePath("spec", "template", "spec", "containers", c, "image"))
	for _, p := range owned.Intersection(changed).Paths() {
		fmt.Println("conflict:", p)
	}
	// Output:
	// {"f:spec":{"f:replicas":{},"f:template":{"f:spec":{"f:containers":{"k:{\"name\":\"nginx\"}":{".":{},"f:image":{}}}}}}}
	// conflict: .spec.template.spec.containers[name="nginx"].image
}
