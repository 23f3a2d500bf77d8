package protodec_test

import (
	"fmt"
	"os"

	"github.com/informerkit/informerkit/internal/protodec"
)

func Example() {
	// The pod recorded from a kube-apiserver with Accept: application/vnd.kubernetes.protobuf.
	body, err := os.ReadFile("../jsondec/testdata/real/pod.pb")
	if err != nil {
		panic(err)
	}
	var pod struct {
		Metadata struct {
			Name string `json:"name"`
		} `json:"metadata"`
		Spec struct {
			NodeName string `json:"nodeName"`
		} `json:"spec"`
	}
	err = protodec.DecodeObject(protodec.NewDecoder(protodec.Options{}), body, &pod)
	fmt.Println(pod.Metadata.Name, pod.Spec.NodeName, err)
	// Output: svc-0000-j6m5skvmj6-zq27n ip-10-0-0-54.eu-west-1.compute.internal <nil>
}
