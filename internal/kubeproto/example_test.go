package kubeproto_test

import (
	"fmt"

	"github.com/informerkit/informerkit/internal/kubeproto"
)

func Example() {
	cm := map[string]any{
		"apiVersion": "v1", "kind": "ConfigMap",
		"metadata": map[string]any{"name": "settings", "namespace": "default"},
		"data":     map[string]any{"mode": "fast"},
	}
	b, err := kubeproto.EncodeObject(cm)
	if err != nil {
		panic(err)
	}
	env, _ := kubeproto.Unwrap(b)
	fmt.Printf("%q %s %s\n", b[:4], env.APIVersion, env.Kind)

	back, err := kubeproto.DecodeObject(b)
	if err != nil {
		panic(err)
	}
	fmt.Println(back["data"], back["metadata"].(map[string]any)["name"])
	// Output:
	// "k8s\x00" v1 ConfigMap
	// map[mode:fast] settings
}
