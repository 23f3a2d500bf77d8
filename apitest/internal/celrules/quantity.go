package celrules

import (
	"errors"
	"math"
	"math/big"
	"strings"

	"github.com/google/cel-go/cel"
	"github.com/google/cel-go/common/types"
	"github.com/google/cel-go/common/types/ref"
)

// The kube-apiserver's errors for a string that is no quantity.
var (
	errQuantityFormat  = errors.New("quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'")
	errQuantityNumeric = errors.New("unable to parse numeric part of quantity")
	errQuantitySuffix  = errors.New("unable to parse quantity's suffix")
)

// quantity is a Kubernetes resource quantity ("500m", "1.5Gi", "2e3"), held exactly.
type quantity struct {
	opaque
	v *big.Rat
	// dec is set for quantities the server keeps as arbitrary decimals (many digits, or a
	// binary suffix with a fraction), which it never reads as an int64.
	dec bool
	// sum is set for results of add and sub, which the server returns as pointers: they
	// compare equal to a quantity() but a quantity() compares to them with "no such
	// overload".
	sum bool
}

func newQuantity(v *big.Rat, dec bool) quantity {
	return quantity{opaque: opaque{quantityType}, v: v, dec: dec}
}

func (q quantity) ConvertToType(t ref.Type) ref.Val { return convertTo(q, quantityType, nil, t) }
func (q quantity) Equal(o ref.Val) ref.Val {
	x, ok := o.(quantity)
	if !ok || x.sum {
		return types.MaybeNoSuchOverloadErr(o)
	}
	return types.Bool(q.v.Cmp(x.v) == 0)
}
func (q quantity) Value() any { return q.v }

var (
	nano       = big.NewRat(1, 1_000_000_000)
	maxAllowed = new(big.Rat).SetInt64(math.MaxInt64)
)

// parseQuantity reads s as the kube-apiserver's resource.ParseQuantity does: a signed
// decimal number and a suffix (binary Ki..Ei, decimal n..E, or an exponent), rounded up to
// a nano, at most 2^63-1 in magnitude.
func parseQuantity(s string) (quantity, error) {
	if s == "" {
		return quantity{}, errQuantityFormat
	}
	i := 0
	neg := false
	if s[0] == '-' || s[0] == '+' {
		neg = s[0] == '-'
		i++
	}
	numStart := i
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		i++
	}
	num := strings.TrimLeft(s[numStart:i], "0")
	denom := ""
	if i < len(s) && s[i] == '.' {
		i++
		ds := i
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			i++
		}
		denom = s[ds:i]
	}
	value := s[numStart:i]
	sufStart := i
	for i < len(s) && strings.IndexByte("eEinumkKMGTP", s[i]) >= 0 {
		i++
	}
	if i < len(s) && (s[i] == '-' || s[i] == '+') {
		i++
	}
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		i++
	}
	if i < len(s) {
		return quantity{}, errQuantityFormat
	}
	base, exp, ok := quantitySuffix(s[sufStart:])
	if !ok {
		return quantity{}, errQuantitySuffix
	}
	v, ok := new(big.Rat).SetString(value)
	if !ok {
		return quantity{}, errQuantityNumeric
	}
	scale := new(big.Rat).SetInt(new(big.Int).Exp(big.NewInt(int64(base)), big.NewInt(int64(abs(exp))), nil))
	if exp < 0 {
		scale.Inv(scale)
	}
	v.Mul(v, scale)
	// Finer than a nano: rounded up (away from zero).
	if n := new(big.Rat).Quo(v, nano); !n.IsInt() {
		f := new(big.Int).Quo(n.Num(), n.Denom())
		f.Add(f, big.NewInt(1))
		v.Mul(new(big.Rat).SetInt(f), nano)
	}
	if v.Cmp(maxAllowed) > 0 {
		v.Set(maxAllowed)
	}
	if neg {
		v.Neg(v)
	}
	dec := len(num)+len(denom) > 18 || base == 2 && denom != ""
	return newQuantity(v, dec), nil
}

func abs(n int) int { return max(n, -n) }

// quantitySuffix is the base and exponent a quantity's suffix stands for.
func quantitySuffix(s string) (base, exp int, ok bool) {
	switch s {
	case "Ki", "Mi", "Gi", "Ti", "Pi", "Ei":
		return 2, 10 * (1 + strings.Index("KMGTPE", s[:1])), true
	case "n":
		return 10, -9, true
	case "u":
		return 10, -6, true
	case "m":
		return 10, -3, true
	case "":
		return 10, 0, true
	case "k":
		return 10, 3, true
	case "M":
		return 10, 6, true
	case "G":
		return 10, 9, true
	case "T":
		return 10, 12, true
	case "P":
		return 10, 15, true
	case "E":
		return 10, 18, true
	}
	if len(s) > 1 && (s[0] == 'e' || s[0] == 'E') {
		n, neg, digits := 0, false, s[1:]
		if digits[0] == '-' || digits[0] == '+' {
			neg, digits = digits[0] == '-', digits[1:]
		}
		if digits == "" || len(digits) > 9 {
			return 0, 0, false
		}
		for _, c := range digits {
			if c < '0' || c > '9' {
				return 0, 0, false
			}
			n = n*10 + int(c-'0')
		}
		if neg {
			n = -n
		}
		return 10, n, true
	}
	return 0, 0, false
}

