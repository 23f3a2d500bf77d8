package celrules_test

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/informerkit/informerkit/apitest/internal/celrules"
)

func Example() {
	var schema, obj map[string]any
	json.Unmarshal([]byte(`{"type":"object","properties":{"spec":{"type":"object",
		"properties":{"replicas":{"type":"integer"},"max":{"type":"integer"}},
		"x-kubernetes-validations":[{"rule":"self.replicas <= self.max","message":"replicas above max"}]}}}`), &schema)
	json.Unmarshal([]byte(`{"spec":{"replicas":5,"max":3}}`), &obj)

	fmt.Println(len(celrules.Check(schema, "spec.versions[0].schema", false)), "CRD errors")
	errs, _ := celrules.New(schema).Validate(context.Background(), obj, nil)
	for _, e := range errs {
		fmt.Printf("%s: %s\n", e.Field, e.Message)
	}
	// Output:
	// 0 CRD errors
	// spec: Invalid value: replicas above max
}
