package kuberecord

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"sort"
	"strings"
)

// Stubs is testdata/kube-apiserver/stubs.json: one valid object per stored resource.
type Stubs struct {
	// Source names the release the stubs were taken from.
	Source string `json:"source"`
	// Namespace is the namespace the namespaced stubs are created in.
	Namespace string `json:"namespace"`
	Stubs     []Stub `json:"stubs"`
}

// Stub is one resource's object.
type Stub struct {
	Group    string `json:"group,omitempty"`
	Version  string `json:"version"`
	Resource string `json:"resource"`
	// Object is the JSON to create, without apiVersion and kind.
	Object json.RawMessage `json:"object"`
	// Prerequisites are created first, in order.
	Prerequisites []Stub `json:"prerequisites,omitempty"`
}

// Key is "group/version/resource" ("/v1/pods" for the core group).
func (s Stub) Key() string { return s.Group + "/" + s.Version + "/" + s.Resource }

// ReadStubs reads a stubs file.
func ReadStubs(path string) (*Stubs, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var s Stubs
	if err := json.Unmarshal(b, &s); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return &s, nil
}

// Served is testdata/kube-apiserver/served.json: the resources a server serves.
type Served struct {
	// Source is the server's /version gitVersion ("v1.36.3").
	Source string `json:"source"`
	// Resources are in the server's discovery order: groups by priority (the core group
	// first), each group's versions preferred first, resources by name.
	Resources []Resource `json:"resources"`
}

// Resource is one resource of one group version.
type Resource struct {
	Group    string `json:"group,omitempty"`
	Version  string `json:"version"`
	Resource string `json:"resource"`
	Kind     string `json:"kind"`
	// Namespaced is the scope.
	Namespaced         bool          `json:"namespaced,omitempty"`
	Singular           string        `json:"singular"`
	Verbs              []string      `json:"verbs"`
	ShortNames         []string      `json:"shortNames,omitempty"`
	Categories         []string      `json:"categories,omitempty"`
	StorageVersionHash string        `json:"storageVersionHash,omitempty"`
	Subresources       []Subresource `json:"subresources,omitempty"`
	Columns            []Column      `json:"columns,omitempty"`
	Probe              *Probe        `json:"probe,omitempty"`
	// Problems are disagreements between the legacy and the aggregated discovery.
	Problems []string `json:"problems,omitempty"`
}

// Key is "group/version/resource".
func (r Resource) Key() string { return r.Group + "/" + r.Version + "/" + r.Resource }

// Subresource is one subresource of a Resource.
type Subresource struct {
	Name string `json:"name"`
	// Group, Version and Kind are the kind it takes and answers (the parent's group and
	// version when empty).
	Group   string   `json:"group,omitempty"`
	Version string   `json:"version,omitempty"`
	Kind    string   `json:"kind"`
	Verbs   []string `json:"verbs"`
}

// Column is one column definition of the resource's Tables.
type Column struct {
	Name        string `json:"name"`
	Type        string `json:"type"`
	Format      string `json:"format,omitempty"`
	Priority    int    `json:"priority,omitempty"`
	Description string `json:"description,omitempty"`
}

// Probe is what the server did with the resource's stub.
type Probe struct {
	// Generation: the created object has metadata.generation.
	Generation bool `json:"generation,omitempty"`
	// CreateOnUpdate is the status of an update (PUT) of a missing object: 201 when the
	// resource creates on update, 404 when not.
	CreateOnUpdate int `json:"createOnUpdate"`
	// Names are the statuses of creates of the stub with the names "n.a", "1n", "n:a" and
	// "n" (each with a unique suffix): which of DNS subdomains, DNS labels, DNS-1035 labels
	// and path segments the resource takes.
	Names [4]int `json:"names"`
}

// Objects is testdata/kube-apiserver/objects.json: what the server made of the stubs, and
// the objects of a fresh cluster.
type Objects struct {
	Source  string   `json:"source"`
	Objects []Object `json:"objects"`
}

// Object is the server's answer about one object.
type Object struct {
	// Key is a stub's "group/version/resource", or "fresh/<what>" for the objects a fresh
	// cluster has.
	Key string `json:"key"`
	// Status is the create's status code.
	Status int `json:"status,omitempty"`
	// Object is the normalised answer.
	Object json.RawMessage `json:"object"`
	// Cells are the object's Table row, normalised.
	Cells []any `json:"cells,omitempty"`
}

