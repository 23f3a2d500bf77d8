package celrules

import (
	"regexp"

	"github.com/google/cel-go/cel"
	"github.com/google/cel-go/common/types"
	"github.com/google/cel-go/common/types/ref"
	"github.com/google/cel-go/common/types/traits"
)

// kubernetesLibraries are the functions the kube-apiserver adds to CEL for CRD rules,
// with its overload names (which appear in some of its error messages).
func kubernetesLibraries() []cel.EnvOption {
	var out []cel.EnvOption
	for _, lib := range [][]cel.EnvOption{listFunctions(), regexFunctions(), urlFunctions(), quantityFunctions(),
		ipFunctions(), cidrFunctions(), formatFunctions(), semverFunctions()} {
		out = append(out, lib...)
	}
	return out
}

// comparable are the element types isSorted, min and max accept; summable those of sum.
var (
	comparable = []struct {
		name string
		t    *cel.Type
	}{{"int", cel.IntType}, {"uint", cel.UintType}, {"double", cel.DoubleType}, {"bool", cel.BoolType},
		{"duration", cel.DurationType}, {"timestamp", cel.TimestampType}, {"string", cel.StringType}, {"bytes", cel.BytesType}}
	summable = map[string]ref.Val{"int": types.Int(0), "uint": types.Uint(0), "double": types.Double(0),
		"duration": types.Duration{}}
)

func listFunctions() []cel.EnvOption {
	var sorted, sums, mins, maxs []cel.FunctionOpt
	for _, c := range comparable {
		lt := cel.ListType(c.t)
		sorted = append(sorted, cel.MemberOverload("list_"+c.name+"_is_sorted_bool", []*cel.Type{lt}, cel.BoolType, cel.UnaryBinding(isSorted)))
		mins = append(mins, cel.MemberOverload("list_"+c.name+"_min_"+c.name, []*cel.Type{lt}, c.t, cel.UnaryBinding(extreme("min", types.IntOne))))
		maxs = append(maxs, cel.MemberOverload("list_"+c.name+"_max_"+c.name, []*cel.Type{lt}, c.t, cel.UnaryBinding(extreme("max", types.IntNegOne))))
		if zero, ok := summable[c.name]; ok {
			sums = append(sums, cel.MemberOverload("list_"+c.name+"_sum_"+c.name, []*cel.Type{lt}, c.t, cel.UnaryBinding(sum(zero))))
		}
	}
	a := cel.TypeParamType("A")
	return []cel.EnvOption{
		cel.Function("isSorted", sorted...),
		cel.Function("sum", sums...),
		cel.Function("min", mins...),
		cel.Function("max", maxs...),
		cel.Function("indexOf", cel.MemberOverload("list_a_index_of_int", []*cel.Type{cel.ListType(a), a}, cel.IntType,
			cel.BinaryBinding(func(l, v ref.Val) ref.Val { return indexOf(l, v, false) }))),
		cel.Function("lastIndexOf", cel.MemberOverload("list_a_last_index_of_int", []*cel.Type{cel.ListType(a), a}, cel.IntType,
			cel.BinaryBinding(func(l, v ref.Val) ref.Val { return indexOf(l, v, true) }))),
	}
}

func isSorted(v ref.Val) ref.Val {
	it, ok := v.(traits.Iterable)
	if !ok {
		return types.MaybeNoSuchOverloadErr(v)
	}
	var prev traits.Comparer
	for i := it.Iterator(); i.HasNext() == types.True; {
		next := i.Next()
		c, ok := next.(traits.Comparer)
		if !ok {
			return types.MaybeNoSuchOverloadErr(next)
		}
		if prev != nil && prev.Compare(next) == types.IntOne {
			return types.False
		}
		prev = c
	}
	return types.True
}

func sum(zero ref.Val) func(ref.Val) ref.Val {
	return func(v ref.Val) ref.Val {
		it, ok := v.(traits.Iterable)
		if !ok {
			return types.MaybeNoSuchOverloadErr(v)
		}
		acc := zero
		for i := it.Iterator(); i.HasNext() == types.True; {
			a, ok := acc.(traits.Adder)
			if !ok {
				return types.MaybeNoSuchOverloadErr(acc)
			}
			acc = a.Add(i.Next())
			if types.IsError(acc) {
				return acc
			}
		}
		return acc
	}
}

// extreme keeps the element a comparison with the current one answers prefer for.
func extreme(name string, prefer ref.Val) func(ref.Val) ref.Val {
	return func(v ref.Val) ref.Val {
		it, ok := v.(traits.Iterable)
		if !ok {
			return types.MaybeNoSuchOverloadErr(v)
		}
		var best traits.Comparer
		for i := it.Iterator(); i.HasNext() == types.True; {
			next := i.Next()
			c, ok := next.(traits.Comparer)
			if !ok {
				return types.MaybeNoSuchOverloadErr(next)
			}
			if best == nil || best.Compare(next) == prefer {
				best = c
			}
		}
		if best == nil {
			return types.NewErr("%s called on empty list", name)
		}
		return best.(ref.Val)
	}
}

func indexOf(l, v ref.Val, last bool) ref.Val {
	list, ok := l.(traits.Lister)
	if !ok {
		return types.MaybeNoSuchOverloadErr(l)
	}
	n := int64(list.Size().(types.Int))
	for k := int64(0); k < n; k++ {
		i := k
		if last {
			i = n - 1 - k
		}
		if list.Get(types.Int(i)).Equal(v) == types.True {
			return types.Int(i)
		}
	}
	return types.Int(-1)
}

func regexFunctions() []cel.EnvOption {
	findAll := func(args ...ref.Val) ref.Val {
		if len(args) < 2 || len(args) > 3 {
			return types.NoSuchOverloadErr()
		}
		s, ok1 := args[0].Value().(string)
		re, ok2 := args[1].Value().(string)
		if !ok1 || !ok2 {
			return types.MaybeNoSuchOverloadErr(args[0])
		}
		n := int64(-1)
		if len(args) == 3 {
			var ok bool
			if n, ok = args[2].Value().(int64); !ok {
				return types.MaybeNoSuchOverloadErr(args[2])
			}
		}
		r, err := regexp.Compile(re)
		if err != nil {
			return types.NewErr("Illegal regex: %v", err.Error())
		}
		return types.NewStringList(types.DefaultTypeAdapter, r.FindAllString(s, int(n)))
	}
	return []cel.EnvOption{
		cel.Function("find", cel.MemberOverload("string_find_string", []*cel.Type{cel.StringType, cel.StringType}, cel.StringType,
			cel.BinaryBinding(func(sv, rv ref.Val) ref.Val {
				s, ok1 := sv.Value().(string)
				re, ok2 := rv.Value().(string)
				if !ok1 || !ok2 {
					return types.MaybeNoSuchOverloadErr(sv)
				}
				r, err := regexp.Compile(re)
				if err != nil {
					return types.NewErr("Illegal regex: %v", err.Error())
				}
				return types.String(r.FindString(s))
			}))),
		cel.Function("findAll",
			cel.MemberOverload("string_find_all_string", []*cel.Type{cel.StringType, cel.StringType}, cel.ListType(cel.StringType),
				cel.BinaryBinding(func(s, r ref.Val) ref.Val { return findAll(s, r) })),
			cel.MemberOverload("string_find_all_string_int", []*cel.Type{cel.StringType, cel.StringType, cel.IntType},
				cel.ListType(cel.StringType), cel.FunctionBinding(findAll))),
	}
}
