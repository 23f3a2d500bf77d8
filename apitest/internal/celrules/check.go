package celrules

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/informerkit/informerkit/apitest/internal/apierr"
)

var supportedReasons = []string{"FieldValueDuplicate", "FieldValueForbidden", "FieldValueInvalid", "FieldValueRequired"}

// Check returns the errors the kube-apiserver's CRD validation gives the rules of a
// version's openAPIV3Schema, under fldPath (as "spec.versions[0].schema"): rules, messages,
// messageExpressions, reasons and fieldPaths that are invalid, rules that do not compile,
// oldSelf where old and new values cannot be paired, and estimated costs over the per-rule
// limit (skipped when unchanged: the version's schema is the one stored before an update)
// and over the limit of the whole schema.
func Check(openAPIV3Schema map[string]any, fldPath string, unchanged bool) []apierr.FieldError {
	s := schema(openAPIV3Schema)
	if s == nil {
		return nil
	}
	c := &crdChecker{unchanged: unchanged}
	root := path(fldPath).child("openAPIV3Schema")
	one := uint64(1)
	schemaErrs, celErrs := c.walk(s, root, &celCtx{s: s, inScope: len(s.rules()) > 0, card: &one}, nil)
	errs := append(schemaErrs, celErrs...)
	if c.total > StaticCRDCostLimit {
		for _, e := range c.expensive {
			errs = append(errs, apierr.ForbiddenValue(e.path.String(), "contributed to estimated rule cost total exceeding cost limit for entire OpenAPIv3 schema"))
		}
		errs = append(errs, apierr.ForbiddenValue(root.String(), costMessage("x-kubernetes-validations estimated rule cost total for entire OpenAPIv3 schema", c.total, StaticCRDCostLimit)))
	}
	return errs
}

type crdChecker struct {
	unchanged bool
	total     uint64
	expensive []ruleCost
}

type ruleCost struct {
	path path
	cost uint64
}

// observe adds a rule's cost to the schema's total and keeps the four most expensive
// rules of at least 1% of the limit.
func (c *crdChecker) observe(p path, cost uint64) {
	if math.MaxUint64-c.total < cost {
		c.total = math.MaxUint64
	} else {
		c.total += cost
	}
	if cost < StaticCRDCostLimit/100 {
		return
	}
	c.expensive = append(c.expensive, ruleCost{p, cost})
	slices.SortStableFunc(c.expensive, func(a, b ruleCost) int {
		switch {
		case a.cost > b.cost:
			return -1
		case a.cost < b.cost:
			return 1
		}
		return 0
	})
	if len(c.expensive) > 4 {
		c.expensive = c.expensive[:4]
	}
}

// celCtx is what compiling the rules of a schema node needs: its type (from the parent's,
// when the parent has one), whether rules are at or above it, and how often it can occur
// in one object (nil: unbounded).
type celCtx struct {
	s       schema
	parent  *celCtx
	access  func(*declType) *declType // the node's type from its parent's
	inScope bool
	card    *uint64
	t       *declType
	done    bool
}

func (x *celCtx) declType() *declType {
	if x.done {
		return x.t
	}
	x.done = true
	if x.parent != nil && x.access != nil {
		if pt := x.parent.declType(); pt != nil {
			if x.t = x.access(pt); x.t != nil {
				return x.t
			}
		}
	}
	x.t = declTypeOf(x.s, x.parent == nil || x.s.embedded())
	return x.t
}

func (x *celCtx) child(s schema, access func(*declType) *declType) *celCtx {
	if x == nil {
		return nil
	}
	c := &celCtx{s: s, parent: x, access: access, inScope: x.inScope || len(s.rules()) > 0}
	if x.card == nil {
		return c
	}
	var factor *uint64
	one := uint64(1)
	switch x.s.typ() {
	case "object":
		factor = &one
		if _, ok := x.s["additionalProperties"]; ok {
			factor = nil
			if n, ok := x.s.limit("maxProperties"); ok {
				f := uint64(zeroIfNegative(n))
				factor = &f
			}
		}
	case "array":
		if n, ok := x.s.limit("maxItems"); ok {
			f := uint64(zeroIfNegative(n))
			factor = &f
		}
	default:
		factor = &one
	}
	if factor != nil {
		v := mulGuard(*x.card, *factor)
		c.card = &v
	}
	return c
}

