package expectations_test

import (
	"fmt"

	"github.com/informerkit/informerkit/controller/expectations"
)

// The pattern of the seed's ReplicaSet controller: expect before writing, observe in the
// child informer's handlers, and trust the cache only once satisfied.
func Example() {
	exp := expectations.NewUIDTracking[string](expectations.Options{})
	const owner = "default/web"

	// Reconcile: the cache shows 1 child, 3 are wanted: expect 2 creations, then create.
	if exp.SatisfiedExpectations(owner) {
		exp.ExpectCreations(owner, 2)
	}
	// A reconcile before the informer has seen the new children must not count them.
	fmt.Println("satisfied before the events:", exp.SatisfiedExpectations(owner))

	// The child informer's add handler (controller.OwnedOptions.Expectations does this).
	exp.CreationObserved(owner)
	exp.CreationObserved(owner)
	fmt.Println("satisfied after two adds:", exp.SatisfiedExpectations(owner))

	// Scale down: expect the deletion of the chosen children by uid.
	exp.ExpectDeletions(owner, []string{"uid-1"})
	exp.DeletionObserved(owner, "uid-1") // graceful deletion: deletionTimestamp set
	exp.DeletionObserved(owner, "uid-1") // the delete event: not counted again
	p, _ := exp.Get(owner)
	fmt.Println("deletions pending:", p.Del, "satisfied:", exp.SatisfiedExpectations(owner))
	// Output:
	// satisfied before the events: false
	// satisfied after two adds: true
	// deletions pending: 0 satisfied: true
}
