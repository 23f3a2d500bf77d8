package patchgen_test

import (
	"encoding/json"
	"fmt"

	"github.com/informerkit/informerkit/internal/kubeschema"
	"github.com/informerkit/informerkit/internal/patchgen"
)

// A strategic merge patch names the changed container by its merge key and keeps the
// order; a merge patch would send the whole list.
func ExampleStrategic() {
	var from, to map[string]any
	_ = json.Unmarshal([]byte(`{"spec":{"containers":[{"name":"app","image":"app:1"},{"name":"log","image":"log:1"}]}}`), &from)
	_ = json.Unmarshal([]byte(`{"spec":{"containers":[{"name":"app","image":"app:2"},{"name":"log","image":"log:1"}]}}`), &to)
	pod, _ := kubeschema.ForKind("", "v1", "Pod")
	smp, _ := patchgen.Strategic(from, to, pod.Type)
	b, _ := json.Marshal(smp)
	fmt.Println(string(b))
	b, _ = json.Marshal(patchgen.Merge(from, to))
	fmt.Println(string(b))
	b, _ = json.Marshal(patchgen.JSON(from, to))
	fmt.Println(string(b))
	// Output:
	// {"spec":{"$setElementOrder/containers":[{"name":"app"},{"name":"log"}],"containers":[{"image":"app:2","name":"app"}]}}
	// {"spec":{"containers":[{"image":"app:2","name":"app"},{"image":"log:1","name":"log"}]}}
	// [{"op":"replace","path":"/spec/containers/0/image","value":"app:2"}]
}
