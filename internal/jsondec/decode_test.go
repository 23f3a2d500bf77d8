package jsondec

import (
	"encoding/json"
	"errors"
	"os"
	"reflect"
	"strings"
	"testing"
)

func TestSyntaxErrorsCarryTheOffsetOfTheOffendingByte(t *testing.T) {
	cases := []struct {
		in     string
		offset int64
	}{
		{`{"a":1,}`, 7},
		{`{"a" 1}`, 5},
		{`[1 2]`, 3},
		{`{"s": "a` + "\x01" + `"}`, 8},
		{`{"s": "\x"}`, 8},
		{`{"s": tru}`, 9},
		{`{"unknown": [1, 2 3]}`, 18},
		{`{"unknown": {"a": -}}`, 19},
		{`{"s":"a"} x`, 10},
		{`{"s":"a"`, 8}, // the end of the input
		{``, 0},
		{`"abc`, 4},
	}
	for _, c := range cases {
		var v struct {
			S string `json:"s"`
		}
		err := Unmarshal([]byte(c.in), &v)
		var se *SyntaxError
		if !errors.As(err, &se) {
			t.Errorf("%q: got %v, want a *SyntaxError", c.in, err)
			continue
		}
		if se.Offset != c.offset {
			t.Errorf("%q: offset %d (%v), want %d", c.in, se.Offset, err, c.offset)
		}
	}
}

func TestTypeErrorsAreEncodingJSONsAndDecodingGoesOn(t *testing.T) {
	var v struct {
		A int    `json:"a"`
		B string `json:"b"`
	}
	err := Unmarshal([]byte(`{"a": "x", "b": "after"}`), &v)
	var te *json.UnmarshalTypeError
	if !errors.As(err, &te) || te.Value != "string" || te.Offset != 6 {
		t.Fatalf("got %#v, want a *json.UnmarshalTypeError for the string at offset 6", err)
	}
	if v.B != "after" {
		t.Fatalf("the member after the type error was not decoded: %+v", v)
	}
}

func TestInvalidUnmarshalTarget(t *testing.T) {
	var iue *json.InvalidUnmarshalError
	if err := Unmarshal([]byte(`{}`), struct{}{}); !errors.As(err, &iue) {
		t.Fatalf("non-pointer: got %v", err)
	}
	if err := Unmarshal([]byte(`{}`), (*struct{})(nil)); !errors.As(err, &iue) {
		t.Fatalf("nil pointer: got %v", err)
	}
}

// TestDecodeWalksALargerDocument decodes one member of an envelope in place, as apiclient
// does with watch events.
func TestDecodeWalksALargerDocument(t *testing.T) {
	doc := []byte(`{"type" : "ADDED", "object": {"s": "x\u00e9", "extra": [1, {"a": null}]} , "tail": true}`)
	dec := NewDecoder(Options{})
	typ, end, err := String(dec, doc, len(`{"type" :`))
	if err != nil || string(typ) != "ADDED" {
		t.Fatalf("String: %q, %v", typ, err)
	}
	c, at, ok := Next(doc, end)
	if !ok || c != ',' {
		t.Fatalf("Next after the string: %q at %d", c, at)
	}
	objStart := strings.Index(string(doc), `{"s"`)
	var obj struct {
		S string `json:"s"`
	}
	end, err = Decode(dec, doc, len(`{"type" : "ADDED", "object":`), &obj)
	if err != nil || obj.S != "xé" {
		t.Fatalf("Decode: %+v, %v", obj, err)
	}
	skipEnd, err := Skip(dec, doc, objStart)
	if err != nil || skipEnd != end {
		t.Fatalf("Skip ended at %d (%v), Decode at %d", skipEnd, err, end)
	}
	if c, _, _ := Next(doc, end); c != ',' {
		t.Fatalf("after the object: %q", c)
	}
	if _, err := Skip(dec, doc[:end-1], objStart); err == nil {
		t.Fatal("Skip of a truncated object succeeded")
	}
}

func TestOptionsStringsSuppliesEveryString(t *testing.T) {
	asked := map[string]int{}
	canon := map[string]string{}
	dec := NewDecoder(Options{Strings: func(b []byte) string {
		asked[string(b)]++
		if s, ok := canon[string(b)]; ok {
			return s
		}
		s := string(b)
		canon[s] = s
		return s
	}})
	type obj struct {
		Name   string            `json:"name"`
		Labels map[string]string `json:"labels"`
		Tags   []string          `json:"tags"`
		Any    any               `json:"any"`
	}
	var a, b obj
	doc := []byte(`{"name": "web", "labels": {"app": "web"}, "tags": ["web", "x\n"], "any": {"app": ["web"]}}`)
	if err := dec.Unmarshal(doc, &a); err != nil {
		t.Fatal(err)
	}
	if err := dec.Unmarshal(doc, &b); err != nil {
		t.Fatal(err)
	}
	if asked["web"] != 8 || asked["app"] != 4 || asked["x\n"] != 2 {
		t.Fatalf("strings asked for: %v", asked)
	}
	if !sameString(a.Name, b.Labels["app"]) || !sameString(a.Tags[0], b.Any.(map[string]any)["app"].([]any)[0].(string)) {
		t.Fatal("the decoded strings are not the ones Options.Strings returned")
	}
	var want obj
	if err := json.Unmarshal(doc, &want); err != nil || !reflect.DeepEqual(want, a) {
		t.Fatalf("got %+v, want %+v", a, want)
	}
}

