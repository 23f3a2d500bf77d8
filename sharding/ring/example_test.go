package ring_test

import (
	"fmt"

	"github.com/informerkit/informerkit/sharding"
	"github.com/informerkit/informerkit/sharding/ring"
)

func ExampleAssign() {
	// Two replicas split 4 buckets; every replica computes the same split.
	a, err := ring.Assign([]string{"ctrl-a", "ctrl-b"}, 4)
	if err != nil {
		panic(err)
	}
	for _, m := range a.Members() {
		sel, _ := a.Selector(sharding.FieldUID, m)
		fmt.Printf("%s: %v\n", m, sel.Ranges)
	}
	fmt.Println("owner of hash 0:", a.Owner(0))
	// Output:
	// ctrl-a: [[0x8000000000000000, 0x10000000000000000)]
	// ctrl-b: [[0x0000000000000000, 0x8000000000000000)]
	// owner of hash 0: ctrl-b
}
