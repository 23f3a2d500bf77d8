package deepcopy

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strconv"
	"time"
	"unsafe"

	"github.com/informerkit/informerkit/meta"
)

// The struct zoo: every shape of value Copy must handle, for the tests and the fuzz target.

type leaf struct {
	A string
	B []int
	C map[string]int
}

type node struct {
	V    int
	Kids []*node
	Tags map[string]*node
}

type named map[string]string

type stringer struct{ S *string }

func (s stringer) String() string {
	if s.S == nil {
		return ""
	}
	return *s.S
}

type ptrStringer struct{ N []int }

func (p *ptrStringer) String() string { return fmt.Sprint(p.N) }

type Embedded struct {
	E  []string
	EP *int
}

type zoo struct {
	Name  string
	N     int64
	F     float64
	B     bool
	Arr   [3]int
	ArrP  [2]*leaf
	P     *leaf
	PP    **leaf
	S     []leaf
	SP    []*leaf
	SS    [][]string
	Bytes []byte
	Raw   json.RawMessage
	M     map[string]string
	MN    named
	MS    map[string]*leaf
	MI    map[int][]int
	MV    map[leafKey]leaf
	Any   any
	Iface fmt.Stringer
	T     time.Time
	TP    *time.Time
	AT    meta.Time
	Meta  meta.ObjectMeta
	Un    *meta.Unstructured
	Tree  *node
	Embedded
	priv  []int
	privM map[string][]byte
}

type leafKey struct {
	X int
	Y string
}

// gen turns fuzz bytes into choices; past the end it answers zeros, which ends recursion.
type gen struct {
	data []byte
	i    int
}

func (g *gen) byte() byte {
	if g.i >= len(g.data) {
		return 0
	}
	b := g.data[g.i]
	g.i++
	return b
}

func (g *gen) intn(n int) int { return int(g.byte()) % n }

func (g *gen) str() string {
	n := g.intn(6)
	b := make([]byte, n)
	for i := range b {
		b[i] = 'a' + byte(g.intn(26))
	}
	return string(b)
}

// fill sets v (settable) to a value chosen by g. Zero choices give nil pointers, slices and
// maps; other choices give non-nil ones, empty or not, so nil and empty are both covered.
func (g *gen) fill(v reflect.Value, depth int) {
	t := v.Type()
	switch {
	case t == reflect.TypeFor[time.Time]():
		v.Set(reflect.ValueOf(time.Unix(int64(g.byte())*100000, int64(g.byte())*1000).UTC()))
		return
	case t == reflect.TypeFor[meta.Time]():
		v.Set(reflect.ValueOf(meta.NewTime(time.Unix(int64(g.byte())*7919, 0))))
		return
	case t == reflect.TypeFor[*meta.Unstructured]():
		if g.intn(2) == 0 {
			return
		}
		v.Set(reflect.ValueOf(&meta.Unstructured{Object: g.jsonObject(depth)}))
		return
	}
	switch t.Kind() {
	case reflect.String:
		v.SetString(g.str())
	case reflect.Bool:
		v.SetBool(g.intn(2) == 1)
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		v.SetInt(int64(int8(g.byte())))
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		v.SetUint(uint64(g.byte()))
	case reflect.Float32, reflect.Float64:
		v.SetFloat(float64(int8(g.byte())) / 4)
	case reflect.Pointer:
		if depth > 4 || g.intn(3) == 0 {
			return
		}
		p := reflect.New(t.Elem())
		g.fill(p.Elem(), depth+1)
		v.Set(p)
	case reflect.Slice:
		c := g.intn(5)
		if depth > 4 || c == 0 {
			return
		}
		n := c - 1
		s := reflect.MakeSlice(t, n, n+g.intn(3))
		for i := range n {
			g.fill(s.Index(i), depth+1)
		}
		v.Set(s)
	case reflect.Array:
		for i := range v.Len() {
			g.fill(v.Index(i), depth+1)
		}
	case reflect.Map:
		c := g.intn(5)
		if depth > 4 || c == 0 {
			return
		}
		m := reflect.MakeMap(t)
		for range c - 1 {
			k := reflect.New(t.Key()).Elem()
			g.fill(k, depth+1)
			e := reflect.New(t.Elem()).Elem()
			g.fill(e, depth+1)
			m.SetMapIndex(k, e)
		}
		v.Set(m)
	case reflect.Interface:
		if depth > 4 {
			return
		}
		if t.NumMethod() == 0 {
			if x := g.anyValue(depth); x != nil {
				v.Set(reflect.ValueOf(x))
			}
			return
		}
		switch g.intn(3) {
		case 1:
			s := g.str()
			v.Set(reflect.ValueOf(stringer{S: &s}))
		case 2:
			p := &ptrStringer{}
			g.fill(reflect.ValueOf(p).Elem(), depth+1)
			v.Set(reflect.ValueOf(p))
		}
	case reflect.Struct:
		for i := range t.NumField() {
			f := v.Field(i)
			if !f.CanSet() { // unexported: reach it anyway, the copier must handle it
				f = reflect.NewAt(f.Type(), unsafe.Pointer(f.UnsafeAddr())).Elem()
			}
			g.fill(f, depth+1)
		}
	}
}