// walk checks the node s at p and the nodes below; uncorrelatable is the path of the
// highest ancestor under which old and new values cannot be paired (nil if none).
// Kept whole: it follows the server's walk of a schema step by step.
func (c *crdChecker) walk(s schema, p path, ctx *celCtx, uncorrelatable *path) (schemaErrs, celErrs []apierr.FieldError) {
	add := func(se, ce []apierr.FieldError) {
		schemaErrs = append(schemaErrs, se...)
		celErrs = append(celErrs, ce...)
	}
	forbid := func(u *path) *path {
		if uncorrelatable != nil {
			return uncorrelatable
		}
		return u
	}
	if a := s.additional(); a != nil {
		add(c.walk(a, p.child("additionalProperties"), ctx.child(a, func(pc *declType) *declType { return elemOf(pc, mapKind) }), uncorrelatable))
	}
	props := s.properties()
	for _, name := range s.propertyNames() {
		ps := props[name]
		u := uncorrelatable
		if mt := s.mapType(); mt != "" && mt != "granular" && mt != "atomic" {
			here := p
			u = forbid(&here)
		}
		name := name
		add(c.walk(ps, p.child("properties").key(name), ctx.child(ps, func(pc *declType) *declType {
			if pc.kind != objectKind {
				return nil
			}
			if esc, ok := escape(name); ok {
				if f, ok := pc.fields[esc]; ok {
					return f.typ
				}
			}
			return nil
		}), u))
	}
	for _, k := range []string{"allOf", "oneOf", "anyOf"} {
		list, _ := s[k].([]any)
		for i, e := range list {
			if es := asSchema(e); es != nil {
				add(c.walk(es, p.child(k).index(i), nil, uncorrelatable))
			}
		}
	}
	if n := asSchema(s["not"]); n != nil {
		add(c.walk(n, p.child("not"), nil, uncorrelatable))
	}
	if it := s.items(); it != nil {
		u := uncorrelatable
		if s.listType() != "map" {
			here := p
			u = forbid(&here)
		}
		add(c.walk(it, p.child("items"), ctx.child(it, func(pc *declType) *declType { return elemOf(pc, listKind) }), u))
	}
	rules := s.rules()
	if len(rules) == 0 {
		return schemaErrs, celErrs
	}
	rp := func(i int, f string) path { return p.child("x-kubernetes-validations").index(i).child(f) }
	for i, r := range rules {
		schemaErrs = append(schemaErrs, ruleShapeErrors(s, r, i, rp)...)
	}
	if len(schemaErrs) > 0 || ctx == nil {
		return schemaErrs, celErrs
	}
	t := ctx.declType()
	if t == nil {
		celErrs = append(celErrs, apierr.FieldError{Type: "InternalError", Field: p.child("x-kubernetes-validations").String(),
			Message: "Internal error: internal error: failed to construct type information for x-kubernetes-validations rules: unable to convert structural schema to CEL declarations"})
		return schemaErrs, celErrs
	}
	results, err := compileRules(s, rules, t)
	if err != nil {
		celErrs = append(celErrs, apierr.FieldError{Type: "InternalError", Field: p.child("x-kubernetes-validations").String(), Message: "Internal error: " + err.Error()})
		return schemaErrs, celErrs
	}
	for i, cr := range results {
		card := cr.maxCardinality
		if ctx.card != nil {
			card = *ctx.card
		}
		cost := mulGuard(cr.maxCost, card)
		if !c.unchanged && cost > StaticCostLimit {
			celErrs = append(celErrs, apierr.ForbiddenValue(rp(i, "rule").String(), costMessage("estimated rule cost", cost, StaticCostLimit)))
		}
		c.observe(rp(i, "rule"), cost)
		if cr.err != nil {
			if cr.err.kind == errRequired {
				celErrs = append(celErrs, apierr.RequiredValue(rp(i, "rule").String(), cr.err.detail))
			} else {
				celErrs = append(celErrs, invalid(rp(i, "rule"), ruleValue(cr.rule), cr.err.detail))
			}
		}
		if cr.msgErr != nil {
			celErrs = append(celErrs, invalid(rp(i, "messageExpression"), ruleValue(cr.rule), cr.msgErr.detail))
		} else if cr.msgProg != nil {
			if !c.unchanged && cr.msgMaxCost > StaticCostLimit {
				celErrs = append(celErrs, apierr.ForbiddenValue(rp(i, "messageExpression").String(), costMessage("estimated messageExpression cost", cr.msgMaxCost, StaticCostLimit)))
			}
			c.observe(rp(i, "messageExpression"), cr.msgMaxCost)
		}
		if cr.usesOldSelf {
			if uncorrelatable != nil {
				celErrs = append(celErrs, invalid(rp(i, "rule"), cr.rule.Rule, "oldSelf cannot be used on the uncorrelatable portion of the schema within "+uncorrelatable.String()))
			}
		} else if cr.rule.OptionalOldSelf != nil {
			celErrs = append(celErrs, invalid(rp(i, "optionalOldSelf"), *cr.rule.OptionalOldSelf, "may not be set if oldSelf is not used in rule"))
		}
	}
	return schemaErrs, celErrs
}

