package celrules

import (
	"math"

	"github.com/google/cel-go/checker"
	"github.com/google/cel-go/common/ast"
	"github.com/google/cel-go/common/types"
	"github.com/google/cel-go/common/types/ref"
	"github.com/google/cel-go/common/types/traits"
)

// CEL's cost factors (cel-go's common package).
const (
	stringTraversal = 0.1
	regexPerChar    = 0.25
)

// costEstimator gives the Kubernetes libraries' functions the costs the kube-apiserver
// gives them, both estimated (when a CRD is written) and actual (when a rule runs), and
// sizes from the schema (sizes). Other functions get cel-go's own costs.
type costEstimator struct {
	sizes checker.CostEstimator
}

func fixed(n uint64) *checker.CallEstimate {
	return &checker.CallEstimate{CostEstimate: checker.CostEstimate{Min: n, Max: n}}
}

func (c *costEstimator) size(n checker.AstNode) checker.SizeEstimate {
	if sz := n.ComputedSize(); sz != nil {
		return *sz
	}
	if c.sizes != nil {
		if sz := c.sizes.EstimateSize(n); sz != nil {
			return *sz
		}
	}
	return checker.SizeEstimate{Min: 0, Max: math.MaxUint64}
}

// EstimateSize implements checker.CostEstimator.
func (c *costEstimator) EstimateSize(n checker.AstNode) *checker.SizeEstimate {
	if c.sizes != nil {
		return c.sizes.EstimateSize(n)
	}
	return nil
}

// EstimateCallCost implements checker.CostEstimator. Kept whole: one case per function,
// as the server's table.
func (c *costEstimator) EstimateCallCost(fn, overload string, target *checker.AstNode, args []checker.AstNode) *checker.CallEstimate {
	switch fn {
	case "isSorted", "sum", "max", "min", "indexOf", "lastIndexOf":
		if target == nil {
			return nil
		}
		if el := c.listElement(*target); el != nil {
			elCost := checker.CostEstimate{Min: 1, Max: 1}
			if k := el.Type().Kind(); k == types.StringKind || k == types.BytesKind {
				elCost = elCost.Add(c.size(el).MultiplyByCostFactor(stringTraversal))
			}
			return &checker.CallEstimate{CostEstimate: c.size(*target).MultiplyByCost(elCost)}
		}
		return &checker.CallEstimate{CostEstimate: c.size(*target).MultiplyByCostFactor(stringTraversal)}
	case "url":
		if len(args) == 1 {
			sz := c.size(args[0])
			return &checker.CallEstimate{CostEstimate: sz.MultiplyByCostFactor(stringTraversal), ResultSize: &sz}
		}
	case "lowerAscii", "upperAscii", "substring", "trim":
		if target != nil {
			sz := c.size(*target)
			return &checker.CallEstimate{CostEstimate: sz.MultiplyByCostFactor(stringTraversal), ResultSize: &sz}
		}
	case "replace":
		if target != nil && len(args) >= 2 {
			return c.replaceCost(*target, args[0], args[1])
		}
	case "split":
		if target != nil {
			sz := c.size(*target)
			most := sz.Max // every character its own item, with an empty separator
			if len(args) > 1 {
				if v := args[1].Expr().AsLiteral(); v != nil {
					if i, ok := v.Value().(int64); ok {
						most = uint64(i)
					}
				}
			}
			return &checker.CallEstimate{CostEstimate: sz.MultiplyByCostFactor(2 * stringTraversal), ResultSize: &checker.SizeEstimate{Min: 0, Max: most}}
		}
	case "join":
		if target != nil {
			return c.joinCost(*target, args)
		}
	case "find", "findAll":
		if target != nil && len(args) >= 1 {
			sz := c.size(*target)
			strCost := sz.Add(checker.SizeEstimate{Min: 1, Max: 1}).MultiplyByCostFactor(stringTraversal)
			reCost := c.size(args[0]).MultiplyByCostFactor(regexPerChar)
			return &checker.CallEstimate{CostEstimate: strCost.Multiply(reCost), ResultSize: &checker.SizeEstimate{Min: 0, Max: sz.Max}}
		}
	case "cidr", "isIP", "isCIDR", "quantity", "isQuantity", "semver", "isSemver":
		if len(args) >= 1 {
			return &checker.CallEstimate{CostEstimate: c.size(args[0]).MultiplyByCostFactor(stringTraversal)}
		}
	case "ip":
		if overload == "cidr_ip" {
			return fixed(1)
		}
		if len(args) >= 1 {
			return &checker.CallEstimate{CostEstimate: c.size(args[0]).MultiplyByCostFactor(stringTraversal)}
		}
	case "ip.isCanonical":
		if len(args) >= 1 {
			return &checker.CallEstimate{CostEstimate: c.size(args[0]).MultiplyByCostFactor(2 * stringTraversal)}
		}
	case "masked", "prefixLength", "family", "isUnspecified", "isLoopback", "isLinkLocalMulticast",
		"isLinkLocalUnicast", "isGlobalUnicast", "format.named", "sign", "asInteger", "isInteger",
		"asApproximateFloat", "isGreaterThan", "isLessThan", "compareTo", "add", "sub", "major", "minor", "patch",
		"getScheme", "getHostname", "getHost", "getPort", "getEscapedPath", "getQuery":
		return fixed(1)
	case "containsIP", "containsCIDR":
		if len(args) >= 1 {
			// Comparing two addresses of 4 or 16 bytes; a CIDR is masked and its bits
			// compared too; a string argument is parsed first.
			sz := checker.SizeEstimate{Min: 4, Max: 16}
			cost := sz.Add(sz).MultiplyByCostFactor(stringTraversal)
			if fn == "containsCIDR" {
				cost = cost.Add(sz.MultiplyByCostFactor(stringTraversal)).Add(checker.CostEstimate{Min: 1, Max: 1})
			}
			if overload == "cidr_contains_ip_string" || overload == "cidr_contains_cidr_string" {
				cost = cost.Add(checker.CostEstimate(c.size(args[0])).MultiplyByCostFactor(stringTraversal))
			}
			return &checker.CallEstimate{CostEstimate: cost}
		}
	case "validate":
		if len(args) >= 1 {
			return &checker.CallEstimate{CostEstimate: c.size(args[0]).MultiplyByCostFactor(stringTraversal).
				MultiplyByCostFactor(maxFormatRegexSize * regexPerChar)}
		}
	case "_==_":
		if len(args) == 2 && args[0].Type().Equal(args[1].Type()) == types.True {
			switch t := args[0].Type(); t.TypeName() {
			case ipType.TypeName(), cidrType.TypeName(), quantityType.TypeName(), semverType.TypeName():
				return fixed(1)
			case formatType.TypeName():
				return &checker.CallEstimate{CostEstimate: checker.CostEstimate{Min: 1, Max: maxFormatSize}.MultiplyByCostFactor(stringTraversal)}
			case urlType.TypeName():
				size := checker.SizeEstimate{Min: 1, Max: 1}
				if r := args[1].ComputedSize(); r != nil {
					size = r.Union(*r)
				}
				return &checker.CallEstimate{CostEstimate: checker.CostEstimate{Min: 1, Max: size.Max}.MultiplyByCostFactor(stringTraversal)}
			}
		}
	}
	return nil
}

