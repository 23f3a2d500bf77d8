package ssa

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/informerkit/informerkit/apitest/internal/fieldpath"
)

// The operations of managedFields entries.
const (
	OperationApply  = "Apply"
	OperationUpdate = "Update"
)

// ManagerKey identifies one managedFields entry: a manager's applies (one entry whatever
// the API version) or its updates through one API version, per subresource.
type ManagerKey struct {
	Manager   string
	Operation string
	// APIVersion is the version of an Update entry ("" for Apply).
	APIVersion  string
	Subresource string
}

// String renders the manager as the kube-apiserver's conflict messages do: "\"m\"",
// "\"m\" with subresource \"status\"", and for updates "\"m\" using apps/v1".
func (k ManagerKey) String() string {
	s := fmt.Sprintf("%q", k.Manager)
	if k.Subresource != "" {
		s += fmt.Sprintf(" with subresource %q", k.Subresource)
	}
	if k.Operation == OperationUpdate {
		s += " using " + k.APIVersion
	}
	return s
}

// less orders managers as the kube-apiserver's conflict messages do (by their identifier).
func (k ManagerKey) less(o ManagerKey) bool {
	if k.Manager != o.Manager {
		return k.Manager < o.Manager
	}
	if k.Operation != o.Operation {
		return k.Operation < o.Operation
	}
	if k.APIVersion != o.APIVersion {
		return k.APIVersion < o.APIVersion
	}
	return k.Subresource < o.Subresource
}

// Owned is the set of fields one manager owns, and the API version it was written in.
type Owned struct {
	Set        *fieldpath.Set
	APIVersion string
	Applied    bool
}

// Managed is an object's managedFields, decoded: each manager's fields and the time of
// its last change (nil if unknown).
type Managed struct {
	Fields map[ManagerKey]Owned
	Times  map[ManagerKey]*time.Time
}

// NewManaged returns an empty Managed.
func NewManaged() *Managed {
	return &Managed{Fields: map[ManagerKey]Owned{}, Times: map[ManagerKey]*time.Time{}}
}

// Copy returns a copy whose maps may be changed without changing m (the sets are shared;
// they are never modified in place).
func (m *Managed) Copy() *Managed {
	out := NewManaged()
	for k, v := range m.Fields {
		out.Fields[k] = v
	}
	for k, v := range m.Times {
		out.Times[k] = v
	}
	return out
}

// Entry is one element of metadata.managedFields.
type Entry struct {
	Manager     string          `json:"manager,omitempty"`
	Operation   string          `json:"operation,omitempty"`
	APIVersion  string          `json:"apiVersion,omitempty"`
	Time        string          `json:"time,omitempty"`
	FieldsType  string          `json:"fieldsType,omitempty"`
	FieldsV1    json.RawMessage `json:"fieldsV1,omitempty"`
	Subresource string          `json:"subresource,omitempty"`
}

// DecodeManaged reads metadata.managedFields (the JSON value: a list of entries, or nil).
// It fails, as the kube-apiserver does, on an operation other than Apply or Update, an
// empty apiVersion, a fieldsType other than FieldsV1 or fields that do not parse.
func DecodeManaged(v any) (*Managed, error) {
	m := NewManaged()
	if v == nil {
		return m, nil
	}
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	var entries []Entry
	if err := json.Unmarshal(b, &entries); err != nil {
		return nil, fmt.Errorf("managedFields: %v", err)
	}
	for i, e := range entries {
		switch e.Operation {
		case OperationApply, OperationUpdate:
		default:
			return nil, fmt.Errorf("operation must be `Apply` or `Update`")
		}
		if e.APIVersion == "" {
			return nil, fmt.Errorf("apiVersion must not be empty")
		}
		switch e.FieldsType {
		case "FieldsV1":
		case "":
			return nil, fmt.Errorf("missing fieldsType in managed fields entry %d", i)
		default:
			return nil, fmt.Errorf("invalid fieldsType %q in managed fields entry %d", e.FieldsType, i)
		}
		key := ManagerKey{Manager: e.Manager, Operation: e.Operation, Subresource: e.Subresource}
		if e.Operation == OperationUpdate {
			key.APIVersion = e.APIVersion
		}
		set := fieldpath.NewSet()
		if len(e.FieldsV1) > 0 && string(e.FieldsV1) != "null" {
			if set, err = fieldpath.FromFieldsV1(e.FieldsV1); err != nil {
				return nil, fmt.Errorf("error decoding versioned set: %v", err)
			}
		}
		m.Fields[key] = Owned{Set: set, APIVersion: e.APIVersion, Applied: e.Operation == OperationApply}
		if e.Time != "" {
			if t, err := time.Parse(time.RFC3339, e.Time); err == nil {
				m.Times[key] = &t
			}
		}
	}
	return m, nil
}

