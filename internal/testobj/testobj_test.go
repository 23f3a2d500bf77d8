package testobj

import (
	"encoding/json"
	"testing"

	"go.uber.org/goleak"

	"github.com/informerkit/informerkit/kinds"
	"github.com/informerkit/informerkit/meta"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// The tests that write these types to apitest rely on their JSON: a zero status is not
// sent, a zero size is.
func TestJSON(t *testing.T) {
	for _, tc := range []struct {
		obj  any
		want string
	}{
		{NewConfigMap("ns", "c", map[string]string{"k": "v"}), `{"metadata":{"name":"c","namespace":"ns"},"data":{"k":"v"}}`},
		{NewConfigMap("ns", "c", nil), `{"metadata":{"name":"c","namespace":"ns"}}`},
		{NewPod("ns", "p"), `{"metadata":{"name":"p","namespace":"ns"},"spec":{}}`},
		{&Pod{Spec: PodSpec{NodeName: "n"}}, `{"metadata":{},"spec":{"nodeName":"n"}}`},
		{NewWidget("ns", "w"), `{"metadata":{"name":"w","namespace":"ns"},"spec":{"size":0}}`},
		{&Widget{Spec: WidgetSpec{Size: 1, Replicas: 2}, Status: WidgetStatus{Ready: true, Message: "m"}},
			`{"metadata":{},"spec":{"size":1,"replicas":2},"status":{"ready":true,"message":"m"}}`},
	} {
		b, err := json.Marshal(tc.obj)
		if err != nil || string(b) != tc.want {
			t.Errorf("%T: %s, %v; want %s", tc.obj, b, err, tc.want)
		}
	}
}

func TestInfo(t *testing.T) {
	if err := WidgetInfo.Validate(); err != nil {
		t.Fatal(err)
	}
	if _, ok := kinds.BuiltinForResource(WidgetGVR); ok {
		t.Fatal("Widget is a built-in resource")
	}
	for _, tc := range []struct{ got, want meta.GroupVersionResource }{
		{ConfigMapGVR, meta.GroupVersionResource{Version: "v1", Resource: "configmaps"}},
		{PodGVR, meta.GroupVersionResource{Version: "v1", Resource: "pods"}},
		{WidgetGVR, meta.GroupVersionResource{Group: "example.com", Version: "v1", Resource: "widgets"}},
	} {
		if tc.got != tc.want {
			t.Errorf("%v, want %v", tc.got, tc.want)
		}
	}
}
