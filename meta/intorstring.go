package meta

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
)

// IntOrString holds an integer or a string, as apimachinery's intstr.IntOrString: a
// count or a percentage ("25%") such as a maxUnavailable, a port number or name. Its JSON
// is the number or the string. cmd/crdgen writes its schema (x-kubernetes-int-or-string).
type IntOrString struct {
	Type   IntOrStringType
	IntVal int32
	StrVal string
}

// IntOrStringType says which of an IntOrString's values it holds.
type IntOrStringType int

// The two kinds of value.
const (
	IntOrStringInt IntOrStringType = iota
	IntOrStringStr
)

// IntOrStringFromInt returns an IntOrString holding v.
func IntOrStringFromInt(v int32) IntOrString { return IntOrString{Type: IntOrStringInt, IntVal: v} }

// IntOrStringFromString returns an IntOrString holding s.
func IntOrStringFromString(s string) IntOrString { return IntOrString{Type: IntOrStringStr, StrVal: s} }

// String returns the string, or the integer in decimal.
func (v IntOrString) String() string {
	if v.Type == IntOrStringStr {
		return v.StrVal
	}
	return strconv.Itoa(int(v.IntVal))
}

// MarshalJSON writes the number or the string.
func (v IntOrString) MarshalJSON() ([]byte, error) {
	if v.Type == IntOrStringStr {
		return json.Marshal(v.StrVal)
	}
	return json.Marshal(v.IntVal)
}

// UnmarshalJSON reads a string or an integer that fits in 32 bits; null leaves v unchanged.
func (v *IntOrString) UnmarshalJSON(b []byte) error {
	switch {
	case string(b) == "null":
		return nil
	case len(b) > 0 && b[0] == '"':
		v.Type = IntOrStringStr
		return json.Unmarshal(b, &v.StrVal)
	}
	var n int32
	if err := json.Unmarshal(b, &n); err != nil {
		return fmt.Errorf("meta: an IntOrString is a 32-bit integer or a string: %s", b)
	}
	*v = IntOrStringFromInt(n)
	return nil
}

// ScaledValue returns the integer, or a percentage ("25%") of total, rounded up or down
// (apimachinery's GetScaledValueFromIntOrPercent): a Deployment's maxUnavailable of a
// replica count. A string that is not a percentage is an error; so is a nil v.
func (v *IntOrString) ScaledValue(total int, roundUp bool) (int, error) {
	if v == nil {
		return 0, errors.New("nil value for IntOrString")
	}
	if v.Type == IntOrStringInt {
		return int(v.IntVal), nil
	}
	digits, ok := strings.CutSuffix(v.StrVal, "%")
	if !ok {
		return 0, fmt.Errorf("invalid value for IntOrString: invalid type: string is not a percentage")
	}
	p, err := strconv.Atoi(digits)
	if err != nil {
		return 0, fmt.Errorf("invalid value %q: %v", v.StrVal, err)
	}
	f := float64(p) * float64(total) / 100
	if roundUp {
		return int(math.Ceil(f)), nil
	}
	return int(math.Floor(f)), nil
}
