package celrules

import "reflect"

// corr pairs a value of an update with the value it replaces, where the schema lets the
// two be told apart: object fields and map values by key, map-list items by their keys.
// Rules failing on a value equal to its old one are ratcheted (reported as warnings), as
// the kube-apiserver's CRD validation ratcheting does.
type corr struct {
	new, old any
	s        schema
	olds     *mapList
	eq       *bool
	children map[any]*corr
}

func (c *corr) child(k any, new, old any, s schema) *corr {
	if x, ok := c.children[k]; ok {
		return x
	}
	if c.children == nil {
		c.children = map[any]*corr{}
	}
	x := &corr{new: new, old: old, s: s}
	c.children[k] = x
	return x
}

// key is the pair of the field or map key k (nil if either side lacks it).
func (c *corr) key(k string) *corr {
	if c == nil || c.s == nil {
		return nil
	}
	nm, ok1 := c.new.(map[string]any)
	om, ok2 := c.old.(map[string]any)
	if !ok1 || !ok2 {
		return nil
	}
	nv, ok1 := nm[k]
	ov, ok2 := om[k]
	if !ok1 || !ok2 {
		return nil
	}
	var ps schema
	if p, ok := c.s.properties()[k]; ok {
		ps = p
	} else if a := c.s.additional(); a != nil {
		ps = a
	} else {
		return nil
	}
	return c.child(k, nv, ov, ps)
}

// index is the pair of item i (nil unless the list is a map list and the old list holds
// an item of the same keys).
func (c *corr) index(i int) *corr {
	if c == nil || c.s == nil {
		return nil
	}
	nl, ok1 := c.new.([]any)
	ol, ok2 := c.old.([]any)
	if !ok1 || !ok2 || i >= len(nl) || c.s.listType() != "map" || c.s.items() == nil {
		return nil
	}
	if c.olds == nil {
		c.olds = newMapList(c.s.listMapKeys(), ol)
	}
	ov := c.olds.get(nl[i])
	if ov == nil {
		return nil
	}
	return c.child(i, nl[i], ov, c.s.items())
}

// unchanged reports whether the new value equals the old one, through the pairs.
func (c *corr) unchanged() (res bool) {
	if c == nil {
		return false
	}
	if c.eq != nil {
		return *c.eq
	}
	defer func() { c.eq = &res }()
	if c.new == nil || c.old == nil {
		return c.new == nil && c.old == nil
	}
	nl, nIsList := c.new.([]any)
	ol, oIsList := c.old.([]any)
	nm, nIsMap := c.new.(map[string]any)
	om, oIsMap := c.old.(map[string]any)
	if nIsList != oIsList || nIsMap != oIsMap {
		return false
	}
	switch {
	case nIsList:
		if len(nl) != len(ol) {
			return false
		}
		for i := range nl {
			x := c.index(i)
			if x == nil {
				if c.olds == nil {
					return reflect.DeepEqual(nl, ol)
				}
				return false
			}
			if !x.unchanged() {
				return false
			}
		}
		return true
	case nIsMap:
		if len(nm) != len(om) {
			return false
		}
		for k := range nm {
			if x := c.key(k); x == nil || !x.unchanged() {
				return false
			}
		}
		return true
	}
	return reflect.DeepEqual(c.new, c.old)
}

// ratchet follows the pairs down the validation: cur is the node's pair, parent the
// nearest ancestor that had one.
type ratchet struct{ cur, parent *corr }

func (r ratchet) key(k string) ratchet {
	if r.cur == nil {
		return r
	}
	if r.parent == nil && (k == "apiVersion" || k == "kind") {
		return ratchet{} // both sides always carry the request's type: never ratcheted
	}
	return ratchet{cur: r.cur.key(k), parent: r.cur}
}

func (r ratchet) index(i int) ratchet {
	if r.cur == nil {
		return r
	}
	return ratchet{cur: r.cur.index(i), parent: r.cur}
}

func (r ratchet) unchanged() bool {
	if r.cur != nil {
		return r.cur.unchanged()
	}
	return r.parent.unchanged()
}

// mapList finds the item of a map list with the keys of another.
type mapList struct {
	keys  []string
	items map[string]any
}

func newMapList(keys []string, items []any) *mapList {
	l := &mapList{keys: keys, items: map[string]any{}}
	lv := &listVal{keys: keys}
	for _, it := range items {
		if _, ok := it.(map[string]any); ok {
			l.items[lv.mapKey(it)] = it
		}
	}
	return l
}

func (l *mapList) get(item any) any {
	if l == nil || len(l.keys) == 0 {
		return nil
	}
	if _, ok := item.(map[string]any); !ok {
		return nil
	}
	return l.items[(&listVal{keys: l.keys}).mapKey(item)]
}
