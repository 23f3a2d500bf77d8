package smp_test

import (
	"encoding/json"
	"fmt"

	"github.com/informerkit/informerkit/apitest/internal/mergeschema"
	"github.com/informerkit/informerkit/apitest/internal/smp"
	"github.com/informerkit/informerkit/internal/kubeschema"
)

func Example() {
	k, _ := kubeschema.ForKind("", "v1", "Pod")
	pod := mergeschema.ForKubeType(k.Type)
	var live, patch map[string]any
	json.Unmarshal([]byte(`{"spec":{"containers":[{"name":"app","image":"app:1"},{"name":"proxy","image":"envoy:1"}]}}`), &live)
	// What `kubectl set image pod/p app=app:2` sends.
	json.Unmarshal([]byte(`{"spec":{"$setElementOrder/containers":[{"name":"app"},{"name":"proxy"}],"containers":[{"image":"app:2","name":"app"}]}}`), &patch)
	out, err := smp.Apply(live, patch, pod)
	b, _ := json.Marshal(out)
	fmt.Println(string(b), err)
	// Output:
	// {"spec":{"containers":[{"image":"app:2","name":"app"},{"image":"envoy:1","name":"proxy"}]}} <nil>
}
