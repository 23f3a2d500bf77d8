package jsonpatch

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/informerkit/informerkit/apitest/internal/jsonobj"
)

func doc(t *testing.T) map[string]any {
	t.Helper()
	m, err := jsonobj.Decode([]byte(`{"a":{"b":1,"c":[1,2,3]},"d":"x"}`))
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func encode(v any) string { b, _ := json.Marshal(v); return string(b) }

func TestMerge(t *testing.T) {
	out, err := Merge(doc(t), []byte(`{"a":{"b":null,"e":2.50},"d":["y"]}`))
	if err != nil {
		t.Fatal(err)
	}
	if got := encode(out); got != `{"a":{"c":[1,2,3],"e":2.50},"d":["y"]}` {
		t.Errorf("got %s", got)
	}
	if _, err := Merge(doc(t), []byte(`[1]`)); err == nil {
		t.Error("a merge patch must be an object")
	}
}

func TestApply(t *testing.T) {
	out, err := Apply(doc(t), []byte(`[
		{"op":"add","path":"/a/c/1","value":9},
		{"op":"remove","path":"/a/c/0"},
		{"op":"replace","path":"/d","value":"y"},
		{"op":"copy","from":"/a/b","path":"/f"},
		{"op":"move","from":"/d","path":"/g~1h"},
		{"op":"add","path":"/a/c/-","value":4},
		{"op":"test","path":"/f","value":1}]`))
	if err != nil {
		t.Fatal(err)
	}
	if got := encode(out); got != `{"a":{"b":1,"c":[9,2,3,4]},"f":1,"g/h":"y"}` {
		t.Errorf("got %s", got)
	}
}

func TestApplyErrors(t *testing.T) {
	_, err := Apply(doc(t), []byte(`[{"op":"replace","path":"/d","value":"y"},{"op":"test","path":"/d","value":"x"}]`))
	var failed *TestFailedError
	if !errors.As(err, &failed) || failed.Path != "/d" || err.Error() != "json patch operation 1: testing value /d failed" {
		t.Errorf("a failed test: %v", err)
	}
	for _, p := range []string{
		`[{"op":"replace","path":"/nope","value":1}]`,
		`[{"op":"remove","path":"/a/c/7"}]`,
		`[{"op":"add","path":"a","value":1}]`,
		`[{"op":"frobnicate","path":"/a"}]`,
		`{"op":"add"}`,
	} {
		_, err := Apply(doc(t), []byte(p))
		if err == nil || errors.As(err, &failed) {
			t.Errorf("%s: want a plain error, got %v", p, err)
		}
		if err != nil && !strings.HasPrefix(err.Error(), "json patch operation 0: ") && !strings.HasPrefix(err.Error(), "error decoding patch") {
			t.Errorf("%s: the error names the operation: %v", p, err)
		}
	}
}
