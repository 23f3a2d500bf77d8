package protodec

import (
	"encoding/json"
	"errors"
	"os"
	"reflect"
	"testing"
	"time"

	"github.com/informerkit/informerkit/internal/jsondec"
	"github.com/informerkit/informerkit/internal/kubeproto"
	"github.com/informerkit/informerkit/internal/kubeschema"
)

// The types a user would declare for pods and Deployments (a subset of their fields, with
// custom-decoded timestamps, quantities and int-or-strings, pointers, maps and lists).

type tTime struct{ time.Time }

func (t *tTime) UnmarshalJSON(b []byte) error {
	if string(b) == "null" {
		t.Time = time.Time{}
		return nil
	}
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return err
	}
	p, err := time.Parse(time.RFC3339, s)
	t.Time = p
	return err
}

type tMeta struct {
	Name              string            `json:"name"`
	Namespace         string            `json:"namespace"`
	UID               string            `json:"uid"`
	ResourceVersion   string            `json:"resourceVersion"`
	Generation        int64             `json:"generation"`
	CreationTimestamp tTime             `json:"creationTimestamp"`
	DeletionTimestamp *tTime            `json:"deletionTimestamp"`
	Labels            map[string]string `json:"labels"`
	Annotations       map[string]string `json:"annotations"`
	OwnerReferences   []struct {
		Kind       string `json:"kind"`
		Name       string `json:"name"`
		Controller *bool  `json:"controller"`
	} `json:"ownerReferences"`
	ManagedFields []map[string]any `json:"managedFields"`
}

type tPod struct {
	Kind     string `json:"kind"`
	Metadata tMeta  `json:"metadata"`
	Spec     struct {
		NodeName   string `json:"nodeName"`
		Containers []struct {
			Name      string   `json:"name"`
			Image     string   `json:"image"`
			Args      []string `json:"args"`
			Resources struct {
				Requests map[string]json.RawMessage `json:"requests"`
				Limits   map[string]any             `json:"limits"`
			} `json:"resources"`
			Ports []struct {
				ContainerPort int32  `json:"containerPort"`
				Protocol      string `json:"protocol"`
			} `json:"ports"`
			ReadinessProbe *struct {
				HTTPGet *struct {
					Port any    `json:"port"`
					Path string `json:"path"`
				} `json:"httpGet"`
				TCPSocket     map[string]any `json:"tcpSocket"`
				PeriodSeconds *int64         `json:"periodSeconds"`
			} `json:"readinessProbe"`
		} `json:"containers"`
		Volumes       []map[string]any `json:"volumes"`
		Priority      *int32           `json:"priority"`
		Tolerations   any              `json:"tolerations"`
		RestartPolicy string           `json:"restartPolicy"`
	} `json:"spec"`
	Status struct {
		Phase             string `json:"phase"`
		PodIP             string `json:"podIP"`
		StartTime         *tTime `json:"startTime"`
		Conditions        []any  `json:"conditions"`
		ContainerStatuses []struct {
			Name         string `json:"name"`
			Ready        bool   `json:"ready"`
			RestartCount int    `json:"restartCount"`
			Started      *bool  `json:"started"`
			State        struct {
				Running *struct {
					StartedAt tTime `json:"startedAt"`
				} `json:"running"`
			} `json:"state"`
		} `json:"containerStatuses"`
	} `json:"status"`
}

type tPartial struct {
	Metadata struct {
		Name   string            `json:"name"`
		Labels map[string]string `json:"labels"`
	} `json:"metadata"`
	Spec struct {
		NodeName string `json:"nodeName"`
	} `json:"spec"`
}

type tDeployment struct {
	Metadata tMeta `json:"metadata"`
	Spec     struct {
		Replicas *int32 `json:"replicas"`
		Selector struct {
			MatchLabels map[string]string `json:"matchLabels"`
		} `json:"selector"`
		Template struct {
			Metadata tMeta `json:"metadata"`
		} `json:"template"`
		Strategy any `json:"strategy"`
	} `json:"spec"`
	Status struct {
		Replicas      int32 `json:"replicas"`
		ReadyReplicas int64 `json:"readyReplicas"`
		Conditions    []struct {
			Type           string `json:"type"`
			LastUpdateTime tTime  `json:"lastUpdateTime"`
		} `json:"conditions"`
	} `json:"status"`
}

