package kubeproto

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"go.uber.org/goleak"

	"github.com/informerkit/informerkit/internal/kubeschema"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func decodeJSON(t testing.TB, b []byte) map[string]any {
	t.Helper()
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	var m map[string]any
	if err := d.Decode(&m); err != nil {
		t.Fatal(err)
	}
	return m
}

// TestGoldens checks both directions against pairs written by k8s.io/apimachinery's
// serializer and encoding/json (compat: go test -run TestKubeprotoGoldens -write-goldens).
func TestGoldens(t *testing.T) {
	files, _ := filepath.Glob("testdata/golden/*.pb")
	if len(files) < 15 {
		t.Fatalf("only %d golden files", len(files))
	}
	for _, pbFile := range files {
		name := strings.TrimSuffix(filepath.Base(pbFile), ".pb")
		t.Run(name, func(t *testing.T) {
			pb, err := os.ReadFile(pbFile)
			if err != nil {
				t.Fatal(err)
			}
			js, err := os.ReadFile(strings.TrimSuffix(pbFile, ".pb") + ".json")
			if err != nil {
				t.Fatal(err)
			}
			want := decodeJSON(t, js)
			got, err := DecodeObject(pb)
			if err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(want, got); d != "" {
				t.Errorf("decode (-want +got):\n%s", d)
			}
			enc, err := EncodeObject(want)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(enc, pb) {
				t.Errorf("encode: %d bytes, apimachinery wrote %d:\n%x\n%x", len(enc), len(pb), enc, pb)
			}
		})
	}
}

func TestDecodeGoesByGoJSONRules(t *testing.T) {
	cm, _ := TypeOf("v1", "ConfigMap")
	// An empty message: metadata is a struct (always written), data is an omitempty map.
	got, err := Decode(cm, nil)
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(map[string]any{"metadata": map[string]any{}}, got); d != "" {
		t.Errorf("empty ConfigMap (-want +got):\n%s", d)
	}
	pod, _ := TypeOf("v1", "Pod")
	got, err = Decode(pod, nil)
	if err != nil {
		t.Fatal(err)
	}
	// containers has no omitempty: null; status is a struct: {}.
	spec := got["spec"].(map[string]any)
	if v, ok := spec["containers"]; !ok || v != nil {
		t.Errorf("spec.containers = %v (present %v), want null", v, ok)
	}
	if _, ok := got["status"].(map[string]any); !ok {
		t.Errorf("status = %v, want {}", got["status"])
	}
}

// TestNamedSlices checks the JSON of a named slice (authentication's ExtraValue, meta's
// Verbs) as the generated decoders leave it: a map value is allocated before it is read, so
// an empty or missing value is []; a field is [] when its message is on the wire, null when
// it is not.
func TestNamedSlices(t *testing.T) {
	user, ok := TypeOf("authentication.k8s.io/v1", "TokenReview")
	if !ok {
		t.Fatal("no TokenReview")
	}
	// status (3) { user (2) { extra (4) {"a": ExtraValue{}}, extra {"b": (no value)} } }
	entryA := []byte{0x0a, 1, 'a', 0x12, 0}
	entryB := []byte{0x0a, 1, 'b'}
	u := append(append([]byte{0x22, byte(len(entryA))}, entryA...), append([]byte{0x22, byte(len(entryB))}, entryB...)...)
	st := append([]byte{0x12, byte(len(u))}, u...)
	got, err := Decode(user, append([]byte{0x1a, byte(len(st))}, st...))
	if err != nil {
		t.Fatal(err)
	}
	extra := got["status"].(map[string]any)["user"].(map[string]any)["extra"]
	if d := cmp.Diff(map[string]any{"a": []any{}, "b": []any{}}, extra); d != "" {
		t.Errorf("extra (-want +got):\n%s", d)
	}
	res, ok := TypeOf("v1", "APIResourceList")
	if !ok {
		t.Fatal("no APIResourceList")
	}
	resource := res.Field("resources").Type()
	for _, c := range []struct {
		msg  []byte
		want any
	}{
		{nil, nil},                 // verbs (4) absent: null
		{[]byte{0x22, 0}, []any{}}, // an empty Verbs message: []
		{[]byte{0x22, 5, 0x0a, 3, 'g', 'e', 't'}, []any{"get"}},
	} {
		got, err := Decode(resource, c.msg)
		if err != nil {
			t.Fatal(err)
		}
		if v, ok := got["verbs"]; !ok || !cmp.Equal(v, c.want) {
			t.Errorf("%x: verbs = %#v (present %v), want %#v", c.msg, v, ok, c.want)
		}
	}
}

