package testobj

import (
	"reflect"

	"github.com/informerkit/informerkit/kinds"
	"github.com/informerkit/informerkit/meta"
)

// ConfigMap is a core/v1 ConfigMap with the fields the tests use: metadata and data.
type ConfigMap struct {
	meta.TypeMeta
	meta.ObjectMeta `json:"metadata"`
	Data            map[string]string `json:"data,omitempty"`
}

// Pod is a core/v1 Pod with the fields the tests use: metadata and spec.nodeName.
type Pod struct {
	meta.TypeMeta
	meta.ObjectMeta `json:"metadata"`
	Spec            PodSpec `json:"spec"`
}

// PodSpec is the part of a Pod's spec the tests use.
type PodSpec struct {
	NodeName string `json:"nodeName,omitempty"`
}

// Widget is the custom resource of the tests (see WidgetInfo). Its status is left out of
// the JSON while zero, so that creating a Widget sends no status.
type Widget struct {
	meta.TypeMeta
	meta.ObjectMeta `json:"metadata"`
	Spec            WidgetSpec   `json:"spec"`
	Status          WidgetStatus `json:"status,omitzero"`
}

// WidgetSpec is a Widget's desired state. Size is always sent (a zero size is a size);
// Replicas, the number of children a ReplicaSet-like test controller keeps, only when set.
type WidgetSpec struct {
	Size     int `json:"size"`
	Replicas int `json:"replicas,omitempty"`
}

// WidgetStatus is a Widget's observed state, written through the status subresource.
type WidgetStatus struct {
	Ready   bool   `json:"ready,omitempty"`
	Message string `json:"message,omitempty"`
}

var (
	// ConfigMapGVR is the resource of ConfigMap: core/v1 configmaps.
	ConfigMapGVR = kinds.ConfigMap.GroupVersionResource()
	// PodGVR is the resource of Pod: core/v1 pods.
	PodGVR = kinds.Pod.GroupVersionResource()
	// WidgetGVR is the resource of Widget: example.com/v1 widgets.
	WidgetGVR = WidgetInfo.GroupVersionResource()
	// WidgetInfo describes Widget to a kinds registry: kind Widget in example.com/v1,
	// resource widgets, namespaced, with a status subresource. Tests that serve it from
	// apitest add the same resource type to the server.
	WidgetInfo = kinds.Info{Group: "example.com", Version: "v1", Kind: "Widget", Resource: "widgets",
		Namespaced: true, StatusSubresource: true}
)

// NewConfigMap returns a ConfigMap with the given namespace, name and data (nil for none).
func NewConfigMap(namespace, name string, data map[string]string) *ConfigMap {
	return &ConfigMap{ObjectMeta: meta.ObjectMeta{Namespace: namespace, Name: name}, Data: data}
}

// NewPod returns a Pod with the given namespace and name and nothing else.
func NewPod(namespace, name string) *Pod {
	return &Pod{ObjectMeta: meta.ObjectMeta{Namespace: namespace, Name: name}}
}

// NewWidget returns a Widget with the given namespace and name, a zero spec and no status.
func NewWidget(namespace, name string) *Widget {
	return &Widget{ObjectMeta: meta.ObjectMeta{Namespace: namespace, Name: name}}
}

// Register registers ConfigMap, Pod and Widget in r and returns r; a test's Manager or
// client whose types are these takes NewRegistry().
func Register(r *kinds.Registry) *kinds.Registry {
	for _, reg := range []error{
		r.Register(reflect.TypeFor[*ConfigMap](), kinds.ConfigMap),
		r.Register(reflect.TypeFor[*Pod](), kinds.Pod),
		r.Register(reflect.TypeFor[*Widget](), WidgetInfo),
	} {
		if reg != nil {
			panic(reg)
		}
	}
	return r
}

// NewRegistry returns a registry of ConfigMap, Pod and Widget.
func NewRegistry() *kinds.Registry { return Register(kinds.NewRegistry()) }
