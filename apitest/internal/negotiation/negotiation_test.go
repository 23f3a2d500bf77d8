package negotiation

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestNegotiate(t *testing.T) {
	for _, c := range []struct {
		accept         string
		builtin, watch bool
		want           Output
		code           int32 // 0: acceptable
	}{
		{"", true, false, Output{}, 0},
		{"application/yaml", true, false, Output{Format: YAML}, 0},
		{"application/vnd.kubernetes.protobuf, application/json", true, false, Output{Format: Protobuf}, 0},
		// Custom resources have no protobuf: the next clause is taken.
		{"application/vnd.kubernetes.protobuf, application/json", false, false, Output{}, 0},
		// By q, then concrete types before wildcards.
		{"*/*;q=0.5, application/yaml;q=0.9", true, false, Output{Format: YAML}, 0},
		{"*/*, application/yaml", true, false, Output{Format: YAML}, 0},
		{"application/json;as=Table;v=v1;g=meta.k8s.io", true, false, Output{As: "Table", AsVersion: "v1"}, 0},
		{"application/vnd.kubernetes.protobuf;as=Table;v=v1;g=meta.k8s.io", true, false, Output{}, 406},
		{"application/vnd.kubernetes.protobuf;as=PartialObjectMetadataList;v=v1;g=meta.k8s.io", false, false,
			Output{Format: Protobuf, As: "PartialObjectMetadataList", AsVersion: "v1"}, 0},
		{"application/json;as=Table;v=v2;g=meta.k8s.io", true, false, Output{}, 406},
		{"application/yaml", true, true, Output{}, 406}, // YAML has no stream form
		{"application/json;stream=watch", true, true, Output{}, 0},
		{"text/html", true, false, Output{}, 406},
	} {
		got, st := Negotiate(c.accept, c.builtin, c.watch)
		switch {
		case c.code != 0 && (st == nil || st.Code != c.code):
			t.Errorf("%q: want %d, got %+v %+v", c.accept, c.code, got, st)
		case c.code == 0 && (st != nil || got != c.want):
			t.Errorf("%q: want %+v, got %+v %+v", c.accept, c.want, got, st)
		}
	}
	// The router's 406 names every representation, streams too.
	_, st := Negotiate("text/html", true, false)
	if !strings.Contains(st.Message, "application/vnd.kubernetes.protobuf;stream=watch") {
		t.Errorf("406 of an unknown type: %q", st.Message)
	}
}

func TestDecode(t *testing.T) {
	m, st := Decode("application/yaml; charset=utf-8", []byte("a: 1\nb: [x, 2.5]\nc: {d: true}\n"), MediaTypes(false))
	if st != nil {
		t.Fatal(st.Message)
	}
	if n, ok := m["a"].(json.Number); !ok || n != "1" {
		t.Errorf("YAML numbers become json.Number: %#v", m["a"])
	}
	if _, st := Decode(MediaProtobuf, []byte{0}, MediaTypes(false)); st == nil || st.Code != 415 {
		t.Errorf("protobuf for a custom resource: %+v", st)
	}
	if _, st := Decode("", []byte("{"), MediaTypes(true)); st == nil || st.Code != 400 {
		t.Errorf("bad JSON: %+v", st)
	}
	_, st = DecodeObject(MediaProtobuf, []byte("k8s\x00\x0a"), "ConfigMap", MediaTypes(true))
	if st == nil || !strings.HasPrefix(st.Message, "the object provided is unrecognized (must be of type ConfigMap): ") {
		t.Errorf("a truncated protobuf body: %+v", st)
	}
}

func TestEncodeYAMLKeepsNumbers(t *testing.T) {
	if got := string(EncodeYAML([]byte(`{"replicas":3,"ratio":0.5,"name":"x"}`))); got != "name: x\nratio: 0.5\nreplicas: 3\n" {
		t.Errorf("got %q", got)
	}
}

func TestDiscovery(t *testing.T) {
	for _, c := range []struct {
		accept  string
		version string
		format  Format
		agg     bool
	}{
		{"", "", JSON, false},
		{"application/json", "", JSON, false},
		// client-go v0.36's discovery client.
		{"application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList,application/json", "v2", JSON, true},
		{"application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList;profile=nopeer,application/json", "v2", JSON, true},
		{"application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList", "v2beta1", JSON, true},
		{"application/vnd.kubernetes.protobuf;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,application/json", "v2", Protobuf, true},
		{"application/json;g=apidiscovery.k8s.io;v=v3;as=APIGroupDiscoveryList,application/json", "", JSON, false},
		{"application/json,application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList", "", JSON, false},
	} {
		v, f, agg := Discovery(c.accept)
		if v != c.version || f != c.format || agg != c.agg {
			t.Errorf("%q: %q %v %v, want %q %v %v", c.accept, v, f, agg, c.version, c.format, c.agg)
		}
	}
}