// isReset reports whether v is what a client sends to clear managedFields: a list of one
// empty entry, or an empty list.
func isReset(v any) bool {
	l, ok := v.([]any)
	if !ok {
		return false
	}
	if len(l) == 0 {
		return true
	}
	if len(l) == 1 {
		m, ok := l[0].(map[string]any)
		return ok && len(m) == 0
	}
	return false
}

// Encode returns the managedFields value to store (nil when no manager owns anything),
// sorted as the kube-apiserver sorts it: applies before updates, then by time, manager,
// API version and subresource.
func (m *Managed) Encode() []any {
	if len(m.Fields) == 0 {
		return nil
	}
	type ent struct {
		key   ManagerKey
		owned Owned
		t     *time.Time
	}
	ents := make([]ent, 0, len(m.Fields))
	for k, o := range m.Fields {
		ents = append(ents, ent{k, o, m.Times[k]})
	}
	sec := func(t *time.Time) int64 {
		if t == nil {
			return 0
		}
		return t.Unix()
	}
	sort.Slice(ents, func(i, j int) bool {
		p, q := ents[i], ents[j]
		po, qo := p.key.Operation, q.key.Operation
		if p.owned.Applied {
			po = OperationApply
		}
		if q.owned.Applied {
			qo = OperationApply
		}
		if po != qo {
			return po < qo
		}
		if a, b := sec(p.t), sec(q.t); a != b {
			return a < b
		}
		if p.key.Manager != q.key.Manager {
			return p.key.Manager < q.key.Manager
		}
		if p.owned.APIVersion != q.owned.APIVersion {
			return p.owned.APIVersion < q.owned.APIVersion
		}
		return p.key.Subresource < q.key.Subresource
	})
	out := make([]any, 0, len(ents))
	for _, e := range ents {
		op := e.key.Operation
		if e.owned.Applied {
			op = OperationApply
		}
		entry := map[string]any{
			"manager":    e.key.Manager,
			"operation":  op,
			"apiVersion": e.owned.APIVersion,
			"fieldsType": "FieldsV1",
			"fieldsV1":   json.RawMessage(e.owned.Set.FieldsV1()),
		}
		if e.key.Manager == "" {
			delete(entry, "manager")
		}
		if e.t != nil {
			entry["time"] = e.t.UTC().Format(time.RFC3339)
		}
		if e.key.Subresource != "" {
			entry["subresource"] = e.key.Subresource
		}
		out = append(out, entry)
	}
	return out
}

// Conflict is a field another manager owns with a different value than an apply sets.
type Conflict struct {
	Manager ManagerKey
	Path    fieldpath.Path
}

// ConflictError is an apply's conflicts, in the order the kube-apiserver lists them (by
// manager, then by field).
type ConflictError struct {
	Conflicts []Conflict
}

// Error is the kube-apiserver's message: "Apply failed with 1 conflict: conflict with
// \"m\": .spec.replicas", or for several one line per manager and field.
func (e *ConflictError) Error() string {
	c := e.Conflicts
	if len(c) == 1 {
		return fmt.Sprintf("Apply failed with 1 conflict: conflict with %v: %v", c[0].Manager, c[0].Path)
	}
	var lines []string
	var last *Conflict
	for i := range c {
		if last == nil || last.Manager != c[i].Manager {
			lines = append(lines, fmt.Sprintf("conflicts with %v:", c[i].Manager))
			last = &c[i]
		}
		lines = append(lines, "- "+c[i].Path.String())
	}
	return fmt.Sprintf("Apply failed with %d conflicts: %s", len(c), strings.Join(lines, "\n"))
}
