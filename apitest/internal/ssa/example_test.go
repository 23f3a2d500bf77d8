package ssa_test

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/informerkit/informerkit/apitest/internal/mergeschema"
	"github.com/informerkit/informerkit/apitest/internal/ssa"
	"github.com/informerkit/informerkit/internal/kubeschema"
)

func Example() {
	k, _ := kubeschema.ForKind("", "v1", "ConfigMap")
	fm := &ssa.FieldManager{
		Schema: mergeschema.ForKubeType(k.Type), APIVersion: "v1", Kind: "ConfigMap",
		Empty: func() map[string]any { return map[string]any{"apiVersion": "v1", "kind": "ConfigMap"} },
		// A fixed clock: entries with the same time sort by manager.
		Now: func() time.Time { return time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC) },
	}
	config := func(s string) map[string]any {
		var m map[string]any
		json.Unmarshal([]byte(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"app"},"data":`+s+`}`), &m)
		return m
	}
	live, _, _ := fm.Apply(nil, config(`{"replicas":"3","mode":"fast"}`), "deployer", false)
	_, _, err := fm.Apply(live, config(`{"replicas":"5"}`), "autoscaler", false)
	fmt.Println(err)
	live, _, _ = fm.Apply(live, config(`{"replicas":"5"}`), "autoscaler", true)
	for _, e := range live["metadata"].(map[string]any)["managedFields"].([]any) {
		m := e.(map[string]any)
		fmt.Println(m["manager"], m["operation"], string(m["fieldsV1"].(json.RawMessage)))
	}
	// Output:
	// Apply failed with 1 conflict: conflict with "deployer": .data.replicas
	// autoscaler Apply {"f:data":{"f:replicas":{}}}
	// deployer Apply {"f:data":{"f:mode":{}}}
}
