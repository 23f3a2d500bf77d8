package ssa

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/informerkit/informerkit/apitest/internal/fieldpath"
	"github.com/informerkit/informerkit/apitest/internal/mergeschema"
)

// FieldManager keeps the managedFields of one resource's objects, written through one
// endpoint (the resource or one of its subresources), as the kube-apiserver's field
// manager does: every create, update and patch records what its manager changed
// (operation Update), and apply (operation Apply) merges a configuration, checks it
// against the other managers' fields and removes what the applier no longer applies.
type FieldManager struct {
	// Schema describes the objects.
	Schema mergeschema.Type
	// APIVersion is the resource's "group/version" ("v1", "apps/v1").
	APIVersion string
	// Kind is the objects' kind.
	Kind string
	// Subresource is the endpoint's subresource ("" for the resource itself, "status").
	Subresource string
	// Reset are the fields this endpoint does not write (the strategy resets them: status
	// for the resource itself, spec and more for status); nobody owns them here.
	Reset *fieldpath.Set
	// Empty returns the object a create starts from: the kind's zero value as its Go type
	// encodes it ({"metadata":{"creationTimestamp":null},"spec":{...},"status":{}}), or
	// apiVersion and kind alone for custom resources.
	Empty func() map[string]any
	// Now is the clock (time.Now if nil).
	Now func() time.Time

	emptyOnce sync.Once
	emptyObj  map[string]any
}

// maxUpdateManagers is how many Update entries an object keeps; older ones merge into
// "ancient-changes".
const maxUpdateManagers = 10

// lastAppliedAnnotation is kubectl's client-side apply record.
const lastAppliedAnnotation = "kubectl.kubernetes.io/last-applied-configuration"

// stripped are the fields nobody owns: type and identity metadata the server sets.
var stripped = fieldpath.NewSet(
	fieldpath.MakePath("apiVersion"),
	fieldpath.MakePath("kind"),
	fieldpath.MakePath("metadata"),
	fieldpath.MakePath("metadata", "name"),
	fieldpath.MakePath("metadata", "namespace"),
	fieldpath.MakePath("metadata", "creationTimestamp"),
	fieldpath.MakePath("metadata", "selfLink"),
	fieldpath.MakePath("metadata", "uid"),
	fieldpath.MakePath("metadata", "clusterName"),
	fieldpath.MakePath("metadata", "generation"),
	fieldpath.MakePath("metadata", "managedFields"),
	fieldpath.MakePath("metadata", "resourceVersion"),
)

func (f *FieldManager) now() *time.Time {
	var t time.Time
	if f.Now != nil {
		t = f.Now()
	} else {
		t = time.Now()
	}
	t = t.UTC().Truncate(time.Second)
	return &t
}

// empty is Empty's object, made once: the walks only read it.
func (f *FieldManager) empty() map[string]any {
	f.emptyOnce.Do(func() { f.emptyObj = f.Empty() })
	return f.emptyObj
}

func (f *FieldManager) updater() *updater {
	return &updater{schema: f.Schema, ignore: f.Reset}
}

func meta(obj map[string]any) map[string]any {
	m, _ := obj["metadata"].(map[string]any)
	return m
}

func setManagedFields(obj map[string]any, managed *Managed) {
	m := meta(obj)
	if m == nil {
		m = map[string]any{}
		obj["metadata"] = m
	}
	if enc := managed.Encode(); enc != nil {
		m["managedFields"] = enc
	} else {
		delete(m, "managedFields")
	}
}

func (f *FieldManager) key(manager, operation string) ManagerKey {
	if manager == "" {
		manager = "unknown"
	}
	k := ManagerKey{Manager: manager, Operation: operation, Subresource: f.Subresource}
	if operation == OperationUpdate {
		k.APIVersion = f.APIVersion
	}
	return k
}

// ManagerFromUserAgent is the manager of a write without a fieldManager: the user agent
// up to its first "/", printable characters only, at most 128 bytes.
func ManagerFromUserAgent(ua string) string {
	head, _, _ := strings.Cut(ua, "/")
	var b strings.Builder
	for _, r := range head {
		if !isPrint(r) {
			continue
		}
		if b.Len()+len(string(r)) > 128 {
			break
		}
		b.WriteRune(r)
	}
	return b.String()
}

func isPrint(r rune) bool {
	return r >= 0x20 && r != 0x7f && !(r >= 0x80 && r < 0xa0) && r != 0xfffd
}

