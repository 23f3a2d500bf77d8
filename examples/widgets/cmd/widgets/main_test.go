package main

import (
	"strings"
	"testing"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// -rbac prints the roles of what the controller declares, without a server.
func TestPrintRBAC(t *testing.T) {
	var out strings.Builder
	if err := run(true, &out); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"resources: [widgets/status]\n    verbs: [get, update, patch]",
		"resources: [pods]\n    verbs: [get, list, watch, create, update, patch, delete]",
		"kind: Role\nmetadata:\n  name: widgets\n  namespace: widgets-system"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("-rbac lacks %q:\n%s", want, out.String())
		}
	}
}
