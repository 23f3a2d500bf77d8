package jsondec_test

import (
	"fmt"

	"github.com/informerkit/informerkit/internal/jsondec"
)

func Example() {
	// Declare what you read; everything else is checked and skipped.
	type pod struct {
		Metadata struct {
			Name string `json:"name"`
		} `json:"metadata"`
		Spec struct {
			NodeName string `json:"nodeName"`
		} `json:"spec"`
	}
	var p pod
	err := jsondec.Unmarshal([]byte(`{"kind":"Pod","metadata":{"name":"web-1","uid":"x"},"spec":{"containers":[],"nodeName":"n1"}}`), &p)
	fmt.Println(p.Metadata.Name, p.Spec.NodeName, err)

	err = jsondec.Unmarshal([]byte(`{"metadata":{"name":"web-1",}}`), &p)
	fmt.Println(err)
	// Output:
	// web-1 n1 <nil>
	// jsondec: invalid character '}' looking for beginning of object key string at offset 28
}
