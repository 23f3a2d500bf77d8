package main

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strings"

	"k8s.io/apimachinery/pkg/runtime"
)

// The defaults are found by running the kube-apiserver's own defaulting functions on
// skeletons of every kind and recording what they fill in (diff). A default shows only on
// a skeleton where the field is unset but its parent is there, so several are tried:

// skelMode says what a skeleton allocates.
type skelMode struct {
	// pointers: every pointer to a struct is allocated; slices: every slice of structs
	// has one element.
	pointers, slices bool
}

// skelModes: bare (the defaults of required fields and of lists defaulting fills,
// horizontalpodautoscalers' metrics), with lists, and full (the defaults inside optional
// structs).
var skelModes = []skelMode{{false, false}, {false, true}, {true, true}}

// maxOptionalDepth bounds the optional structs left out one at a time.
const maxOptionalDepth = 10

// defaults runs the kind's defaulting on each skeleton, then on the full skeleton with
// each of its optional structs left out in turn: the structs defaulting allocates inside
// allocated parents (an admission policy's matchConstraints.namespaceSelector).
func (g *gen) defaults(r root) error {
	for _, m := range skelModes {
		if err := g.defaultsOf(r, m, nil); err != nil {
			return err
		}
	}
	full := reflect.New(reflect.TypeOf(r.obj)).Elem()
	skeleton(full, 0, skelMode{true, true})
	for _, p := range optionalPaths(full, nil) {
		if err := g.defaultsOf(r, skelMode{true, true}, p); err != nil {
			return fmt.Errorf("with optional struct %v unset: %w", p, err)
		}
	}
	return nil
}

// A path leads from an object to a value of its skeleton: a struct's field number, or -1
// for the first element of a slice.
type path []int

func at(v reflect.Value, p path) reflect.Value {
	for _, step := range p {
		switch v.Kind() {
		case reflect.Pointer:
			v = v.Elem()
		}
		if step < 0 {
			v = v.Index(0)
		} else {
			v = v.Field(step)
		}
	}
	return v
}

// optionalPaths lists the allocated pointers to structs of a skeleton.
func optionalPaths(v reflect.Value, prefix path) []path {
	if len(prefix) > maxOptionalDepth {
		return nil
	}
	var out []path
	switch v.Kind() {
	case reflect.Pointer:
		if v.IsNil() {
			return nil
		}
		return optionalPaths(v.Elem(), prefix)
	case reflect.Struct:
		for i := 0; i < v.NumField(); i++ {
			if !v.Type().Field(i).IsExported() {
				continue
			}
			f := v.Field(i)
			p := append(append(path{}, prefix...), i)
			if f.Kind() == reflect.Pointer && !f.IsNil() && f.Type().Elem().Kind() == reflect.Struct {
				out = append(out, p)
			}
			out = append(out, optionalPaths(f, p)...)
		}
	case reflect.Slice:
		if v.Len() > 0 {
			out = append(out, optionalPaths(v.Index(0), append(append(path{}, prefix...), -1))...)
		}
	}
	return out
}

// defaultsOf defaults one skeleton (with the pointer at unset, if any, left nil) and
// records the difference.
func (g *gen) defaultsOf(r root, m skelMode, unset path) error {
	g.curKind = kindKey(r)
	rt := reflect.TypeOf(r.obj)
	v := reflect.New(rt)
	skeleton(v.Elem(), 0, m)
	if unset != nil {
		p := at(v.Elem(), unset)
		p.Set(reflect.Zero(p.Type()))
	}
	if r.kind == "Namespace" {
		v.Elem().FieldByName("ObjectMeta").FieldByName("Name").SetString("x")
	}
	before, err := json.Marshal(v.Interface())
	if err != nil {
		return err
	}
	obj, ok := v.Interface().(runtime.Object)
	if !ok {
		return fmt.Errorf("%s is not a runtime.Object", rt)
	}
	r.scheme.Default(obj)
	after, err := json.Marshal(obj)
	if err != nil {
		return err
	}
	var b, a any
	json.Unmarshal(before, &b)
	json.Unmarshal(after, &a)
	return g.diff(typeName(rt), b, a)
}

func skeleton(v reflect.Value, depth int, m skelMode) {
	if depth > 12 {
		return
	}
	switch v.Kind() {
	case reflect.Struct:
		if v.Type().PkgPath() == "time" || strings.HasSuffix(v.Type().PkgPath(), "api/resource") {
			return
		}
		for i := 0; i < v.NumField(); i++ {
			if v.Type().Field(i).IsExported() {
				skeleton(v.Field(i), depth+1, m)
			}
		}
	case reflect.Pointer:
		if m.pointers && v.Type().Elem().Kind() == reflect.Struct && v.Type().Elem().PkgPath() != "time" {
			if isSelfMarshalling(typeName(v.Type().Elem())) {
				return // IntOrString, Quantity, Time...: leave nil, they are values
			}
			n := reflect.New(v.Type().Elem())
			skeleton(n.Elem(), depth+1, m)
			v.Set(n)
		}
	case reflect.Slice:
		if m.slices && v.Type().Elem().Kind() == reflect.Struct {
			s := reflect.MakeSlice(v.Type(), 1, 1)
			skeleton(s.Index(0), depth+1, m)
			v.Set(s)
		}
	}
}