func elemOf(t *declType, k declKind) *declType {
	if t.kind != k {
		return nil
	}
	return t.elem
}

// ruleShapeErrors are the checks of one rule that need no compiling.
func ruleShapeErrors(s schema, r Rule, i int, rp func(int, string) path) []apierr.FieldError {
	var errs []apierr.FieldError
	rule, msg := strings.TrimSpace(r.Rule), strings.TrimSpace(r.Message)
	switch {
	case rule == "":
		errs = append(errs, apierr.RequiredValue(rp(i, "rule").String(), "rule is not specified"))
	case r.Message != "" && msg == "":
		errs = append(errs, invalid(rp(i, "message"), r.Message, "must be non-empty if specified"))
	case hasLineBreak(msg):
		errs = append(errs, invalid(rp(i, "message"), r.Message, "must not contain line breaks"))
	case hasLineBreak(rule) && msg == "":
		errs = append(errs, apierr.RequiredValue(rp(i, "message").String(), "message must be specified if rule contains line breaks"))
	}
	if r.MessageExpression != "" && strings.TrimSpace(r.MessageExpression) == "" {
		errs = append(errs, apierr.RequiredValue(rp(i, "messageExpression").String(), "messageExpression must be non-empty if specified"))
	}
	if r.Reason != nil && !slices.Contains(supportedReasons, *r.Reason) {
		errs = append(errs, notSupported(rp(i, "reason"), *r.Reason, supportedReasons))
	}
	if r.FieldPath != "" && strings.TrimSpace(r.FieldPath) == "" {
		errs = append(errs, invalid(rp(i, "fieldPath"), r.FieldPath, "must be non-empty if specified"))
	}
	if hasLineBreak(r.FieldPath) {
		errs = append(errs, invalid(rp(i, "fieldPath"), r.FieldPath, "must not contain line breaks"))
	}
	if r.FieldPath != "" {
		if _, _, err := validFieldPath(r.FieldPath, s); err != nil {
			errs = append(errs, invalid(rp(i, "fieldPath"), r.FieldPath, "must be a valid path"))
		}
	}
	return errs
}

func hasLineBreak(s string) bool { return strings.ContainsAny(s, "\n\r") }

func notSupported(p path, v string, supported []string) apierr.FieldError {
	q := make([]string, len(supported))
	for i, s := range supported {
		q[i] = fmt.Sprintf("%q", s)
	}
	return apierr.FieldError{Type: "FieldValueNotSupported", Field: p.String(),
		Message: fmt.Sprintf("Unsupported value: %q: supported values: %s", v, strings.Join(q, ", "))}
}

// ruleValue is a rule as the server prints it in compile errors: its internal type
// marshalled to JSON, fields by their Go names.
func ruleValue(r Rule) any {
	return struct {
		Rule              string
		Message           string
		MessageExpression string
		Reason            *string
		FieldPath         string
		OptionalOldSelf   *bool
	}{r.Rule, r.Message, r.MessageExpression, r.Reason, r.FieldPath, r.OptionalOldSelf}
}

// costMessage says by how much a cost exceeds its limit, in the server's words.
func costMessage(name string, cost, limit uint64) string {
	f := float64(cost) / float64(limit)
	var factor string
	switch {
	case f > 100:
		factor = "more than 100x"
	case f < 1.5:
		factor = fmt.Sprintf("%fx", f)
	default:
		factor = fmt.Sprintf("%.1fx", f)
	}
	return fmt.Sprintf("%s exceeds budget by factor of %s (try simplifying the rule, or adding maxItems, maxProperties, and maxLength where arrays, maps, and strings are declared)", name, factor)
}
