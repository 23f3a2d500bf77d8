// Package jsonpatch applies JSON patches (RFC 6902, application/json-patch+json) and JSON
// merge patches (RFC 7386, application/merge-patch+json) to objects in their JSON form, as
// the kube-apiserver's PATCH does. Patches are decoded with exact numbers (json.Number).
// The document is patched in place where it can be; use the returned one.
//
// Strategic merge patches are internal/smp's, server-side apply internal/ssa's.
package jsonpatch

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/informerkit/informerkit/apitest/internal/jsonobj"
)

// Merge applies a JSON merge patch to doc. The patch must be a JSON object.
func Merge(doc map[string]any, patch []byte) (map[string]any, error) {
	var p any
	d := json.NewDecoder(bytes.NewReader(patch))
	d.UseNumber()
	if err := d.Decode(&p); err != nil {
		return nil, fmt.Errorf("error decoding patch: %v", err)
	}
	pm, ok := p.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("the patch must be a JSON object")
	}
	out, _ := mergePatch(doc, pm).(map[string]any)
	if out == nil {
		out = map[string]any{}
	}
	return out, nil
}

// Apply applies a JSON patch, a list of operations, to doc. An error names the operation
// that failed; a failed "test" operation's error is (or wraps) a *TestFailedError.
func Apply(doc map[string]any, patch []byte) (map[string]any, error) {
	var ops []map[string]any
	d := json.NewDecoder(bytes.NewReader(patch))
	d.UseNumber()
	if err := d.Decode(&ops); err != nil {
		return nil, fmt.Errorf("error decoding patch: %v", err)
	}
	var cur any = doc
	for i, op := range ops {
		var err error
		cur, err = jsonPatchOp(cur, op)
		if err != nil {
			return nil, fmt.Errorf("json patch operation %d: %w", i, err)
		}
	}
	out, ok := cur.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("the patched document is not an object")
	}
	return out, nil
}

// TestFailedError is the failure of a "test" operation: the value at Path is not the
// operation's value.
type TestFailedError struct{ Path string }

func (e *TestFailedError) Error() string { return fmt.Sprintf("testing value %s failed", e.Path) }

// mergePatch implements RFC 7386.
func mergePatch(target, patch any) any {
	pm, ok := patch.(map[string]any)
	if !ok {
		return patch
	}
	tm, ok := target.(map[string]any)
	if !ok {
		tm = map[string]any{}
	}
	for k, v := range pm {
		if v == nil {
			delete(tm, k)
			continue
		}
		tm[k] = mergePatch(tm[k], v)
	}
	return tm
}

func parsePointer(p string) ([]string, error) {
	if p == "" {
		return nil, nil
	}
	if p[0] != '/' {
		return nil, fmt.Errorf("path %q must start with /", p)
	}
	parts := strings.Split(p[1:], "/")
	for i, s := range parts {
		parts[i] = strings.ReplaceAll(strings.ReplaceAll(s, "~1", "/"), "~0", "~")
	}
	return parts, nil
}

// jsonPatchOp applies one RFC 6902 operation to doc and returns the new document.
func jsonPatchOp(doc any, op map[string]any) (any, error) {
	name, _ := op["op"].(string)
	path, _ := op["path"].(string)
	parts, err := parsePointer(path)
	if err != nil {
		return nil, err
	}
	switch name {
	case "add":
		return setAt(doc, parts, op["value"], true)
	case "replace":
		if _, err := getAt(doc, parts); err != nil {
			return nil, err
		}
		return setAt(doc, parts, op["value"], false)
	case "remove":
		return removeAt(doc, parts)
	case "test":
		v, err := getAt(doc, parts)
		if err != nil {
			return nil, err
		}
		if !jsonobj.Equal(v, op["value"]) {
			return nil, &TestFailedError{Path: path}
		}
		return doc, nil
	case "move", "copy":
		from, _ := op["from"].(string)
		fp, err := parsePointer(from)
		if err != nil {
			return nil, err
		}
		v, err := getAt(doc, fp)
		if err != nil {
			return nil, err
		}
		if name == "move" {
			if doc, err = removeAt(doc, fp); err != nil {
				return nil, err
			}
		} else {
			v = deepCopyJSON(v)
		}
		return setAt(doc, parts, v, true)
	}
	return nil, fmt.Errorf("unexpected operation %q", name)
}

