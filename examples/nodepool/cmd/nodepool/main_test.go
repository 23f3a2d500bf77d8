package main

import (
	"strings"
	"testing"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// -rbac prints the roles of what the controller and its Manager use, without a server:
// the pool's status, the Nodes it patches and the Pods it deletes, Events, and the Lease
// with watch (a standby's).
func TestPrintRBAC(t *testing.T) {
	var out strings.Builder
	if err := run(true, &out); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"resources: [nodepools/status]\n    verbs: [get, update, patch]",
		"resources: [nodes]\n    verbs: [get, list, watch, patch]",
		"resources: [pods]\n    verbs: [get, list, watch, delete]",
		"resources: [events]\n    verbs: [create, patch]",
		"kind: Role\nmetadata:\n  name: nodepool\n  namespace: nodepool-system",
		"resources: [leases]\n    verbs: [get, watch, create, update]",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("-rbac lacks %q:\n%s", want, out.String())
		}
	}
}