// replaceCost bounds s.replace(old, new): a traversal, and a result as long as the most
// replacements of the shortest old by the longest new make it.
func (c *costEstimator) replaceCost(target, oldArg, newArg checker.AstNode) *checker.CallEstimate {
	sz, from, to := c.size(target), c.size(oldArg), c.size(newArg)
	var count, kept checker.SizeEstimate
	switch {
	case from.Min == 0: // an empty old surrounds every character
		count.Max = sz.Max
		if sz.Max < math.MaxUint64 {
			count.Max = sz.Max + 1
		}
		kept.Max = sz.Max
	case to.Max <= from.Min:
		kept.Max = sz.Max
	default:
		count.Max = uint64(math.Ceil(float64(sz.Max) / float64(from.Min)))
	}
	switch {
	case from.Max == 0:
		count.Min = sz.Min
		if sz.Min < math.MaxUint64 {
			count.Min = sz.Min + 1
		}
		kept.Min = sz.Min
	case from.Max <= to.Min:
		kept.Min = sz.Min
	default:
		count.Min = uint64(math.Ceil(float64(sz.Min) / float64(from.Max)))
	}
	size := count.Multiply(to).Add(kept)
	return &checker.CallEstimate{CostEstimate: sz.MultiplyByCostFactor(2 * stringTraversal), ResultSize: &size}
}

// joinCost bounds list.join(sep): the items and the separators between them.
func (c *costEstimator) joinCost(target checker.AstNode, args []checker.AstNode) *checker.CallEstimate {
	var sz checker.SizeEstimate
	n := c.size(target)
	if el := c.listElement(target); el != nil {
		sz = n.Multiply(c.size(el))
	}
	if len(args) > 0 {
		var seps checker.SizeEstimate
		if n.Min > 0 {
			seps.Min = n.Min - 1
		}
		if n.Max > 0 {
			seps.Max = n.Max - 1
		}
		sz = sz.Add(c.size(args[0]).Multiply(seps))
	}
	return &checker.CallEstimate{CostEstimate: sz.MultiplyByCostFactor(stringTraversal), ResultSize: &sz}
}

// listElement is a node standing for the items of the list node n (nil if n is no list).
func (c *costEstimator) listElement(n checker.AstNode) checker.AstNode {
	params := n.Type().Parameters()
	if len(params) == 0 {
		return nil
	}
	var p []string
	if np := n.Path(); np != nil {
		p = append(append(p, np...), "@items")
	}
	return &itemsNode{path: p, t: params[0]}
}

