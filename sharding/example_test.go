package sharding_test

import (
	"fmt"

	"github.com/informerkit/informerkit/sharding"
)

func Example() {
	// The upper half of the hash space, by uid: what a replica of two would watch.
	sel := sharding.NewSelector(sharding.FieldUID, sharding.Range{Start: 1 << 63})
	fmt.Println(sel)

	parsed, err := sharding.Parse("shardRange(object.metadata.uid, '0x0000000000000000', '0x8000000000000000')")
	if err != nil {
		panic(err)
	}
	uid := "6f1c1f0e-7a52-4c5e-8a4b-0c2b9f0e5d11"
	fmt.Printf("hash %#016x: lower half %v, upper half %v\n", sharding.Hash(uid), parsed.Matches(uid), sel.Matches(uid))
	// Output:
	// shardRange(object.metadata.uid, '0x8000000000000000', '0x10000000000000000')
	// hash 0xbb52a44a58ae44ae: lower half false, upper half true
}
