package kubeschema

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"
	"sync"
)

// Loading. The table holds every kind the kube-apiserver serves, but a program uses a few:
// at first use only the head of schema.json (source, kinds, resources) is decoded and the
// type blocks are indexed by name; a type is decoded when it is first looked up (with the
// types it inlines, whose fields are its JSON fields), and a field's message type when
// Field.Type first asks for it. bench/README.md, "kubeschema", has the figures.

// kindEntry is a line of the table's kinds.
type kindEntry struct {
	GroupVersionKind
	Type     string `json:"type"`
	ListType string `json:"listType"`
}

type table struct {
	Source    string      `json:"source"`
	Kinds     []kindEntry `json:"kinds"`
	Resources []Resource  `json:"resources"`

	// blocks are the undecoded types, by name; names in file order (sorted).
	blocks map[string][]byte
	names  []string
	gvks   map[string][]GroupVersionKind

	mu    sync.Mutex
	types map[string]*Type
}

var (
	loadOnce sync.Once
	loaded   *table
)

func load() *table {
	loadOnce.Do(func() {
		t, err := parse(schemaJSON)
		if err != nil {
			panic("kubeschema: the embedded table does not load: " + err.Error())
		}
		loaded = t
	})
	return loaded
}

// typesHead is the line that starts the type blocks.
var typesHead = []byte("\"types\": [\n")

// parse decodes the head of a table and indexes its type blocks (one per line, the
// fields of a type on the lines that follow its head, as schemagen writes them).
func parse(b []byte) (*table, error) {
	i := bytes.Index(b, typesHead)
	if i < 0 {
		return nil, fmt.Errorf("no %q line", bytes.TrimSpace(typesHead))
	}
	head := append(append([]byte{}, b[:i]...), []byte("\"types\": []}")...)
	var t table
	if err := json.Unmarshal(head, &t); err != nil {
		return nil, err
	}
	t.blocks = map[string][]byte{}
	t.types = map[string]*Type{}
	body := b[i+len(typesHead):]
	for len(body) > 0 {
		// A block starts at a line beginning with {"name":" and runs to the next one.
		end := bytes.Index(body[1:], []byte("\n{\"name\":\""))
		var blk []byte
		if end < 0 {
			blk, body = body, nil
		} else {
			blk, body = body[:end+1], body[end+2:]
		}
		// A block ends with the comma before the next one, or with the list's "]}".
		blk = bytes.TrimSpace(blk)
		if bytes.HasSuffix(blk, []byte("\n]}")) {
			blk = bytes.TrimSpace(blk[:len(blk)-2])
		}
		blk = bytes.TrimSuffix(blk, []byte(","))
		if len(blk) == 0 {
			continue
		}
		name, err := blockName(blk)
		if err != nil {
			return nil, err
		}
		if _, dup := t.blocks[name]; dup {
			return nil, fmt.Errorf("type %s twice", name)
		}
		t.blocks[name] = blk
		t.names = append(t.names, name)
	}
	sort.Strings(t.names)
	t.gvks = map[string][]GroupVersionKind{}
	for _, k := range t.Kinds {
		if t.blocks[k.Type] == nil || (k.ListType != "" && t.blocks[k.ListType] == nil) {
			return nil, fmt.Errorf("kind %s: unknown type", k.Kind)
		}
		t.gvks[k.Type] = append(t.gvks[k.Type], k.GroupVersionKind)
		if k.ListType != "" {
			t.gvks[k.ListType] = append(t.gvks[k.ListType], GroupVersionKind{k.Group, k.Version, k.Kind + "List"})
		}
	}
	return &t, nil
}

// blockName reads the name that opens a type block: {"name":"io.k8s...",...
func blockName(blk []byte) (string, error) {
	rest, ok := bytes.CutPrefix(blk, []byte(`{"name":"`))
	if !ok {
		return "", fmt.Errorf("a type block does not start with its name: %.40q", blk)
	}
	i := bytes.IndexByte(rest, '"')
	if i < 0 {
		return "", fmt.Errorf("a type block's name does not end: %.40q", blk)
	}
	return string(rest[:i]), nil
}

// lookup returns the type name decoded, or nil if the table has none.
func (t *table) lookup(name string) *Type {
	if name == "" {
		return nil
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	ty, err := t.decodeLocked(name)
	if err != nil {
		panic("kubeschema: the embedded table does not load: " + err.Error())
	}
	return ty
}

// decodeLocked decodes a type, and the types it inlines, once. t.mu held.
func (t *table) decodeLocked(name string) (*Type, error) {
	if ty, ok := t.types[name]; ok {
		return ty, nil
	}
	blk := t.blocks[name]
	if blk == nil {
		return nil, nil
	}
	ty := &Type{}
	if err := json.Unmarshal(blk, ty); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	t.types[name] = ty
	ty.gvks = t.gvks[name]
	ty.byName = make(map[string]*Field, len(ty.Fields))
	ty.byNumber = make(map[int]*Field, len(ty.Fields))
	for _, f := range ty.Fields {
		f.owner = ty
		if f.Kind == Message && t.blocks[f.TypeName] == nil {
			return nil, fmt.Errorf("%s.%s: unknown type %s", name, f.Name, f.TypeName)
		}
		if f.Number != 0 {
			if ty.byNumber[f.Number] != nil {
				return nil, fmt.Errorf("%s: field number %d twice", name, f.Number)
			}
			ty.byNumber[f.Number] = f
		}
	}
	// JSON names, looking through inline fields (their names belong to the outer object).
	var index func(from *Type) error
	index = func(from *Type) error {
		for _, f := range from.Fields {
			if f.Inline {
				in, err := t.decodeLocked(f.TypeName)
				if err != nil {
					return err
				}
				f.typ.Store(in)
				if err := index(in); err != nil {
					return err
				}
				continue
			}
			if f.NoJSON {
				continue
			}
			if ty.byName[f.Name] != nil {
				return fmt.Errorf("%s: JSON name %q twice", name, f.Name)
			}
			ty.byName[f.Name] = f
		}
		return nil
	}
	if err := index(ty); err != nil {
		return nil, err
	}
	return ty, nil
}

// all decodes every type.
func (t *table) all() []*Type {
	out := make([]*Type, 0, len(t.names))
	for _, n := range t.names {
		out = append(out, t.lookup(n))
	}
	return out
}

// kindInfos are the kinds with their types decoded.
func (t *table) kindInfos() []KindInfo {
	out := make([]KindInfo, 0, len(t.Kinds))
	for _, k := range t.Kinds {
		out = append(out, KindInfo{GroupVersionKind: k.GroupVersionKind, Type: t.lookup(k.Type), List: t.lookup(k.ListType)})
	}
	return out
}
