package conditions_test

import (
	"fmt"

	"github.com/informerkit/informerkit/conditions"
)

// WidgetStatus is the status of a custom resource.
type WidgetStatus struct {
	ObservedGeneration int64                  `json:"observedGeneration,omitempty"`
	Conditions         []conditions.Condition `json:"conditions,omitempty"`
}

func Example() {
	var status WidgetStatus
	changed := conditions.Set(&status.Conditions, conditions.Condition{
		Type: "Ready", Status: conditions.False, Reason: "Provisioning", ObservedGeneration: 1,
	})
	fmt.Println("changed:", changed, "ready:", conditions.IsTrue(status.Conditions, "Ready"))

	// The same condition again changes nothing: no status write is needed.
	changed = conditions.Set(&status.Conditions, conditions.Condition{
		Type: "Ready", Status: conditions.False, Reason: "Provisioning", ObservedGeneration: 1,
	})
	fmt.Println("changed:", changed)

	conditions.Set(&status.Conditions, conditions.Condition{
		Type: "Ready", Status: conditions.True, Reason: "Provisioned", ObservedGeneration: 1,
	})
	fmt.Println("ready:", conditions.IsTrue(status.Conditions, "Ready"), conditions.Find(status.Conditions, "Ready").Reason)
	// Output:
	// changed: true ready: false
	// changed: false
	// ready: true Provisioned
}