// anyValue is a value for an empty interface: JSON-decoded shapes and typed values.
func (g *gen) anyValue(depth int) any {
	switch g.intn(9) {
	case 1:
		return g.str()
	case 2:
		return float64(int8(g.byte()))
	case 3:
		return g.intn(2) == 1
	case 4:
		return g.jsonObject(depth + 1)
	case 5:
		n := g.intn(4)
		s := make([]any, n)
		for i := range s {
			s[i] = g.anyValue(depth + 2)
		}
		return s
	case 6:
		l := &leaf{}
		g.fill(reflect.ValueOf(l).Elem(), depth+1)
		return l
	case 7:
		var l leaf
		g.fill(reflect.ValueOf(&l).Elem(), depth+1)
		return l
	case 8:
		return []int{int(g.byte()), int(g.byte())}
	}
	return nil
}

func (g *gen) jsonObject(depth int) map[string]any {
	m := map[string]any{}
	if depth > 5 {
		return m
	}
	for range g.intn(4) {
		m[g.str()] = g.anyValue(depth + 1)
	}
	return m
}

func newZoo(data []byte) *zoo {
	z := &zoo{}
	(&gen{data: data}).fill(reflect.ValueOf(z).Elem(), 0)
	return z
}

// disjoint reports the path of the first memory that a and b (equal values) share: a
// pointer to the same variable, a slice with the same backing array, the same map. Strings,
// time.Time's location and functions may be shared.
func disjoint(a, b reflect.Value, path string) error {
	if !a.IsValid() || !b.IsValid() {
		return nil
	}
	if a.Type() == reflect.TypeFor[time.Time]() {
		return nil
	}
	switch a.Kind() {
	case reflect.Pointer:
		if a.IsNil() || b.IsNil() {
			return nil
		}
		if a.Pointer() == b.Pointer() && a.Type().Elem().Size() > 0 {
			return fmt.Errorf("%s: same pointer %#x", path, a.Pointer())
		}
		return disjoint(a.Elem(), b.Elem(), "(*"+path+")")
	case reflect.Slice:
		if a.IsNil() || b.IsNil() {
			return nil
		}
		if a.Cap() > 0 && b.Cap() > 0 && a.Pointer() == b.Pointer() && a.Type().Elem().Size() > 0 {
			return fmt.Errorf("%s: same backing array", path)
		}
		for i := range min(a.Len(), b.Len()) {
			if err := disjoint(a.Index(i), b.Index(i), path+"["+strconv.Itoa(i)+"]"); err != nil {
				return err
			}
		}
	case reflect.Array:
		for i := range a.Len() {
			if err := disjoint(a.Index(i), b.Index(i), path+"["+strconv.Itoa(i)+"]"); err != nil {
				return err
			}
		}
	case reflect.Map:
		if a.IsNil() || b.IsNil() {
			return nil
		}
		if a.Pointer() == b.Pointer() {
			return fmt.Errorf("%s: same map", path)
		}
		it := a.MapRange()
		for it.Next() {
			if err := disjoint(it.Value(), b.MapIndex(it.Key()), fmt.Sprintf("%s[%v]", path, it.Key())); err != nil {
				return err
			}
		}
	case reflect.Interface:
		if a.IsNil() || b.IsNil() {
			return nil
		}
		return disjoint(a.Elem(), b.Elem(), path)
	case reflect.Struct:
		for i := range a.NumField() {
			if err := disjoint(a.Field(i), b.Field(i), path+"."+a.Type().Field(i).Name); err != nil {
				return err
			}
		}
	}
	return nil
}

// checkCopy asserts that cp equals orig and shares no memory with it. Floats come from int8s,
// never NaN, so DeepEqual is meaningful.
func checkCopy[T any](orig, cp T) error {
	if !reflect.DeepEqual(orig, cp) {
		return fmt.Errorf("copy differs from the original:\n orig %#v\n copy %#v", orig, cp)
	}
	return disjoint(reflect.ValueOf(&orig).Elem(), reflect.ValueOf(&cp).Elem(), "v")
}