// Update records a create (live nil) or an update of live into obj by manager: obj's
// metadata.managedFields is set to what it should store. The managedFields obj carries
// are the starting point if they are valid and not empty (a client may set them; a list of
// one empty entry clears them) and the endpoint is not a subresource; otherwise live's.
// An existing object that has no managedFields keeps none, as on the kube-apiserver.
func (f *FieldManager) Update(live, obj map[string]any, manager string) {
	managed := f.decodeLiveOrNew(live, obj)
	if m := meta(obj); m != nil {
		delete(m, "managedFields")
	}
	if len(managed.Fields) == 0 && live != nil && meta(live)["uid"] != nil {
		setManagedFields(obj, managed)
		return
	}
	if live == nil {
		live = f.empty()
	}
	if err := f.update(live, obj, managed, f.key(manager, OperationUpdate)); err != nil {
		// As the kube-apiserver's UpdateNoErrors: drop managedFields rather than fail.
		delete(meta(obj), "managedFields")
		return
	}
	setManagedFields(obj, managed)
}

func (f *FieldManager) decodeLiveOrNew(live, obj map[string]any) *Managed {
	fromLive := func() *Managed {
		if live == nil {
			return NewManaged()
		}
		m, err := DecodeManaged(meta(live)["managedFields"])
		if err != nil {
			return NewManaged()
		}
		return m
	}
	if f.Subresource != "" {
		return fromLive()
	}
	v := meta(obj)["managedFields"]
	if isReset(v) {
		return NewManaged()
	}
	m, err := DecodeManaged(v)
	if err != nil || len(m.Fields) == 0 {
		return fromLive()
	}
	return m
}

// update is the Update operation on decoded managedFields: the change is recorded under a
// temporary manager, then merged into the manager's entry (whose time changes only if it
// changed something), and the Update entries are capped.
func (f *FieldManager) update(live, obj map[string]any, managed *Managed, key ManagerKey) error {
	current := ManagerKey{Manager: "current-operation", Operation: OperationUpdate, APIVersion: f.APIVersion}
	if err := f.updater().update(live, obj, f.APIVersion, managed.Fields, current); err != nil {
		return err
	}
	if o, ok := managed.Fields[current]; ok {
		delete(managed.Fields, current)
		o.Set = o.Set.Difference(stripped)
		if !o.Set.Empty() {
			if prev, ok := managed.Fields[key]; ok {
				o.Set = o.Set.Union(prev.Set)
			}
			managed.Fields[key] = o
			managed.Times[key] = f.now()
		}
	}
	f.capUpdaters(managed)
	return nil
}

// capUpdaters merges the oldest Update entries into "ancient-changes" (one per API
// version) while there are more than maxUpdateManagers.
func (f *FieldManager) capUpdaters(managed *Managed) {
	var updaters []ManagerKey
	for k, o := range managed.Fields {
		if !o.Applied {
			updaters = append(updaters, k)
		}
	}
	if len(updaters) <= maxUpdateManagers {
		return
	}
	sec := func(k ManagerKey) int64 {
		if t := managed.Times[k]; t != nil {
			return t.Unix()
		}
		return 0
	}
	sort.Slice(updaters, func(i, j int) bool {
		if a, b := sec(updaters[i]), sec(updaters[j]); a != b {
			return a < b
		}
		return updaters[i].less(updaters[j])
	})
	first := map[string]ManagerKey{}
	n := len(updaters)
	for _, k := range updaters {
		if n <= maxUpdateManagers {
			break
		}
		o := managed.Fields[k]
		bucket := ManagerKey{Manager: "ancient-changes", Operation: OperationUpdate, APIVersion: o.APIVersion}
		fk, ok := first[o.APIVersion]
		if !ok {
			first[o.APIVersion] = k
			continue
		}
		if _, ok := managed.Fields[bucket]; !ok {
			managed.Fields[bucket] = managed.Fields[fk]
			delete(managed.Fields, fk)
		}
		b := managed.Fields[bucket]
		managed.Fields[bucket] = Owned{Set: o.Set.Union(b.Set), APIVersion: o.APIVersion}
		managed.Times[bucket] = managed.Times[k]
		delete(managed.Fields, k)
		delete(managed.Times, k)
		n--
	}
}

// ApplyError is an apply that fails for another reason than conflicts, with the HTTP
// status the kube-apiserver answers (400 for what the client sent, 500 for a
// configuration it cannot type).
type ApplyError struct {
	Code    int
	Message string
}

func (e *ApplyError) Error() string { return e.Message }

