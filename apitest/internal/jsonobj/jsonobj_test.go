package jsonobj

import (
	"encoding/json"
	"testing"
)

func TestReaders(t *testing.T) {
	obj, err := Decode([]byte(`{"metadata":{"name":"p"},"spec":{"replicas":3,"ports":[{"port":80}],"half":0.5},
		"status":{"phase":"Running"},"list":["a",1,"b"]}`))
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := Map(obj["spec"])["replicas"].(json.Number); !ok {
		t.Fatalf("numbers must decode as json.Number, got %T", Map(obj["spec"])["replicas"])
	}
	for _, c := range []struct{ got, want any }{
		{Str(Meta(obj), "name"), "p"},
		{StrAt(obj, "status", "phase"), "Running"},
		{StrAt(obj, "nothing", "here"), ""},
		{Str(obj, "spec"), ""}, // not a string
		{len(ListAt(obj, "spec", "ports")), 1},
		{ListAt(obj, "spec", "replicas") == nil, true},
		{Num(Map(obj["spec"])["replicas"]), int64(3)},
		{Num(Map(obj["spec"])["half"]), int64(0)}, // not an integer
		{Num(2.0), int64(2)},
		{Num("3"), int64(0)},
		{NumString(json.Number("42")), "42"},
		{len(Strings(obj["list"])), 2},
	} {
		if c.got != c.want {
			t.Errorf("got %v, want %v", c.got, c.want)
		}
	}
}

func TestMetaAddsMetadata(t *testing.T) {
	obj := map[string]any{}
	Meta(obj)["name"] = "x"
	if StrAt(obj, "metadata", "name") != "x" {
		t.Fatalf("Meta must add the metadata it returns to the object: %v", obj)
	}
}

func TestEqual(t *testing.T) {
	if !Equal(json.Number("1"), 1.0) || !Equal(map[string]any{"a": 1, "b": "x"}, map[string]any{"b": "x", "a": json.Number("1")}) {
		t.Error("the same JSON values must be equal")
	}
	if Equal([]any{"a", "b"}, []any{"b", "a"}) || Equal(nil, map[string]any{}) {
		t.Error("different JSON values must not be equal")
	}
}

func TestDecodeNull(t *testing.T) {
	m, err := Decode([]byte("null"))
	if err != nil || m != nil {
		t.Fatalf("null: got %v, %v", m, err)
	}
	if _, err := Decode([]byte("[1]")); err == nil {
		t.Fatal("a list is not an object: want an error")
	}
}

func TestDeepCopy(t *testing.T) {
	m, _ := Decode([]byte(`{"a":{"b":[1,{"c":"d"}]},"e":"f"}`))
	c := DeepCopy(m)
	c["a"].(map[string]any)["b"].([]any)[1].(map[string]any)["c"] = "x"
	if !Equal(m, mustDecode(t, `{"a":{"b":[1,{"c":"d"}]},"e":"f"}`)) || Equal(m, c) {
		t.Errorf("the copy shares: %v %v", m, c)
	}
}

func mustDecode(t *testing.T, s string) map[string]any {
	m, err := Decode([]byte(s))
	if err != nil {
		t.Fatal(err)
	}
	return m
}