type itemsNode struct {
	path []string
	t    *types.Type
}

func (i *itemsNode) Path() []string                      { return i.path }
func (i *itemsNode) Type() *types.Type                   { return i.t }
func (i *itemsNode) Expr() ast.Expr                      { return nil }
func (i *itemsNode) ComputedSize() *checker.SizeEstimate { return nil }

// CallCost implements interpreter.ActualCostEstimator: the cost of a call as it runs.
func (c *costEstimator) CallCost(fn, overload string, args []ref.Val, result ref.Val) *uint64 {
	n := func(v uint64) *uint64 { return &v }
	strCost := func(v ref.Val, factor float64) *uint64 {
		return n(uint64(math.Ceil(float64(actualSize(v)) * factor)))
	}
	switch fn {
	case "isSorted", "sum", "max", "min", "indexOf", "lastIndexOf":
		var cost uint64
		if len(args) > 0 {
			cost = traversalCost(args[0])
		}
		return &cost
	case "url", "lowerAscii", "upperAscii", "substring", "trim":
		if len(args) >= 1 {
			return strCost(args[0], stringTraversal)
		}
	case "replace", "split":
		if len(args) >= 1 {
			return strCost(args[0], 2*stringTraversal)
		}
	case "join":
		if len(args) >= 1 {
			return strCost(result, 2*stringTraversal)
		}
	case "find", "findAll":
		if len(args) >= 2 {
			s := uint64(math.Ceil((1.0 + float64(actualSize(args[0]))) * stringTraversal))
			r := uint64(math.Ceil(float64(actualSize(args[1])) * regexPerChar))
			return n(s * r)
		}
	case "cidr", "isIP", "isCIDR", "quantity", "isQuantity", "semver", "isSemver":
		if len(args) >= 1 {
			return strCost(args[0], stringTraversal)
		}
	case "ip":
		if len(args) >= 1 {
			if overload == "cidr_ip" {
				return n(1)
			}
			return strCost(args[0], stringTraversal)
		}
	case "ip.isCanonical":
		if len(args) >= 1 {
			return strCost(args[0], 2*stringTraversal)
		}
	case "masked", "prefixLength", "family", "isUnspecified", "isLoopback", "isLinkLocalMulticast",
		"isLinkLocalUnicast", "isGlobalUnicast", "format.named", "sign", "asInteger", "isInteger",
		"asApproximateFloat", "isGreaterThan", "isLessThan", "compareTo", "add", "sub", "major", "minor", "patch",
		"getScheme", "getHostname", "getHost", "getPort", "getEscapedPath", "getQuery":
		return n(1)
	case "containsIP", "containsCIDR":
		if len(args) >= 2 {
			cidr, other := actualSize(args[0]), actualSize(args[1])
			cost := uint64(math.Ceil(float64(2*cidr) * stringTraversal))
			if fn == "containsCIDR" {
				cost += uint64(math.Ceil(float64(cidr)*stringTraversal)) + 1
			}
			if overload == "cidr_contains_ip_string" || overload == "cidr_contains_cidr_string" {
				cost += uint64(math.Ceil(float64(other) * stringTraversal))
			}
			return &cost
		}
	case "validate":
		if len(args) >= 2 {
			if f, ok := args[0].(namedFormat); ok {
				s := uint64(math.Ceil((1.0 + float64(actualSize(args[1]))) * stringTraversal))
				r := uint64(math.Ceil(float64(f.maxRegexSize) * regexPerChar))
				return n(s * r)
			}
		}
	case "_==_":
		if len(args) == 2 {
			switch args[0].(type) {
			case quantity, ipVal, cidrVal, namedFormat, urlVal, semverVal:
				return n(1)
			}
		}
	}
	return nil
}

func actualSize(v ref.Val) uint64 {
	if sz, ok := v.(traits.Sizer); ok {
		if i, ok := sz.Size().(types.Int); ok {
			return uint64(i)
		}
	}
	return 1
}

// traversalCost is the cost of walking a value whole.
func traversalCost(v ref.Val) uint64 {
	switch x := v.(type) {
	case types.String:
		return uint64(float64(len(string(x))) * stringTraversal)
	case types.Bytes:
		return uint64(float64(len(x)) * stringTraversal)
	case traits.Lister:
		var cost uint64
		for it := x.Iterator(); it.HasNext() == types.True; {
			cost += traversalCost(it.Next())
		}
		return cost
	case traits.Mapper:
		var cost uint64
		for it := x.Iterator(); it.HasNext() == types.True; {
			k := it.Next()
			cost += traversalCost(k) + traversalCost(x.Get(k))
		}
		return cost
	}
	return 1
}
