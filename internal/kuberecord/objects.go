package kuberecord

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"
)

// probeNames are the names Probe.Names tries, "%s" the run's unique part.
var probeNames = [4]string{"n%s.a", "1n%s", "n%s:a", "n%s"}

// run is one recording of the objects.
type run struct {
	t   Target
	id  string // unique to the run: names that cannot be reused (namespaces never go)
	ns  string
	out *Objects
}

// RecordObjects creates every stub of a resource s serves (the namespaced ones in
// stubs.Namespace, created if missing), sets the resources' Probe in s, and returns what
// the server answered, with the objects of a fresh cluster (the system namespaces and the
// kubernetes Service). Every object it creates is deleted again, so that a server can be
// recorded twice; a namespace is never deleted for good without the namespace controller,
// so the namespaces stub gets a unique name, normalised away in the recording.
func RecordObjects(ctx context.Context, t Target, stubs *Stubs, s *Served) (*Objects, error) {
	b := make([]byte, 3)
	rand.Read(b)
	rn := &run{t: t, id: hex.EncodeToString(b), ns: stubs.Namespace, out: &Objects{Source: s.Source}}
	if err := rn.fresh(ctx); err != nil {
		return nil, err
	}
	code, body, err := t.do(ctx, http.MethodPost, "/api/v1/namespaces", acceptJSON, acceptJSON,
		[]byte(`{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"`+rn.ns+`"}}`))
	if err != nil {
		return nil, err
	}
	if code != http.StatusCreated && code != http.StatusConflict {
		return nil, fmt.Errorf("creating namespace %s: %d %s", rn.ns, code, body)
	}
	byKey := map[string]*Resource{}
	for i := range s.Resources {
		byKey[s.Resources[i].Key()] = &s.Resources[i]
	}
	for _, st := range stubs.Stubs {
		r := byKey[st.Key()]
		if r == nil || !slices.Contains(r.Verbs, "create") {
			continue
		}
		if err := rn.stub(ctx, r, st); err != nil {
			return nil, err
		}
	}
	return rn.out, nil
}

// fresh records the objects a fresh cluster has.
func (rn *run) fresh(ctx context.Context) error {
	var nss struct {
		Items []map[string]any `json:"items"`
	}
	if err := rn.t.getJSON(ctx, "/api/v1/namespaces", acceptJSON, &nss); err != nil {
		return err
	}
	for _, ns := range nss.Items {
		name, _ := ns["metadata"].(map[string]any)["name"].(string)
		if name == "default" || strings.HasPrefix(name, "kube-") && name != rn.ns {
			rn.out.Objects = append(rn.out.Objects, Object{Key: "fresh/namespaces/" + name, Object: normalize(ns, rn.id)})
		}
	}
	code, body, err := rn.t.do(ctx, http.MethodGet, "/api/v1/namespaces/default/services/kubernetes", acceptJSON, "", nil)
	if err != nil {
		return err
	}
	var svc map[string]any
	json.Unmarshal(body, &svc)
	// The target port is the server's own port.
	if spec, ok := svc["spec"].(map[string]any); ok {
		ports, _ := spec["ports"].([]any)
		for _, p := range ports {
			if pm, ok := p.(map[string]any); ok && pm["targetPort"] != nil {
				pm["targetPort"] = Port
			}
		}
	}
	rn.out.Objects = append(rn.out.Objects, Object{Key: "fresh/services/default/kubernetes", Status: code, Object: normalize(svc, rn.id)})
	return nil
}

// objectPath is the path of the resource's collection ("" name) or of one object.
func (rn *run) objectPath(r *Resource, name string) string {
	p := groupVersion{r.Group, r.Version}.path()
	if r.Namespaced {
		p += "/namespaces/" + rn.ns
	}
	p += "/" + r.Resource
	if name != "" {
		p += "/" + name
	}
	return p
}

// body is the stub as a create body named name.
func body(r *Resource, st Stub, name string) ([]byte, error) {
	var obj map[string]any
	if err := json.Unmarshal(st.Object, &obj); err != nil {
		return nil, fmt.Errorf("stub %s: %w", st.Key(), err)
	}
	if r.Group == "" {
		obj["apiVersion"] = r.Version
	} else {
		obj["apiVersion"] = r.Group + "/" + r.Version
	}
	obj["kind"] = r.Kind
	md, _ := obj["metadata"].(map[string]any)
	if md == nil {
		md = map[string]any{}
		obj["metadata"] = md
	}
	md["name"] = name
	return json.Marshal(obj)
}

func stubName(st Stub) string {
	var obj struct {
		Metadata struct {
			Name string `json:"name"`
		} `json:"metadata"`
	}
	json.Unmarshal(st.Object, &obj)
	return obj.Metadata.Name
}