// Encode writes the recording with one resource per line.
func (s *Served) Encode() []byte {
	var buf bytes.Buffer
	fmt.Fprintf(&buf, "{\n\"source\": %q,\n\"resources\": [\n", s.Source)
	for i, r := range s.Resources {
		b, _ := json.Marshal(r)
		buf.Write(b)
		if i < len(s.Resources)-1 {
			buf.WriteByte(',')
		}
		buf.WriteByte('\n')
	}
	buf.WriteString("]}\n")
	return buf.Bytes()
}

// Encode writes the objects with one object per line, sorted by key.
func (o *Objects) Encode() []byte {
	sort.SliceStable(o.Objects, func(i, j int) bool { return o.Objects[i].Key < o.Objects[j].Key })
	var buf bytes.Buffer
	fmt.Fprintf(&buf, "{\n\"source\": %q,\n\"objects\": [\n", o.Source)
	for i, x := range o.Objects {
		b, _ := json.Marshal(x)
		buf.Write(b)
		if i < len(o.Objects)-1 {
			buf.WriteByte(',')
		}
		buf.WriteByte('\n')
	}
	buf.WriteString("]}\n")
	return buf.Bytes()
}

// ReadServed reads a served.json.
func ReadServed(path string) (*Served, error) {
	var s Served
	return &s, readJSON(path, &s)
}

// ReadObjects reads an objects.json.
func ReadObjects(path string) (*Objects, error) {
	var o Objects
	return &o, readJSON(path, &o)
}

func readJSON(path string, v any) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(b, v); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return nil
}

// Diff compares two recordings line by line, keyed by the first field of each line (the
// resource or object it describes), and returns one message per key whose lines differ,
// in the order of want (then the keys only got has).
func Diff(want, got []byte) []string {
	wl, wk := lines(want)
	gl, gk := lines(got)
	var out []string
	for _, k := range wk {
		switch g, ok := gl[k]; {
		case !ok:
			out = append(out, fmt.Sprintf("missing %s\n  want %s", k, wl[k]))
		case g != wl[k]:
			out = append(out, k+" differs"+fieldDiff(wl[k], g))
		}
	}
	for _, k := range gk {
		if _, ok := wl[k]; !ok {
			out = append(out, fmt.Sprintf("unexpected %s\n  got  %s", k, gl[k]))
		}
	}
	return out
}

// lines splits an encoded recording into its entries, keyed by group/version/resource or
// the object key.
func lines(b []byte) (map[string]string, []string) {
	m := map[string]string{}
	var keys []string
	for _, l := range bytes.Split(b, []byte("\n")) {
		l = bytes.TrimSuffix(l, []byte(","))
		if !bytes.HasPrefix(l, []byte("{\"")) {
			if bytes.HasPrefix(l, []byte("\"source\"")) {
				m["source"], keys = string(l), append(keys, "source")
			}
			continue
		}
		var head struct {
			Key                      string
			Group, Version, Resource string
		}
		json.Unmarshal(l, &head)
		k := head.Key
		if k == "" {
			k = head.Group + "/" + head.Version + "/" + head.Resource
		}
		if _, dup := m[k]; !dup {
			keys = append(keys, k)
		}
		m[k] = string(l)
	}
	return m, keys
}

// fieldDiff lists the paths at which two JSON lines differ, with both values (long values
// cut), or the two lines if they are not both JSON.
func fieldDiff(want, got string) string {
	var w, g any
	if json.Unmarshal([]byte(want), &w) != nil || json.Unmarshal([]byte(got), &g) != nil {
		return fmt.Sprintf("\n  want %s\n  got  %s", want, got)
	}
	var b strings.Builder
	diffValues(&b, "", w, g)
	return b.String()
}

func diffValues(b *strings.Builder, path string, w, g any) {
	wm, wok := w.(map[string]any)
	gm, gok := g.(map[string]any)
	if wok && gok {
		keys := map[string]bool{}
		for k := range wm {
			keys[k] = true
		}
		for k := range gm {
			keys[k] = true
		}
		for _, k := range sortedKeys(keys) {
			diffValues(b, path+"."+k, wm[k], gm[k])
		}
		return
	}
	wl, wok := w.([]any)
	gl, gok := g.([]any)
	if wok && gok && len(wl) == len(gl) {
		for i := range wl {
			diffValues(b, fmt.Sprintf("%s[%d]", path, i), wl[i], gl[i])
		}
		return
	}
	wb, _ := json.Marshal(w)
	gb, _ := json.Marshal(g)
	if !bytes.Equal(wb, gb) {
		fmt.Fprintf(b, "\n  %s: want %s, got %s", strings.TrimPrefix(path, "."), cut(wb), cut(gb))
	}
}

func cut(b []byte) string {
	if len(b) > 300 {
		return string(b[:300]) + "..."
	}
	return string(b)
}
