package labels_test

import (
	"fmt"
	"log"

	"github.com/informerkit/informerkit/labels"
)

// Label selectors as Kubernetes writes them.
func ExampleParse() {
	sel, err := labels.Parse("app in (web,api), tier!=cache, !canary")
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(sel)
	fmt.Println(sel.Matches(map[string]string{"app": "web", "tier": "front"}))
	fmt.Println(sel.Matches(map[string]string{"app": "web", "canary": "true"}))
	_, err = labels.Parse("app in web")
	fmt.Println(err)
	// Output:
	// app in (api,web),!canary,tier!=cache
	// true
	// false
	// unable to parse requirement: found 'web' expected: '('
}
