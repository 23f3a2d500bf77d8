package jsondec

import (
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"time"
)

// The zoo: types that exercise every rule of encoding/json's decoding, for the comparison
// tests and the fuzz target.

type zSmall struct {
	A int    `json:"a"`
	B string `json:"b,omitempty"`
}

// zText is a TextUnmarshaler with a pointer receiver that fails on "bad".
type zText struct{ v string }

func (t *zText) UnmarshalText(b []byte) error {
	if string(b) == "bad" {
		return errors.New("bad text")
	}
	t.v = "T:" + string(b)
	return nil
}

// zTextKey is a map key decoded by UnmarshalText.
type zTextKey struct{ v string }

func (k *zTextKey) UnmarshalText(b []byte) error {
	if strings.HasPrefix(string(b), "x") {
		return errors.New("bad key")
	}
	k.v = strings.ToUpper(string(b))
	return nil
}

// zJSON records the raw JSON it was given and refuses true.
type zJSON struct{ raw string }

func (z *zJSON) UnmarshalJSON(b []byte) error {
	if string(b) == "true" {
		return errors.New("zJSON refuses true")
	}
	z.raw = string(b)
	return nil
}

// zQuantity accepts a string or a number, as resource.Quantity does.
type zQuantity struct{ milli int64 }

func (q *zQuantity) UnmarshalJSON(b []byte) error {
	if string(b) == "null" {
		return nil
	}
	s := strings.Trim(string(b), `"`)
	var f float64
	if _, err := fmt.Sscan(s, &f); err != nil {
		return fmt.Errorf("quantity %q: %w", s, err)
	}
	q.milli = int64(f * 1000)
	return nil
}

// zValue has a value-receiver UnmarshalJSON (it cannot change anything).
type zValue int

func (zValue) UnmarshalJSON([]byte) error { return nil }

// zTextSet is a named map with UnmarshalText: null clears it (the kind decides), a string
// goes to UnmarshalText.
type zTextSet map[string]bool

func (s *zTextSet) UnmarshalText(b []byte) error {
	*s = zTextSet{}
	for _, k := range strings.Split(string(b), ",") {
		(*s)[k] = true
	}
	return nil
}

type zKey string
type zLabels map[zKey]string
type zPtr *zSmall
type zByte byte
type zStringer interface{ String() string }

type ZInner struct {
	A  int `json:"a"`
	IB string
	Up string `json:"up"`
	Y2 int    `json:"X2"`
}

type zinner struct {
	C  float64 `json:"c"`
	ID bool
}

type ZEmbed2 struct {
	IB string // as deep as ZInner.IB and as untagged: both hidden
	E2 []int
	W  string `json:"Up"` // tagged "Up" here, folded-equal to ZInner's "up"
	X2 int    // untagged here, tagged in ZInner: the tagged one wins
}

type ZDeep struct{ ZInner } // ZInner again, one level deeper

type zHidden struct{ X int } // embedded unexported, not a pointer: fields settable

type zoo struct {
	S    string  `json:"s"`
	I    int     `json:"i"`
	I8   int8    `json:"i8"`
	I16  int16   `json:"i16"`
	I32  int32   `json:"i32"`
	I64  int64   `json:"i64"`
	U    uint    `json:"u"`
	U8   uint8   `json:"u8"`
	U16  uint16  `json:"u16"`
	U32  uint32  `json:"u32"`
	U64  uint64  `json:"u64"`
	UP   uintptr `json:"up2"`
	F32  float32 `json:"f32"`
	F64  float64 `json:"f64"`
	B    bool    `json:"b"`
	P    *int    `json:"p"`
	PP   **string
	PS   *zSmall `json:"ps"`
	NP   zPtr    `json:"np"`
	Sl   []string
	SlP  []*zSmall `json:"slp"`
	SlB  []byte    `json:"slb"`
	SlZB []zByte   `json:"slzb"`
	Arr  [3]int    `json:"arr"`
	ArrS [2]zSmall `json:"arrs"`
	M    map[string]int
	MS   map[string]string `json:"ms"`
	MI   map[int]string    `json:"mi"`
	MU   map[uint8]bool    `json:"mu"`
	MT   map[zTextKey]int  `json:"mt"`
	MA   map[string]any    `json:"ma"`
	MSl  map[string][]int  `json:"msl"`
	MP   map[string]*zSmall
	ML   zLabels         `json:"labels"`
	MF   map[float64]int `json:"mf"`
	Any  any             `json:"any"`
	Str  zStringer       `json:"str"`
	Num  json.Number     `json:"num"`
	Raw  json.RawMessage `json:"raw"`
	RawP *json.RawMessage
	T    zText  `json:"t"`
	TP   *zText `json:"tp"`
	TS   zTextSet
	J    zJSON  `json:"j"`
	JP   *zJSON `json:"jp"`
	V    zValue `json:"v"`
	Q    zQuantity
	QS   []zQuantity `json:"qs"`
	Time time.Time   `json:"time"`
	TmP  *time.Time  `json:"tmp"`
	ZInner
	*zinner
	ZEmbed2
	ZDeep
	zHidden
	Quoted  int      `json:",string"`
	QuotedP *float64 `json:"qp,string"`
	QuotedS string   `json:"qs2,string"`
	QuotedB bool     `json:"qb,string"`
	Ignored int      `json:"-"`
	Dash    int      `json:"-,"`
	hidden  int
	Ch      chan int
	Fn      func()
	Cx      complex128
	Rec     *zoo
	Case    string `json:"CaseName"`
	Fold    string `json:"ſtraße"`
	Kelvin  string `json:"k"`
	BadTag  string `json:"a\"b"`
}

// zooTargets returns fresh destinations of every zoo shape, top-level kinds included.
func zooTargets() []any {
	return []any{
		new(zoo), new([]zoo), new(map[string]zoo), new(any), new([]any), new(map[string]any),
		new(*zSmall), new(zSmall), new([2]zSmall), new(string), new(float64), new(int8),
		new(json.RawMessage), new(zText), new(zJSON), new(*zJSON), new(zQuantity), new(json.Number),
		new([]byte), new(map[zKey]string), new(zTextSet), new(zStringer), new(struct{ time.Time }),
		new(*struct{ time.Time }), new(time.Time), new(map[string]*zoo), new([]*[]int), new(zLabels),
	}
}

// fresh returns a new zero destination of the same type as target.
func fresh(target any) any { return reflect.New(reflect.TypeOf(target).Elem()).Interface() }