func TestEnvelope(t *testing.T) {
	b := Wrap("apps/v1", "Deployment", []byte{1, 2, 3})
	if !bytes.HasPrefix(b, Magic) {
		t.Fatalf("no magic: %x", b)
	}
	env, err := Unwrap(b)
	if err != nil {
		t.Fatal(err)
	}
	if env.APIVersion != "apps/v1" || env.Kind != "Deployment" || !bytes.Equal(env.Raw, []byte{1, 2, 3}) {
		t.Errorf("Unwrap = %+v", env)
	}
	if _, err := Unwrap([]byte(`{"kind":"Pod"}`)); !errors.Is(err, ErrMalformed) {
		t.Errorf("JSON input: %v, want ErrMalformed", err)
	}
	if _, err := DecodeObject(Wrap("example.com/v1", "Widget", nil)); !errors.Is(err, ErrSchema) {
		t.Errorf("unknown kind: %v, want ErrSchema", err)
	}
}

func TestWatchEvent(t *testing.T) {
	obj, err := EncodeObject(map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"name": "a"}})
	if err != nil {
		t.Fatal(err)
	}
	ev := WatchEvent("ADDED", obj)
	typ, raw, err := ParseWatchEvent(ev)
	if err != nil || typ != "ADDED" || !bytes.Equal(raw, obj) {
		t.Fatalf("ParseWatchEvent = %q, %x, %v", typ, raw, err)
	}
	fr := AppendFrame(nil, ev)
	if len(fr) != 4+len(ev) || int(fr[3]) != len(ev) {
		t.Errorf("frame %x", fr)
	}
}

func TestErrors(t *testing.T) {
	pod, _ := TypeOf("v1", "Pod")
	cases := []struct {
		name string
		in   []byte
		kind error
	}{
		{"truncated varint", []byte{0x98, 0x06, 0x80}, ErrMalformed},
		{"length past the end", []byte{0x0a, 0x05, 0x01}, ErrMalformed},
		{"field number 0", []byte{0x00, 0x01}, ErrMalformed},
		{"group wire type", []byte{0x0b}, ErrMalformed},
		{"metadata as a varint", []byte{0x08, 0x01}, ErrSchema},
	}
	for _, c := range cases {
		_, err := Decode(pod, c.in)
		var e *Error
		if !errors.As(err, &e) || !errors.Is(err, c.kind) {
			t.Errorf("%s: %v, want a %v *Error", c.name, err, c.kind)
		}
	}
	enc := []struct {
		name string
		obj  map[string]any
	}{
		{"string as number", map[string]any{"metadata": map[string]any{"name": json.Number("1")}}},
		{"int32 overflow", map[string]any{"spec": map[string]any{"replicas": json.Number("4294967296")}}},
		{"fraction", map[string]any{"spec": map[string]any{"replicas": json.Number("1.5")}}},
		{"bad base64", map[string]any{"data": map[string]any{"k": "%%%"}}},
		{"bad time", map[string]any{"metadata": map[string]any{"creationTimestamp": "yesterday"}}},
		{"bad quantity", map[string]any{"spec": map[string]any{"containers": []any{map[string]any{"resources": map[string]any{"limits": map[string]any{"cpu": "lots"}}}}}}},
	}
	deploy, _ := TypeOf("apps/v1", "Deployment")
	secret, _ := TypeOf("v1", "Secret")
	for _, c := range enc {
		ty := deploy
		if c.name == "bad base64" {
			ty = secret
		}
		if c.name == "bad quantity" {
			ty = pod
		}
		_, err := Encode(ty, c.obj)
		var e *Error
		if !errors.As(err, &e) || !errors.Is(err, ErrSchema) || e.Path == "" {
			t.Errorf("%s: %v, want an ErrSchema *Error with a path", c.name, err)
		}
	}
}