func readReal(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile("../jsondec/testdata/real/" + name)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestRecordedObjectsDecodeAsTheirJSON(t *testing.T) {
	for _, c := range []struct {
		pb, js string
		new    func() any
	}{
		{"pod.pb", "pod.json", func() any { return new(tPod) }},
		{"pod.pb", "pod.json", func() any { return new(tPartial) }},
		{"deployment.pb", "deployment.json", func() any { return new(tDeployment) }},
	} {
		pb, js := readReal(t, c.pb), readReal(t, c.js)
		env, err := kubeproto.Unwrap(pb)
		if err != nil {
			t.Fatal(err)
		}
		ki, _ := kubeschema.ForKind("", "v1", env.Kind)
		if env.APIVersion == "apps/v1" {
			ki, _ = kubeschema.ForKind("apps", "v1", env.Kind)
		}
		got, fromJSON := c.new(), c.new()
		if err := decodeAny(NewDecoder(Options{}), ki.Type, env.Raw, got); err != nil {
			t.Fatalf("%s: %v", c.pb, err)
		}
		if err := jsondec.Unmarshal(js, fromJSON); err != nil {
			t.Fatal(err)
		}
		// The protobuf message has no kind: take it from the JSON.
		if p, ok := got.(*tPod); ok {
			p.Kind = fromJSON.(*tPod).Kind
		}
		if !reflect.DeepEqual(got, fromJSON) {
			a, _ := json.Marshal(got)
			b, _ := json.Marshal(fromJSON)
			t.Fatalf("%s into %T:\nprotobuf %s\nJSON     %s", c.pb, got, a, b)
		}
	}
}

// decodeAny is Decode for the zoo's pointer types.
func decodeAny(d *Decoder, st *kubeschema.Type, msg []byte, out any) error {
	switch o := out.(type) {
	case *tPod:
		return Decode(d, st, msg, o)
	case *tPartial:
		return Decode(d, st, msg, o)
	case *tDeployment:
		return Decode(d, st, msg, o)
	}
	panic("type")
}

func TestOmitManagedFields(t *testing.T) {
	env, err := kubeproto.Unwrap(readReal(t, "pod.pb"))
	if err != nil {
		t.Fatal(err)
	}
	st := kubeschema.Lookup("io.k8s.api.core.v1.Pod")
	var with, without tPod
	if err := Decode(NewDecoder(Options{}), st, env.Raw, &with); err != nil {
		t.Fatal(err)
	}
	if err := Decode(NewDecoder(Options{OmitManagedFields: true}), st, env.Raw, &without); err != nil {
		t.Fatal(err)
	}
	if len(with.Metadata.ManagedFields) == 0 || without.Metadata.ManagedFields != nil {
		t.Fatalf("managedFields: %d entries decoded, %d with OmitManagedFields", len(with.Metadata.ManagedFields), len(without.Metadata.ManagedFields))
	}
	with.Metadata.ManagedFields = nil
	if !reflect.DeepEqual(with, without) {
		t.Fatal("OmitManagedFields changed other fields")
	}
}

func TestMalformedInput(t *testing.T) {
	st := kubeschema.Lookup("io.k8s.api.core.v1.Pod")
	for _, b := range [][]byte{{0x0a, 0x05, 0x01}, {0x0a}, {0x0b}, {0x80}, {0x12, 0xff, 0xff, 0xff, 0xff, 0x0f}} {
		var p tPod
		if err := Decode(NewDecoder(Options{}), st, b, &p); !errors.Is(err, ErrMalformed) && err == nil {
			t.Errorf("%x: no error", b)
		}
	}
}

// Fields a type does not declare are skipped by their length: decoding a recorded pod into
// a struct that declares nothing allocates nothing, and one that declares only the name
// allocates the name alone.
func TestSkippingAllocatesNothing(t *testing.T) {
	env, err := kubeproto.Unwrap(readReal(t, "pod.pb"))
	if err != nil {
		t.Fatal(err)
	}
	st := kubeschema.Lookup("io.k8s.api.core.v1.Pod")
	type nothing struct{}
	type nameOnly struct {
		Metadata struct {
			Name string `json:"name"`
		} `json:"metadata"`
	}
	d := NewDecoder(Options{})
	var n nothing
	var o nameOnly
	if err := Decode(d, st, env.Raw, &o); err != nil || o.Metadata.Name == "" {
		t.Fatalf("%+v %v", o, err)
	}
	if a := testing.AllocsPerRun(100, func() { _ = Decode(d, st, env.Raw, &n) }); a != 0 {
		t.Fatalf("%v allocations for a type that declares nothing", a)
	}
	if a := testing.AllocsPerRun(100, func() { o = nameOnly{}; _ = Decode(d, st, env.Raw, &o) }); a != 1 {
		t.Fatalf("%v allocations for a type that declares the name", a)
	}
}
