package deepcopy_test

import (
	"fmt"

	"github.com/informerkit/informerkit/deepcopy"
	"github.com/informerkit/informerkit/meta"
)

type ConfigMap struct {
	meta.TypeMeta
	meta.ObjectMeta `json:"metadata"`
	Data            map[string]string `json:"data,omitempty"`
}

// A cached object is copied before it is changed: the cache's copy keeps its labels.
func ExampleCopy() {
	cached := &ConfigMap{
		ObjectMeta: meta.ObjectMeta{Name: "settings", Labels: map[string]string{"tier": "web"}},
		Data:       map[string]string{"color": "blue"},
	}
	mine := deepcopy.Copy(cached)
	mine.Labels["tier"] = "db"
	mine.Data["color"] = "red"
	fmt.Println(cached.Labels["tier"], cached.Data["color"])
	fmt.Println(mine.Labels["tier"], mine.Data["color"])
	// Output:
	// web blue
	// db red
}