// kindAt picks a kind of the table from a fuzz byte.
func kindAt(i uint8) *kubeschema.Type {
	ks := kubeschema.Kinds()
	k := ks[int(i)%len(ks)]
	if i&0x80 != 0 && k.List != nil {
		return k.List
	}
	return k.Type
}

func checkErr(t *testing.T, err error) {
	t.Helper()
	var e *Error
	if !errors.As(err, &e) || !(errors.Is(err, ErrMalformed) || errors.Is(err, ErrSchema)) {
		t.Fatalf("error %v (%T) is not a typed *Error", err, err)
	}
}

// FuzzDecode: decoding arbitrary bytes never panics, fails only with a typed *Error, and
// what it decodes is a fixed point of Encode then Decode.
func FuzzDecode(f *testing.F) {
	files, _ := filepath.Glob("testdata/golden/*.pb")
	for i, p := range files {
		b, _ := os.ReadFile(p)
		if env, err := Unwrap(b); err == nil {
			f.Add(env.Raw, uint8(i))
		}
	}
	f.Fuzz(func(t *testing.T, data []byte, k uint8) {
		ty := kindAt(k)
		if ty.JSON != "" {
			return
		}
		m, err := Decode(ty, data)
		if err != nil {
			checkErr(t, err)
			return
		}
		enc, err := Encode(ty, m)
		if err != nil {
			t.Fatalf("decoded %v does not encode: %v", m, err)
		}
		// One round may lose what JSON cannot hold (a present but zero time pointer is
		// null, and null is absent), as with encoding/json; after it, nothing changes.
		m2, err := Decode(ty, enc)
		if err != nil {
			t.Fatalf("re-encoded bytes do not decode: %v", err)
		}
		enc2, err := Encode(ty, m2)
		if err != nil {
			t.Fatalf("decoded %v does not encode: %v", m2, err)
		}
		m3, err := Decode(ty, enc2)
		if err != nil {
			t.Fatalf("re-encoded bytes do not decode: %v", err)
		}
		if d := cmp.Diff(m2, m3); d != "" || !bytes.Equal(enc2, mustEncode(t, ty, m3)) {
			t.Fatalf("the round trip is not stable:\n%s", d)
		}
	})
}

func mustEncode(t *testing.T, ty *kubeschema.Type, m map[string]any) []byte {
	b, err := Encode(ty, m)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// FuzzRoundTrip: encoding arbitrary JSON objects fails only with a typed *Error; what
// encodes decodes to JSON that encodes to the same bytes (the encoding is canonical).
func FuzzRoundTrip(f *testing.F) {
	files, _ := filepath.Glob("testdata/golden/*.json")
	for i, p := range files {
		b, _ := os.ReadFile(p)
		f.Add(b, uint8(i))
	}
	f.Add([]byte(`{"metadata":{"name":"a","labels":{"x":"y"}},"spec":{"replicas":3,"template":{"spec":{"containers":[{"name":"c","image":"i","ports":[{"containerPort":80}]}]}}}}`), uint8(8))
	f.Fuzz(func(t *testing.T, data []byte, k uint8) {
		ty := kindAt(k)
		if ty.JSON != "" {
			return
		}
		d := json.NewDecoder(bytes.NewReader(data))
		d.UseNumber()
		var obj map[string]any
		if d.Decode(&obj) != nil || obj == nil {
			return
		}
		enc, err := Encode(ty, obj)
		if err != nil {
			checkErr(t, err)
			return
		}
		m, err := Decode(ty, enc)
		if err != nil {
			t.Fatalf("encoded bytes do not decode: %v", err)
		}
		enc2, err := Encode(ty, m)
		if err != nil {
			t.Fatalf("decoded %v does not encode: %v", m, err)
		}
		if !bytes.Equal(enc, enc2) {
			t.Fatalf("encode(decode(encode(obj))) differs:\n%x\n%x", enc, enc2)
		}
	})
}
