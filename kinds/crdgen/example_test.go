package crdgen_test

import (
	"fmt"

	"github.com/informerkit/informerkit/kinds/crdgen"
)

// Generate reads the packages of a go list pattern and returns one CRD per kind.
func ExampleGenerate() {
	res, err := crdgen.Generate([]string{"./testdata/api/..."}, crdgen.Options{})
	if err != nil {
		panic(err)
	}
	for _, crd := range res.CRDs {
		var versions []string
		for _, v := range crd.Spec.Versions {
			versions = append(versions, v.Name)
		}
		fmt.Println(crd.Metadata.Name, crd.Spec.Scope, versions)
	}
	// Output:
	// gadgets.test.informerkit.io Cluster [v1 v2]
	// policies.test.informerkit.io Namespaced [v2]
	// widgets.test.informerkit.io Namespaced [v2]
}
