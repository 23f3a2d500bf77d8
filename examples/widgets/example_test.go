package widgets_test

import (
	"fmt"

	"github.com/informerkit/informerkit/examples/widgets"
)

// The Widget kind, as its generated CRD describes it.
func Example() {
	fmt.Println(widgets.WidgetKind, widgets.WidgetKind.Resource, widgets.WidgetKind.StatusSubresource)
	// Output: Widget.v1.example.com widgets true
}
