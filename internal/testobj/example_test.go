package testobj_test

import (
	"fmt"

	"github.com/informerkit/informerkit/internal/testobj"
)

// A test builds its objects from the shared types and describes the custom resource to
// its registry with WidgetInfo.
func Example() {
	cm := testobj.NewConfigMap("default", "settings", map[string]string{"mode": "fast"})
	w := testobj.NewWidget("default", "w")
	w.Spec.Size = 3
	fmt.Println(cm.Namespace+"/"+cm.Name, cm.Data["mode"])
	fmt.Println(w.Name, w.Spec.Size, testobj.WidgetInfo.APIVersion(), testobj.WidgetGVR.Resource)
	// Output:
	// default/settings fast
	// w 3 example.com/v1 widgets
}