func sameString(a, b string) bool { return a == b && stringData(a) == stringData(b) }

func TestRecordedBodiesDecodeAsEncodingJSONDoes(t *testing.T) {
	for _, file := range []string{"pod.json", "podlist.json"} {
		data, err := os.ReadFile("testdata/real/" + file)
		if err != nil {
			t.Fatal(err)
		}
		targets := []any{new(kPod), new(kPartialPod), new(kNothing)}
		if file == "podlist.json" {
			targets = []any{new(struct {
				Items []kPod `json:"items"`
			}), new(struct {
				Items []kPartialPod `json:"items"`
			})}
		}
		for _, target := range targets {
			compareDecode(t, data, target, nil)
		}
	}
}

func TestOmitSkipsTheMemberAtThePath(t *testing.T) {
	data, err := os.ReadFile("testdata/real/pod.json")
	if err != nil {
		t.Fatal(err)
	}
	dec := NewDecoder(Options{Omit: []string{"metadata", "managedFields"}})
	var got, want kPod
	if err := dec.Unmarshal(data, &got); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, &want); err != nil {
		t.Fatal(err)
	}
	if want.ManagedFields == nil || got.ManagedFields != nil {
		t.Fatalf("managedFields: decoded %d bytes, encoding/json %d", len(got.ManagedFields), len(want.ManagedFields))
	}
	want.ManagedFields = nil
	if !reflect.DeepEqual(got, want) {
		t.Fatal("the rest of the pod differs from encoding/json's")
	}

	var gotMap, wantMap map[string]any
	if err := dec.Unmarshal(data, &gotMap); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, &wantMap); err != nil {
		t.Fatal(err)
	}
	delete(wantMap["metadata"].(map[string]any), "managedFields")
	if !reflect.DeepEqual(gotMap, wantMap) {
		t.Fatal("map[string]any: got something else than encoding/json's value without managedFields")
	}

	// Only that path: a managedFields member elsewhere is decoded.
	var other struct {
		Spec struct {
			ManagedFields []int `json:"managedFields"`
		} `json:"spec"`
		Metadata struct {
			Name          string `json:"name"`
			ManagedFields []int  `json:"managedFields"`
		} `json:"metadata"`
	}
	doc := `{"spec":{"managedFields":[1]},"metadata":{"name":"n","managedFields":[2, {"malformed": }]}}`
	if err := dec.Unmarshal([]byte(doc), &other); err == nil {
		t.Fatal("an omitted member is still checked: want a syntax error")
	}
	doc = `{"spec":{"managedFields":[1]},"metadata":{"name":"n","managedFields":[2]}}`
	if err := dec.Unmarshal([]byte(doc), &other); err != nil || len(other.Spec.ManagedFields) != 1 || other.Metadata.ManagedFields != nil || other.Metadata.Name != "n" {
		t.Fatalf("%+v, %v", other, err)
	}
}

func TestOmitPathThroughArrays(t *testing.T) {
	data, err := os.ReadFile("testdata/real/podlist.json")
	if err != nil {
		t.Fatal(err)
	}
	dec := NewDecoder(Options{Omit: []string{"items", "[]", "metadata", "managedFields"}})
	var list struct {
		Items []kPod `json:"items"`
	}
	if err := dec.Unmarshal(data, &list); err != nil {
		t.Fatal(err)
	}
	var generic map[string]any
	if err := dec.Unmarshal(data, &generic); err != nil {
		t.Fatal(err)
	}
	if len(list.Items) != 20 || len(generic["items"].([]any)) != 20 {
		t.Fatalf("%d items, %d generic", len(list.Items), len(generic["items"].([]any)))
	}
	for i, p := range list.Items {
		md := generic["items"].([]any)[i].(map[string]any)["metadata"].(map[string]any)
		if p.ManagedFields != nil || md["managedFields"] != nil || p.Name == "" || md["name"] != p.Name {
			t.Fatalf("item %d: managedFields %d bytes, generic %v, name %q", i, len(p.ManagedFields), md["managedFields"] != nil, p.Name)
		}
	}
}