// Apply merges config into live (nil: the object does not exist) for manager and returns
// the object to store, with its managedFields. It fails with a *ConflictError when another
// manager owns a field config changes (unless force, which takes them) and with an
// *ApplyError when config is not an object of this kind. changed is false when the
// object (managedFields aside) stays as it is.
func (f *FieldManager) Apply(live, config map[string]any, manager string, force bool) (out map[string]any, changed bool, err error) {
	av, _ := config["apiVersion"].(string)
	kind, _ := config["kind"].(string)
	if av != f.APIVersion || kind != f.Kind {
		return nil, false, &ApplyError{Code: 400, Message: fmt.Sprintf("invalid object type: %s", gvkString(av, kind))}
	}
	creating := live == nil
	if creating {
		live = f.Empty()
	}
	managed, err := DecodeManaged(meta(live)["managedFields"])
	if err != nil {
		return nil, false, &ApplyError{Code: 500, Message: "failed to decode managed fields: " + err.Error()}
	}
	out, changed, err = f.apply(live, config, managed, manager, force)
	if manager == "kubectl" {
		if ce, ok := err.(*ConflictError); ok {
			// kubectl moving from client-side to server-side apply: conflicts on fields its
			// last-applied-configuration set, and that still hold those values, are its own.
			allowed := f.lastAppliedFields(live)
			var rest []Conflict
			for _, c := range ce.Conflicts {
				if !allowed.Has(c.Path) {
					rest = append(rest, c)
				}
			}
			if len(rest) > 0 {
				return nil, false, &ConflictError{Conflicts: rest}
			}
			out, changed, err = f.apply(live, config, managed, manager, true)
		}
	}
	if err != nil {
		return nil, false, err
	}
	if manager == "kubectl" && hasLastApplied(out) {
		la := copyMap(config)
		if m := meta(la); m != nil {
			if a, ok := m["annotations"].(map[string]any); ok {
				a = copyMap(a)
				delete(a, lastAppliedAnnotation)
				m = copyMap(m)
				if len(a) > 0 {
					m["annotations"] = a
				} else {
					delete(m, "annotations")
				}
				la["metadata"] = m
			}
		}
		b, _ := json.Marshal(la)
		out = setAnnotation(out, lastAppliedAnnotation, string(b)+"\n")
		changed = changed || !Equal(meta(live)["annotations"], meta(out)["annotations"])
	}
	return out, changed, nil
}

func (f *FieldManager) apply(live, config map[string]any, managed *Managed, manager string, force bool) (map[string]any, bool, error) {
	managed = managed.Copy()
	if len(managed.Fields) == 0 {
		// The fields set before the first apply belong to "before-first-apply".
		next := copyMap(live)
		delete(meta(next), "managedFields")
		if err := f.update(f.empty(), next, managed, f.key("before-first-apply", OperationUpdate)); err != nil {
			return nil, false, err
		}
	}
	if m := meta(config); m != nil {
		if v, ok := m["managedFields"]; ok && v != nil {
			return nil, false, &ApplyError{Code: 400, Message: "metadata.managedFields must be nil"}
		}
	}
	if errs := Validate(config, f.Schema); len(errs) > 0 {
		ns, _ := meta(config)["namespace"].(string)
		name, _ := meta(config)["name"].(string)
		return nil, false, &ApplyError{Code: 500, Message: fmt.Sprintf("failed to create typed patch object (%s/%s; %s): %v",
			ns, name, gvkString(f.APIVersion, f.Kind), errs)}
	}
	key := f.key(manager, OperationApply)
	merged, changed, err := f.updater().apply(live, config, f.APIVersion, managed.Fields, key, force)
	if err != nil {
		return nil, false, err
	}
	if o, ok := managed.Fields[key]; ok {
		o.Set = o.Set.Difference(stripped)
		if o.Set.Empty() {
			delete(managed.Fields, key)
		} else {
			managed.Fields[key] = o
		}
	}
	var out map[string]any
	if changed {
		managed.Times[key] = f.now()
		out, _ = merged.(map[string]any)
		out = copyMap(out)
		if out == nil {
			out = map[string]any{}
		}
		if meta(out) != nil {
			out["metadata"] = copyMap(meta(out))
		}
	} else {
		out = copyMap(live)
		out["metadata"] = copyMap(meta(live))
	}
	setManagedFields(out, managed)
	return out, changed, nil
}

// lastAppliedFields are the fields of live's last-applied-configuration that still hold
// the values it gave them.
func (f *FieldManager) lastAppliedFields(live map[string]any) *fieldpath.Set {
	a, _ := meta(live)["annotations"].(map[string]any)
	s, _ := a[lastAppliedAnnotation].(string)
	if s == "" {
		return fieldpath.NewSet()
	}
	var la map[string]any
	if err := json.Unmarshal([]byte(s), &la); err != nil {
		return fieldpath.NewSet()
	}
	if av, _ := la["apiVersion"].(string); av != f.APIVersion {
		return fieldpath.NewSet()
	}
	set := FieldSet(la, f.Schema)
	c := Compare(la, live, f.Schema)
	return set.Difference(c.Modified).Difference(c.Added).Difference(c.Removed)
}

