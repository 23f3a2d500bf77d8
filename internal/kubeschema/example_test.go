package kubeschema_test

import (
	"fmt"

	"github.com/informerkit/informerkit/internal/kubeschema"
)

func Example() {
	k, _ := kubeschema.ForKind("apps", "v1", "Deployment")
	spec := k.Type.Field("spec").Type()
	replicas := spec.Field("replicas")
	fmt.Println(replicas, replicas.Number, replicas.Wire() == kubeschema.Varint, string(replicas.Default))

	containers := kubeschema.Lookup("io.k8s.api.core.v1.PodSpec").Field("containers")
	fmt.Println(containers.PatchStrategy, containers.PatchMergeKey, containers.ListType, containers.ListMapKeys)
	// Output:
	// replicas (int32) 1 true 1
	// merge name map [name]
}