// asInt64 is the quantity as an int64, if it is an integer that fits.
func (q quantity) asInt64() (int64, bool) {
	if q.dec || !q.v.IsInt() || !q.v.Num().IsInt64() {
		return 0, false
	}
	return q.v.Num().Int64(), true
}

func quantityFunctions() []cel.EnvOption {
	q1 := func(f func(quantity) ref.Val) func(ref.Val) ref.Val {
		return func(v ref.Val) ref.Val {
			x, ok := v.(quantity)
			if !ok {
				return types.MaybeNoSuchOverloadErr(v)
			}
			return f(x)
		}
	}
	q2 := func(f func(a, b quantity) ref.Val) func(ref.Val, ref.Val) ref.Val {
		return func(a, b ref.Val) ref.Val {
			x, ok1 := a.(quantity)
			y, ok2 := b.(quantity)
			if !ok1 || !ok2 {
				return types.MaybeNoSuchOverloadErr(a)
			}
			return f(x, y)
		}
	}
	qi := func(f func(a quantity, b *big.Rat) ref.Val) func(ref.Val, ref.Val) ref.Val {
		return func(a, b ref.Val) ref.Val {
			x, ok1 := a.(quantity)
			i, ok2 := b.Value().(int64)
			if !ok1 || !ok2 {
				return types.MaybeNoSuchOverloadErr(a)
			}
			return f(x, new(big.Rat).SetInt64(i))
		}
	}
	result := func(v *big.Rat, dec bool) ref.Val { q := newQuantity(v, dec); q.sum = true; return q }
	sum := func(a quantity, b *big.Rat) ref.Val { return result(new(big.Rat).Add(a.v, b), a.dec) }
	diff := func(a quantity, b *big.Rat) ref.Val { return result(new(big.Rat).Sub(a.v, b), a.dec) }
	qt := []*cel.Type{quantityType, quantityType}
	return []cel.EnvOption{
		cel.Function("quantity", cel.Overload("string_to_quantity", []*cel.Type{cel.StringType}, quantityType, cel.UnaryBinding(func(v ref.Val) ref.Val {
			s, ok := v.Value().(string)
			if !ok {
				return types.MaybeNoSuchOverloadErr(v)
			}
			q, err := parseQuantity(s)
			if err != nil {
				return types.WrapErr(err)
			}
			return q
		}))),
		cel.Function("isQuantity", cel.Overload("is_quantity_string", []*cel.Type{cel.StringType}, cel.BoolType,
			cel.UnaryBinding(isString(func(s string) error { _, err := parseQuantity(s); return err })))),
		cel.Function("sign", cel.Overload("quantity_sign", []*cel.Type{quantityType}, cel.IntType,
			cel.UnaryBinding(q1(func(q quantity) ref.Val { return types.Int(q.v.Sign()) })))),
		cel.Function("isGreaterThan", cel.MemberOverload("quantity_is_greater_than", qt, cel.BoolType,
			cel.BinaryBinding(q2(func(a, b quantity) ref.Val { return types.Bool(a.v.Cmp(b.v) == 1) })))),
		cel.Function("isLessThan", cel.MemberOverload("quantity_is_less_than", qt, cel.BoolType,
			cel.BinaryBinding(q2(func(a, b quantity) ref.Val { return types.Bool(a.v.Cmp(b.v) == -1) })))),
		cel.Function("compareTo", cel.MemberOverload("quantity_compare_to", qt, cel.IntType,
			cel.BinaryBinding(q2(func(a, b quantity) ref.Val { return types.Int(a.v.Cmp(b.v)) })))),
		cel.Function("asApproximateFloat", cel.MemberOverload("quantity_get_float", []*cel.Type{quantityType}, cel.DoubleType,
			cel.UnaryBinding(q1(func(q quantity) ref.Val { f, _ := q.v.Float64(); return types.Double(f) })))),
		cel.Function("asInteger", cel.MemberOverload("quantity_get_int", []*cel.Type{quantityType}, cel.IntType,
			cel.UnaryBinding(q1(func(q quantity) ref.Val {
				if i, ok := q.asInt64(); ok {
					return types.Int(i)
				}
				return types.WrapErr(errors.New("cannot convert value to integer"))
			})))),
		cel.Function("isInteger", cel.MemberOverload("quantity_is_integer", []*cel.Type{quantityType}, cel.BoolType,
			cel.UnaryBinding(q1(func(q quantity) ref.Val { _, ok := q.asInt64(); return types.Bool(ok) })))),
		cel.Function("add",
			cel.MemberOverload("quantity_add", qt, quantityType, cel.BinaryBinding(q2(func(a, b quantity) ref.Val { return sum(a, b.v) }))),
			cel.MemberOverload("quantity_add_int", []*cel.Type{quantityType, cel.IntType}, quantityType, cel.BinaryBinding(qi(sum)))),
		cel.Function("sub",
			cel.MemberOverload("quantity_sub", qt, quantityType, cel.BinaryBinding(q2(func(a, b quantity) ref.Val { return diff(a, b.v) }))),
			cel.MemberOverload("quantity_sub_int", []*cel.Type{quantityType, cel.IntType}, quantityType, cel.BinaryBinding(qi(diff)))),
	}
}