// stub creates one stub and probes the resource with it.
func (rn *run) stub(ctx context.Context, r *Resource, st Stub) error {
	name := stubName(st)
	if r.Resource == "namespaces" {
		name += "-" + rn.id
	}
	for _, p := range st.Prerequisites {
		pr := &Resource{Group: p.Group, Version: p.Version, Resource: p.Resource, Namespaced: true}
		b, err := body(pr, p, stubName(p))
		if err != nil {
			return err
		}
		if _, _, err := rn.t.do(ctx, http.MethodPost, rn.objectPath(pr, ""), acceptJSON, acceptJSON, b); err != nil {
			return err
		}
	}
	rn.remove(ctx, r, name)
	b, err := body(r, st, name)
	if err != nil {
		return err
	}
	code, resp, err := rn.t.do(ctx, http.MethodPost, rn.objectPath(r, ""), acceptJSON, acceptJSON, b)
	if err != nil {
		return err
	}
	var created map[string]any
	json.Unmarshal(resp, &created)
	obj := Object{Key: st.Key(), Status: code, Object: normalize(created, rn.id)}
	probe := &Probe{}
	if md, ok := created["metadata"].(map[string]any); ok && code == http.StatusCreated {
		_, probe.Generation = md["generation"]
		if isCRD(r) {
			// 1.37's Table of a CRD has an Established column: read it once the
			// establishing controller is done, or the row depends on the race.
			if err := rn.settleCRD(ctx, r, name); err != nil {
				return err
			}
		}
		if obj.Cells, err = rn.cells(ctx, r, name); err != nil {
			return err
		}
	}
	// An update of a missing object, and creates by other names.
	for i := -1; i < len(probeNames); i++ {
		n := "u" + rn.id
		if i >= 0 {
			n = fmt.Sprintf(probeNames[i], rn.id)
		}
		b, err := body(r, st, n)
		if err != nil {
			return err
		}
		method, path := http.MethodPost, rn.objectPath(r, "")
		if i < 0 {
			method, path = http.MethodPut, rn.objectPath(r, n)
		}
		c, _, err := rn.t.do(ctx, method, path, acceptJSON, acceptJSON, b)
		if err != nil {
			return err
		}
		if i < 0 {
			probe.CreateOnUpdate = c
		} else {
			probe.Names[i] = c
		}
		if c == http.StatusCreated || c == http.StatusOK {
			rn.remove(ctx, r, n)
		}
	}
	r.Probe = probe
	rn.out.Objects = append(rn.out.Objects, obj)
	rn.remove(ctx, r, name)
	for i := len(st.Prerequisites) - 1; i >= 0; i-- {
		p := st.Prerequisites[i]
		rn.remove(ctx, &Resource{Group: p.Group, Version: p.Version, Resource: p.Resource, Namespaced: true}, stubName(p))
	}
	return nil
}

// remove deletes an object for good: its finalizers (added by admission plugins whose
// controllers do not run) are dropped first.
func (rn *run) remove(ctx context.Context, r *Resource, name string) {
	path := rn.objectPath(r, name)
	rn.t.do(ctx, http.MethodPatch, path, acceptJSON, "application/merge-patch+json", []byte(`{"metadata":{"finalizers":null}}`))
	rn.t.do(ctx, http.MethodDelete, path, acceptJSON, "", nil)
	if isCRD(r) {
		// A CRD goes only once its finalizer has removed its custom resources: wait, so
		// that the next recording can create it again.
		rn.waitGone(ctx, path)
	}
}

// cells reads the object's Table row.
func (rn *run) cells(ctx context.Context, r *Resource, name string) ([]any, error) {
	var table struct {
		Columns []Column `json:"columnDefinitions"`
		Rows    []struct {
			Cells []any `json:"cells"`
		} `json:"rows"`
	}
	if err := rn.t.getJSON(ctx, rn.objectPath(r, name), acceptTable, &table); err != nil {
		return nil, err
	}
	if len(table.Rows) != 1 {
		return nil, fmt.Errorf("%s as Table: %d rows", r.Key(), len(table.Rows))
	}
	cells := table.Rows[0].Cells
	for i, c := range table.Columns {
		if i >= len(cells) {
			break
		}
		cells[i] = normalizeCell(c, cells[i], rn.id)
	}
	return cells, nil
}

// isCRD reports whether r is apiextensions.k8s.io's customresourcedefinitions.
func isCRD(r *Resource) bool {
	return r.Group == "apiextensions.k8s.io" && r.Resource == "customresourcedefinitions"
}

// settleTimeout bounds the waits for a CRD to be established or gone.
const settleTimeout = 30 * time.Second

// poll calls done every 20 ms until it reports true, or until settleTimeout.
func poll(ctx context.Context, done func() (bool, error)) error {
	ctx, cancel := context.WithTimeout(ctx, settleTimeout)
	defer cancel()
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for {
		ok, err := done()
		if ok || err != nil {
			return err
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-tick.C:
		}
	}
}

// settleCRD waits until the CRD's Established condition is True (or NamesAccepted is
// False: it never will be).
func (rn *run) settleCRD(ctx context.Context, r *Resource, name string) error {
	err := poll(ctx, func() (bool, error) {
		var crd struct {
			Status struct {
				Conditions []struct {
					Type   string `json:"type"`
					Status string `json:"status"`
				} `json:"conditions"`
			} `json:"status"`
		}
		if err := rn.t.getJSON(ctx, rn.objectPath(r, name), acceptJSON, &crd); err != nil {
			return false, err
		}
		for _, c := range crd.Status.Conditions {
			if c.Type == "Established" && c.Status == "True" || c.Type == "NamesAccepted" && c.Status == "False" {
				return true, nil
			}
		}
		return false, nil
	})
	if err != nil {
		return fmt.Errorf("waiting for CRD %s to be established: %w", name, err)
	}
	return nil
}

// waitGone waits until GET path answers 404 (best effort: a timeout is left to the next
// create to report).
func (rn *run) waitGone(ctx context.Context, path string) {
	poll(ctx, func() (bool, error) {
		code, _, err := rn.t.do(ctx, http.MethodGet, path, acceptJSON, "", nil)
		return code == http.StatusNotFound, err
	})
}