func deepCopyJSON(v any) any {
	b, _ := json.Marshal(v)
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	var out any
	d.Decode(&out)
	return out
}

func getAt(doc any, parts []string) (any, error) {
	cur := doc
	for _, p := range parts {
		switch c := cur.(type) {
		case map[string]any:
			v, ok := c[p]
			if !ok {
				return nil, fmt.Errorf("missing value at %q", p)
			}
			cur = v
		case []any:
			i, err := strconv.Atoi(p)
			if err != nil || i < 0 || i >= len(c) {
				return nil, fmt.Errorf("index %q out of range", p)
			}
			cur = c[i]
		default:
			return nil, fmt.Errorf("cannot descend into %q", p)
		}
	}
	return cur, nil
}

// setAt sets (insert: adds) the value at parts and returns the new document.
func setAt(doc any, parts []string, v any, insert bool) (any, error) {
	if len(parts) == 0 {
		return v, nil
	}
	p := parts[0]
	switch c := doc.(type) {
	case map[string]any:
		if len(parts) == 1 {
			c[p] = v
			return c, nil
		}
		child, ok := c[p]
		if !ok {
			return nil, fmt.Errorf("missing value at %q", p)
		}
		nc, err := setAt(child, parts[1:], v, insert)
		if err != nil {
			return nil, err
		}
		c[p] = nc
		return c, nil
	case []any:
		if len(parts) == 1 {
			if p == "-" && insert {
				return append(c, v), nil
			}
			i, err := strconv.Atoi(p)
			if err != nil || i < 0 || i > len(c) || (!insert && i == len(c)) {
				return nil, fmt.Errorf("index %q out of range", p)
			}
			if !insert {
				c[i] = v
				return c, nil
			}
			c = append(c, nil)
			copy(c[i+1:], c[i:])
			c[i] = v
			return c, nil
		}
		i, err := strconv.Atoi(p)
		if err != nil || i < 0 || i >= len(c) {
			return nil, fmt.Errorf("index %q out of range", p)
		}
		nc, err := setAt(c[i], parts[1:], v, insert)
		if err != nil {
			return nil, err
		}
		c[i] = nc
		return c, nil
	}
	return nil, fmt.Errorf("cannot descend into %q", p)
}

func removeAt(doc any, parts []string) (any, error) {
	if len(parts) == 0 {
		return nil, fmt.Errorf("cannot remove the whole document")
	}
	p := parts[0]
	switch c := doc.(type) {
	case map[string]any:
		if len(parts) == 1 {
			if _, ok := c[p]; !ok {
				return nil, fmt.Errorf("missing value at %q", p)
			}
			delete(c, p)
			return c, nil
		}
		child, ok := c[p]
		if !ok {
			return nil, fmt.Errorf("missing value at %q", p)
		}
		nc, err := removeAt(child, parts[1:])
		if err != nil {
			return nil, err
		}
		c[p] = nc
		return c, nil
	case []any:
		i, err := strconv.Atoi(p)
		if err != nil || i < 0 || i >= len(c) {
			return nil, fmt.Errorf("index %q out of range", p)
		}
		if len(parts) == 1 {
			return append(c[:i:i], c[i+1:]...), nil
		}
		nc, err := removeAt(c[i], parts[1:])
		if err != nil {
			return nil, err
		}
		c[i] = nc
		return c, nil
	}
	return nil, fmt.Errorf("cannot descend into %q", p)
}