func hasLastApplied(obj map[string]any) bool {
	a, _ := meta(obj)["annotations"].(map[string]any)
	s, _ := a[lastAppliedAnnotation].(string)
	return s != ""
}

func setAnnotation(obj map[string]any, key, value string) map[string]any {
	obj = copyMap(obj)
	m := copyMap(meta(obj))
	a, _ := m["annotations"].(map[string]any)
	a = copyMap(a)
	a[key] = value
	m["annotations"] = a
	obj["metadata"] = m
	return obj
}

func copyMap(m map[string]any) map[string]any {
	out := make(map[string]any, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

// gvkString renders a group, version and kind as the kube-apiserver's messages do:
// "apps/v1, Kind=Deployment", "/v1, Kind=Pod".
func gvkString(apiVersion, kind string) string {
	group, version, ok := strings.Cut(apiVersion, "/")
	if !ok {
		group, version = "", apiVersion
	}
	return group + "/" + version + ", Kind=" + kind
}

// ScaleReplicas records, in an object's managedFields, a write of its scale subresource
// by manager that changed spec.replicas, as the kube-apiserver's scale handler does: the
// managers that owned spec.replicas lose it and manager owns it through the "scale"
// subresource, in the object's apiVersion, with no time. An object without managedFields
// keeps none. The result is what to store as metadata.managedFields.
func ScaleReplicas(managedFields any, apiVersion, manager string) (any, error) {
	m, err := DecodeManaged(managedFields)
	if err != nil {
		return nil, err
	}
	if len(m.Fields) == 0 {
		return managedFields, nil
	}
	replicas := fieldpath.NewSet(fieldpath.MakePath("spec", "replicas"))
	for k, o := range m.Fields {
		if !o.Set.Has(fieldpath.MakePath("spec", "replicas")) {
			continue
		}
		if o.Set = o.Set.Difference(replicas); o.Set.Empty() {
			delete(m.Fields, k)
			delete(m.Times, k)
		} else {
			m.Fields[k] = o
		}
	}
	if manager == "" {
		manager = "unknown"
	}
	key := ManagerKey{Manager: manager, Operation: OperationUpdate, APIVersion: apiVersion, Subresource: "scale"}
	m.Fields[key] = Owned{Set: replicas, APIVersion: apiVersion}
	delete(m.Times, key)
	if enc := m.Encode(); enc != nil {
		return enc, nil
	}
	return nil, nil
}

// ScaleApply records, in an object's managedFields, an apply of its scale subresource by
// manager, as the kube-apiserver's scale handler maps it onto the object: with replicas
// set, manager owns spec.replicas through "scale" (an Apply in the object's apiVersion,
// with no time); if that changes the value (changed), the other owners of spec.replicas
// conflict (a *ConflictError) unless force takes it from them. Without replicas, manager
// owns nothing. The result is what to store as metadata.managedFields.
func ScaleApply(managedFields any, apiVersion, manager string, replicas, changed, force bool) (any, error) {
	m, err := DecodeManaged(managedFields)
	if err != nil {
		return nil, err
	}
	path := fieldpath.MakePath("spec", "replicas")
	key := ManagerKey{Manager: manager, Operation: OperationApply, APIVersion: apiVersion, Subresource: "scale"}
	if replicas && changed {
		var conflicts []Conflict
		for k, o := range m.Fields {
			if k != key && o.Set.Has(path) {
				conflicts = append(conflicts, Conflict{Manager: k, Path: path})
			}
		}
		if len(conflicts) > 0 && !force {
			sort.Slice(conflicts, func(i, j int) bool { return conflicts[i].Manager.String() < conflicts[j].Manager.String() })
			return nil, &ConflictError{Conflicts: conflicts}
		}
		owned := fieldpath.NewSet(path)
		for k, o := range m.Fields {
			if k == key || !o.Set.Has(path) {
				continue
			}
			if o.Set = o.Set.Difference(owned); o.Set.Empty() {
				delete(m.Fields, k)
				delete(m.Times, k)
			} else {
				m.Fields[k] = o
			}
		}
	}
	if replicas {
		m.Fields[key] = Owned{Set: fieldpath.NewSet(path), APIVersion: apiVersion}
	} else {
		delete(m.Fields, key)
	}
	delete(m.Times, key)
	if enc := m.Encode(); enc != nil {
		return enc, nil
	}
	return nil, nil
}
