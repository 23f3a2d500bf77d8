package kubecbor

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"reflect"
	"testing"

	"github.com/informerkit/informerkit/internal/jsondec"
)

// widget is the shape of the custom resource the testdata were recorded with (a
// kube-apiserver v1.37.2 with CBORServingAndStorage=true, GET, LIST and WATCH with
// Accept: application/cbor).
type widget struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	Metadata   struct {
		Name              string            `json:"name"`
		Namespace         string            `json:"namespace"`
		UID               string            `json:"uid"`
		ResourceVersion   string            `json:"resourceVersion"`
		Generation        int64             `json:"generation"`
		CreationTimestamp string            `json:"creationTimestamp"`
		Labels            map[string]string `json:"labels"`
		ManagedFields     []map[string]any  `json:"managedFields"`
	} `json:"metadata"`
	Spec struct {
		N int     `json:"n"`
		F float64 `json:"f"`
		S string  `json:"s"`
		B bool    `json:"b"`
		Z *string `json:"z"`
		L []int   `json:"l"`
	} `json:"spec"`
}

func readFile(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile("testdata/" + name)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestRealServerObject(t *testing.T) {
	var w widget
	if err := Unmarshal(readFile(t, "kube137-get.cbor"), &w); err != nil {
		t.Fatal(err)
	}
	if w.Kind != "Widget" || w.Metadata.Name != "w1" || w.Metadata.Namespace != "default" || w.Metadata.Labels["a"] != "b" {
		t.Fatalf("metadata: %+v", w)
	}
	if w.Spec.N != 1 || w.Spec.F != 1.5 || w.Spec.S != "x" || !w.Spec.B || w.Spec.Z != nil || !reflect.DeepEqual(w.Spec.L, []int{1, -2, 300000}) {
		t.Fatalf("spec: %+v", w.Spec)
	}
	if len(w.Metadata.ManagedFields) != 1 || w.Metadata.ManagedFields[0]["manager"] == nil {
		t.Fatalf("managedFields: %v", w.Metadata.ManagedFields)
	}
}

func TestRealServerList(t *testing.T) {
	var l struct {
		Kind     string `json:"kind"`
		Metadata struct {
			ResourceVersion string `json:"resourceVersion"`
		} `json:"metadata"`
		Items []widget `json:"items"`
	}
	if err := Unmarshal(readFile(t, "kube137-list.cbor"), &l); err != nil {
		t.Fatal(err)
	}
	if l.Kind != "WidgetList" || l.Metadata.ResourceVersion == "" || len(l.Items) != 1 || l.Items[0].Metadata.Name != "w1" {
		t.Fatalf("list: %+v", l)
	}
}

// TestRealServerWatch cuts the recorded watch stream (a CBOR sequence) into its events.
func TestRealServerWatch(t *testing.T) {
	b := readFile(t, "kube137-watch.cborseq")
	var names []string
	for len(b) > 0 {
		n, err := ItemLen(b)
		if err != nil {
			t.Fatal(err)
		}
		var ev struct {
			Type   string `json:"type"`
			Object widget `json:"object"`
		}
		if err := Unmarshal(b[:n], &ev); err != nil {
			t.Fatal(err)
		}
		names = append(names, ev.Type+" "+ev.Object.Metadata.Name)
		b = b[n:]
	}
	if want := []string{"ADDED w1", "BOOKMARK ", "ADDED w2"}; !reflect.DeepEqual(names, want) {
		t.Fatalf("events %q, want %q", names, want)
	}
}

func TestItemLenTruncated(t *testing.T) {
	b := readFile(t, "kube137-get.cbor")
	for _, cut := range []int{0, 1, 3, 4, 100, len(b) - 1} {
		_, err := ItemLen(b[:cut])
		if !errors.Is(err, ErrTruncated) {
			t.Fatalf("cut at %d: %v, want ErrTruncated", cut, err)
		}
	}
}

func TestMalformed(t *testing.T) {
	for name, in := range map[string][]byte{
		"indefinite map":  {0xbf, 0xff},
		"integer key":     {0xa1, 0x01, 0x02},
		"NaN":             {0xf9, 0x7e, 0x00},
		"undefined":       {0xf7},
		"unknown tag":     {0xc1, 0x01},
		"bad UTF-8":       {0x41, 0xff},
		"huge length":     {0x5b, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff},
		"trailing":        {0x01, 0x02},
		"deep":            bytes.Repeat([]byte{0x81}, maxDepth+1),
		"reserved info":   {0x1c},
		"tag 0 on number": {0xc0, 0x01},
	} {
		_, err := ToJSON(nil, in)
		var se *SyntaxError
		if !errors.As(err, &se) {
			t.Errorf("%s: %v, want a *SyntaxError", name, err)
		}
	}
}

func TestFromJSONRoundTrip(t *testing.T) {
	for _, js := range []string{
		`{"a":1,"b":[true,false,null],"c":"x\"y\u2028","d":-3,"e":1.5,"f":0.1,"g":65504,"h":1e+300,"i":{}}`,
		`[18446744073709551615,-9223372036854775808,3.4028234663852886e+38,5.960464477539063e-8]`,
	} {
		c, err := FromJSON(nil, []byte(js))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.HasPrefix(c, SelfDescribed) {
			t.Fatalf("no self-described tag: % x", c[:3])
		}
		back, err := ToJSON(nil, c)
		if err != nil {
			t.Fatal(err)
		}
		if string(back) != js {
			t.Fatalf("round trip:\n got %s\nwant %s", back, js)
		}
	}
	if c, _ := FromJSON(nil, []byte(`1.5`)); !bytes.Equal(c[3:], []byte{0xf9, 0x3e, 0x00}) {
		t.Fatalf("1.5 encoded % x, want the float16 f9 3e 00", c[3:])
	}
}

// FuzzToJSON checks the transcoder against the reference decoder: the same inputs are
// accepted, the JSON written equals the reference's value, and decoding it into a struct
// with jsondec gives what encoding/json gives.
func FuzzToJSON(f *testing.F) {
	for _, name := range []string{"kube137-get.cbor", "kube137-list.cbor"} {
		b, err := os.ReadFile("testdata/" + name)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add([]byte{0xd6, 0x43, 1, 2, 3})
	f.Add([]byte{0xd5, 0x41, 0xff})
	f.Add([]byte{0xd7, 0x42, 0xab, 0xcd})
	f.Add([]byte{0x3b, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff})
	f.Add([]byte{0xfa, 0x7f, 0x7f, 0xff, 0xff})
	f.Add([]byte{0xf9, 0x00, 0x01})
	f.Fuzz(func(t *testing.T, in []byte) {
		js, err := ToJSON(nil, in)
		ref, refErr := refDecode(in)
		if (err == nil) != (refErr == nil) {
			t.Fatalf("transcoder error %v, reference error %v", err, refErr)
		}
		if err != nil {
			var se *SyntaxError
			if !errors.As(err, &se) || se.Offset < 0 || se.Offset > int64(len(in)) {
				t.Fatalf("error %v is not a *SyntaxError within the input", err)
			}
			return
		}
		if !json.Valid(js) {
			t.Fatalf("invalid JSON %q", js)
		}
		d := json.NewDecoder(bytes.NewReader(js))
		d.UseNumber()
		var got any
		if err := d.Decode(&got); err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(ref, got) { // not cmp.Diff: exponential on deep nesting
			t.Fatalf("JSON %s differs from the reference %#v", js, ref)
		}
		var a, b widget
		errA := jsondec.Unmarshal(js, &a)
		errB := json.Unmarshal(js, &b)
		if (errA == nil) != (errB == nil) {
			t.Fatalf("jsondec %v, encoding/json %v", errA, errB)
		}
		if errA == nil && !reflect.DeepEqual(a, b) {
			t.Fatalf("jsondec %+v, encoding/json %+v", a, b)
		}
		if n, err := ItemLen(in); err != nil || n != len(in) {
			t.Fatalf("ItemLen %d, %v; want %d", n, err, len(in))
		}
	})
}

// FuzzFromJSON checks that CBOR written from JSON reads back as the same JSON value.
func FuzzFromJSON(f *testing.F) {
	f.Add([]byte(`{"a":[1,-2,1.5,"s",true,null,{}],"b":0.1}`))
	f.Add([]byte(`[1e-7,65504,65505,-0,3.4e38]`))
	f.Fuzz(func(t *testing.T, js []byte) {
		var want any
		if json.Unmarshal(js, &want) != nil {
			return
		}
		c, err := FromJSON(nil, js)
		if err != nil {
			t.Fatalf("FromJSON of valid JSON %q: %v", js, err)
		}
		back, err := ToJSON(nil, c)
		if err != nil {
			t.Fatalf("ToJSON of FromJSON(%q): %v", js, err)
		}
		var got any
		if err := json.Unmarshal(back, &got); err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(want, got) {
			t.Fatalf("%s read back as %s", js, back)
		}
	})
}
