package explore

import (
	"errors"
	"fmt"
	"time"

	"github.com/informerkit/informerkit/apiclient"
	"github.com/informerkit/informerkit/apitest"
	"github.com/informerkit/informerkit/controller/controllertest"
)

// A Workload is what the users of the controller do, in order: changes on the server and
// waits between them. Before each step every event the controller has yet to see reaches
// it and everything it does in answer settles (on the fake clock, nothing waits); a Wait or
// Settle step lets time pass.
type Workload []Step

// A Step is one operation of a workload (Create, Update, Delete, Do, Wait, Settle, ...).
type Step struct {
	// Name says what the step does, in traces and reports.
	Name string
	// Do makes the change (nil for a wait).
	Do func(env *controllertest.Env) error
	// Wait is how long the step lets the fake clock run (a Wait step).
	Wait time.Duration
	// Settle makes the step wait until the run is quiet (a Settle step).
	Settle bool
}

// Create creates obj (a map or a struct that marshals to an object) in resource.
func Create(resource string, obj any) Step {
	name := "create " + resource
	if o, err := toObject(obj); err == nil {
		name += " " + objectName(o.Namespace(), o.Name())
	}
	return Step{Name: name, Do: func(env *controllertest.Env) error {
		_, err := env.Server.Create(resource, obj)
		return err
	}}
}

// Update changes the object resource namespace/name with fn (read, changed and written
// back at once: apitest.Server.Mutate); what says what changes ("scale to 3").
func Update(resource, namespace, name, what string, fn func(apitest.Object)) Step {
	return Step{Name: fmt.Sprintf("update %s %s: %s", resource, objectName(namespace, name), what), Do: func(env *controllertest.Env) error {
		_, err := env.Server.Mutate(resource, namespace, name, fn)
		return err
	}}
}

// Delete deletes the object resource namespace/name (background propagation).
func Delete(resource, namespace, name string) Step {
	return DeleteWith(resource, namespace, name, apiclient.DeleteOptions{})
}

// DeleteWith deletes the object resource namespace/name with a DELETE's options
// (propagation, preconditions, grace period).
func DeleteWith(resource, namespace, name string, opts apiclient.DeleteOptions) Step {
	what := ""
	if opts.PropagationPolicy != nil {
		what = " (" + string(*opts.PropagationPolicy) + ")"
	}
	return Step{Name: fmt.Sprintf("delete %s %s%s", resource, objectName(namespace, name), what), Do: func(env *controllertest.Env) error {
		return env.Server.DeleteWithOptions(resource, namespace, name, opts)
	}}
}

// SetNodeReady makes a simulated Node NotReady (ready false) or Ready again.
func SetNodeReady(node string, ready bool) Step {
	return Step{Name: fmt.Sprintf("node %s ready=%v", node, ready), Do: func(env *controllertest.Env) error {
		if env.Nodes == nil {
			return errors.New("explore: SetNodeReady without simulated nodes (Target.Env.Nodes)")
		}
		return env.Nodes.SetNodeReady(node, ready)
	}}
}

// Do is a step of your own: fn changes the server through env (its Server, Nodes).
func Do(name string, fn func(env *controllertest.Env) error) Step {
	return Step{Name: name, Do: fn}
}

// Wait lets d pass on the fake clock, the controller's events delivered as they come.
func Wait(d time.Duration) Step {
	return Step{Name: "wait " + d.String(), Wait: d}
}

// Settle waits until the run is quiet: no write but Leases and Events for
// Config.IdleWindow (and at most Config.MaxSettle, else the run fails for liveness).
func Settle() Step {
	return Step{Name: "settle", Settle: true}
}

func objectName(namespace, name string) string {
	if namespace == "" {
		return name
	}
	return namespace + "/" + name
}

func toObject(obj any) (apitest.Object, error) {
	if o, ok := obj.(apitest.Object); ok {
		return o, nil
	}
	if m, ok := obj.(map[string]any); ok {
		return apitest.Object(m), nil
	}
	return nil, errors.New("not a map")
}
