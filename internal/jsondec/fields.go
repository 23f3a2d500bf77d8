package jsondec

import (
	"cmp"
	"reflect"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"
)

// fieldInfo is a JSON member of a struct type, by encoding/json's rules.
type fieldInfo struct {
	name   string
	tagged bool
	index  []int
	quoted bool
}

// typeFields lists the JSON members of struct type t in field order, with encoding/json's
// rules: exported fields (and the exported fields of embedded structs, unexported ones
// included, followed breadth first), json tag names, "-" to leave a field out, and Go's
// rules for the embedding depth at which a name is visible, where a tagged field wins over
// an untagged one at the same depth and two at the same depth hide each other.
func typeFields(t reflect.Type) []fieldInfo {
	out := dominantFields(candidateFields(t))
	slices.SortFunc(out, func(a, b fieldInfo) int { return slices.Compare(a.index, b.index) })
	return out
}

// candidateFields walks t and its embedded structs breadth first and returns every JSON
// member it finds, at every depth; a name found twice at one depth through the same
// embedded type is listed twice, so that dominantFields sees it as ambiguous.
func candidateFields(t reflect.Type) []fieldInfo {
	type queued struct {
		typ   reflect.Type
		index []int
	}
	var fields []fieldInfo
	next := []queued{{typ: t}}
	visited := map[reflect.Type]bool{}
	var count, nextCount map[reflect.Type]int
	for len(next) > 0 {
		current := next
		next = nil
		count, nextCount = nextCount, map[reflect.Type]int{}
		for _, q := range current {
			if visited[q.typ] {
				continue
			}
			visited[q.typ] = true
			for i := range q.typ.NumField() {
				sf := q.typ.Field(i)
				if sf.Anonymous {
					et := sf.Type
					if et.Kind() == reflect.Pointer {
						et = et.Elem()
					}
					if !sf.IsExported() && et.Kind() != reflect.Struct {
						continue
					}
				} else if !sf.IsExported() {
					continue
				}
				tag := sf.Tag.Get("json")
				if tag == "-" {
					continue
				}
				name, opts, _ := strings.Cut(tag, ",")
				if !validTagName(name) {
					name = ""
				}
				index := append(slices.Clip(q.index), i)
				ft := sf.Type
				if ft.Name() == "" && ft.Kind() == reflect.Pointer {
					ft = ft.Elem()
				}
				if name != "" || !sf.Anonymous || ft.Kind() != reflect.Struct {
					f := fieldInfo{name: name, tagged: name != "", index: index}
					if f.name == "" {
						f.name = sf.Name
					}
					f.quoted = hasOption(opts, "string") && quotable(ft.Kind())
					fields = append(fields, f)
					if count[q.typ] > 1 {
						// The same embedded type twice at this depth: a duplicate makes the
						// name ambiguous below.
						fields = append(fields, f)
					}
					continue
				}
				nextCount[ft]++
				if nextCount[ft] == 1 {
					next = append(next, queued{typ: ft, index: index})
				}
			}
		}
	}
	return fields
}

// quotable reports whether the ",string" option applies to a field of kind k.
func quotable(k reflect.Kind) bool {
	switch k {
	case reflect.Bool,
		reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr,
		reflect.Float32, reflect.Float64, reflect.String:
		return true
	}
	return false
}

// dominantFields keeps, of the fields of each name, the one Go's visibility rules select:
// the shallowest, a tagged one before an untagged one at that depth; a name held by two
// equal candidates is dropped. fields is reordered.
func dominantFields(fields []fieldInfo) []fieldInfo {
	slices.SortStableFunc(fields, func(a, b fieldInfo) int {
		if c := strings.Compare(a.name, b.name); c != 0 {
			return c
		}
		if c := cmp.Compare(len(a.index), len(b.index)); c != 0 {
			return c
		}
		if a.tagged != b.tagged {
			if a.tagged {
				return -1
			}
			return 1
		}
		return slices.Compare(a.index, b.index)
	})
	out := fields[:0]
	for i := 0; i < len(fields); {
		j := i + 1
		for j < len(fields) && fields[j].name == fields[i].name {
			j++
		}
		// The first of a name dominates, unless the second is as shallow and as tagged.
		if j-i == 1 || len(fields[i].index) != len(fields[i+1].index) || fields[i].tagged != fields[i+1].tagged {
			out = append(out, fields[i])
		}
		i = j
	}
	return out
}

func hasOption(opts, name string) bool {
	for opts != "" {
		var o string
		o, opts, _ = strings.Cut(opts, ",")
		if o == name {
			return true
		}
	}
	return false
}

// validTagName reports whether a json tag name is usable (else the Go name is used).
func validTagName(s string) bool {
	if s == "" {
		return false
	}
	for _, c := range s {
		switch {
		case strings.ContainsRune("!#$%&()*+-./:;<=>?@[]^_{|}~ ", c):
		case !unicode.IsLetter(c) && !unicode.IsDigit(c):
			return false
		}
	}
	return true
}

// foldName appends to dst a form of name such that two names have the same form exactly
// when bytes.EqualFold says they are equal: the case-insensitive match encoding/json falls
// back to when no member name matches exactly.
func foldName(dst, name []byte) []byte {
	for i := 0; i < len(name); {
		c := name[i]
		if c < utf8.RuneSelf {
			if 'a' <= c && c <= 'z' {
				c -= 'a' - 'A'
			}
			dst = append(dst, c)
			i++
			continue
		}
		r, n := utf8.DecodeRune(name[i:])
		// The smallest rune of r's case-folding orbit stands for the orbit.
		least := r
		for f := unicode.SimpleFold(r); f != r; f = unicode.SimpleFold(f) {
			least = min(least, f)
		}
		dst = utf8.AppendRune(dst, least)
		i += n
	}
	return dst
}
