package kubecbor_test

import (
	"fmt"

	"github.com/informerkit/informerkit/internal/kubecbor"
)

func ExampleUnmarshal() {
	data, _ := kubecbor.FromJSON(nil, []byte(`{"metadata":{"name":"a"},"spec":{"replicas":3}}`))
	var obj struct {
		Metadata struct {
			Name string `json:"name"`
		} `json:"metadata"`
		Spec struct {
			Replicas int `json:"replicas"`
		} `json:"spec"`
	}
	if err := kubecbor.Unmarshal(data, &obj); err != nil {
		fmt.Println(err)
		return
	}
	js, _ := kubecbor.ToJSON(nil, data)
	fmt.Println(obj.Metadata.Name, obj.Spec.Replicas, len(data), "bytes of CBOR")
	fmt.Println(string(js))
	// Output:
	// a 3 37 bytes of CBOR
	// {"metadata":{"name":"a"},"spec":{"replicas":3}}
}
