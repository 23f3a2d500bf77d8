package mergeschema_test

import (
	"fmt"

	"github.com/informerkit/informerkit/apitest/internal/mergeschema"
	"github.com/informerkit/informerkit/internal/kubeschema"
)

func Example() {
	k, _ := kubeschema.ForKind("", "v1", "Pod")
	pod := mergeschema.ForKubeType(k.Type)
	spec, _ := pod.Field("spec")
	containers, _ := spec.Type.Field("containers")
	fmt.Println(containers.Type.Kind(), containers.Type.ListKeys(), containers.PatchStrategy, containers.PatchMergeKey)
	args, _ := containers.Type.Elem().Field("args")
	fmt.Println(args.Type.Kind(), "atomic:", args.Type.Atomic())
	// Output:
	// list [name] merge name
	// list atomic: true
}
