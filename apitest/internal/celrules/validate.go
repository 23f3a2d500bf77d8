package celrules

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/google/cel-go/cel"
	"github.com/google/cel-go/common/types"
	"github.com/google/cel-go/common/types/ref"
	"github.com/google/cel-go/interpreter"

	"github.com/informerkit/informerkit/apitest/internal/apierr"
)

// Validator holds the compiled rules of one CustomResourceDefinition version's schema.
type Validator struct {
	root   *node
	schema schema
}

// New compiles the x-kubernetes-validations rules of a version's openAPIV3Schema. It
// returns nil when the schema has none. Rules that do not compile are kept with their
// error, which Validate reports as the kube-apiserver does ("rule compile error: ...").
func New(openAPIV3Schema map[string]any) *Validator {
	s := schema(openAPIV3Schema)
	if !hasRules(s) {
		return nil
	}
	return &Validator{root: build(s, s, true, declTypeOf(s, true)), schema: s}
}

// Validate evaluates the rules on obj, a custom resource being created (old nil) or
// updated from old (a /status update too: the whole object is evaluated), and returns the
// field errors of the rules that failed, in the kube-apiserver's words and paths, and the
// warnings of failures it ratchets: a rule that does not use oldSelf and fails on a value
// the update did not change is a warning, not an error.
func (v *Validator) Validate(ctx context.Context, obj, old map[string]any) ([]apierr.FieldError, []string) {
	if v == nil || v.root == nil {
		return nil, nil
	}
	e := &evaluation{ctx: ctx}
	var c ratchet
	var oldObj any
	if old != nil {
		oldObj = old
		c = ratchet{cur: &corr{new: obj, old: old, s: v.schema}}
	}
	e.validate(v.root, "", obj, oldObj, c, RuntimeCostBudget)
	return e.errs, e.warnings
}

type evaluation struct {
	ctx      context.Context
	errs     []apierr.FieldError
	warnings []string
}

// validate evaluates n's rules on obj and descends; it returns the budget left (negative:
// spent, stop).
func (e *evaluation) validate(n *node, p path, obj, old any, c ratchet, budget int64) int64 {
	if n == nil || obj == nil {
		return budget
	}
	if budget = e.expressions(n, p, obj, old, c, budget); budget < 0 {
		return budget
	}
	for _, a := range n.allOf {
		// allOf failures are not ratcheted (as the server's schema validation does not).
		if budget = e.validate(a, p, obj, old, ratchet{parent: c.parent}, budget); budget < 0 {
			return budget
		}
	}
	switch x := obj.(type) {
	case []any:
		if n.items == nil {
			return budget
		}
		oldList, _ := old.([]any)
		var olds *mapList
		if n.s.listType() == "map" {
			olds = newMapList(n.s.listMapKeys(), oldList)
		}
		for i, item := range x {
			var oldItem any
			if olds != nil {
				oldItem = olds.get(item)
			}
			if budget = e.validate(n.items, p.index(i), item, oldItem, c.index(i), budget); budget < 0 {
				return budget
			}
		}
	case map[string]any:
		oldMap, _ := old.(map[string]any)
		mt := n.s.mapType()
		correlatable := mt == "" || mt == "granular" || mt == "atomic"
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		if n.additional != nil {
			for _, k := range keys {
				var o any
				if correlatable {
					o = oldMap[k]
				}
				if budget = e.validate(n.additional, p.key(k), x[k], o, c.key(k), budget); budget < 0 {
					return budget
				}
			}
		}
		for _, k := range keys {
			sub, ok := n.props[k]
			if !ok {
				continue
			}
			var o any
			if correlatable {
				o = oldMap[k]
			}
			if budget = e.validate(sub, p.child(k), x[k], o, c.key(k), budget); budget < 0 {
				return budget
			}
		}
	}
	return budget
}

// typeValue is the schema's type as the server gives it for the invalid value of errors
// about a rule rather than the data.
func typeValue(s schema) string { return s.typ() }

// expressions evaluates the rules of n itself.
func (e *evaluation) expressions(n *node, p path, obj, old any, c ratchet, budget int64) int64 {
	s := n.s
	if n.compileErr != nil {
		e.errs = append(e.errs, invalid(p, typeValue(s), "rule compiler initialization error: "+n.compileErr.Error()))
		return budget
	}
	if len(n.rules) == 0 {
		return budget
	}
	if budget <= 0 {
		e.errs = append(e.errs, invalid(p, typeValue(s), "validation failed due to running out of cost budget, no further validation rules will be run"))
		return -1
	}
	if n.root {
		s = s.withTypeAndObjectMeta()
	}
	act := &activation{self: toVal(obj, s)}
	optAct := &activation{self: act.self, hasOld: true, old: types.OptionalNone}
	if old != nil {
		act.old, act.hasOld = toVal(old, s), true
		optAct.old = types.OptionalOf(act.old)
	}
	for _, r := range n.rules {
		if r.err != nil {
			e.errs = append(e.errs, invalid(p, typeValue(s), "rule compile error: "+r.err.detail))
			continue
		}
		if r.prog == nil {
			continue // an empty rule
		}
		optional := r.rule.OptionalOldSelf != nil && *r.rule.OptionalOldSelf
		if r.usesOldSelf && old == nil && !optional {
			continue // a transition rule runs only where an old value exists
		}
		ra := act
		if optional {
			ra = optAct
		}
		val, det, err := r.prog.ContextEval(e.ctx, ra)
		var cost *uint64
		if det != nil {
			cost = det.ActualCost()
		}
		if cost == nil {
			e.errs = append(e.errs, invalid(p, typeValue(s), fmt.Sprintf("runtime cost could not be calculated for validation rule: %v, no further validation rules will be run", ruleErrorString(r.rule))))
			return -1
		}
		if *cost > math.MaxInt64 || int64(*cost) > budget {
			e.errs = append(e.errs, invalid(p, typeValue(s), "validation failed due to running out of cost budget, no further validation rules will be run"))
			return -1
		}
		budget -= int64(*cost)
		if err != nil {
			switch msg := err.Error(); {
			case strings.HasPrefix(msg, "no such overload"):
				e.errs = append(e.errs, invalid(p, typeValue(s), fmt.Sprintf("'%v': call arguments did not match a supported operator, function or macro signature for rule: %v", err, ruleErrorString(r.rule))))
			case strings.HasPrefix(msg, "operation cancelled: actual cost limit exceeded"):
				e.errs = append(e.errs, invalid(p, typeValue(s), fmt.Sprintf("'%v': no further validation rules will be run due to call cost exceeds limit for rule: %v", err, ruleErrorString(r.rule))))
				return -1
			default:
				e.errs = append(e.errs, invalid(p, typeValue(s), fmt.Sprintf("%v evaluating rule: %v", err, ruleErrorString(r.rule))))
			}
			continue
		}
		if val == types.True {
			continue
		}
		if budget = e.failed(r, s, p, obj, act, c, budget); budget < 0 {
			return budget
		}
	}
	return budget
}

// failed reports the failure of the rule r on obj at p: its message (from its
// messageExpression if that evaluates), its fieldPath and reason; a warning instead of an
// error when the value did not change (c). It returns the budget left.
func (e *evaluation) failed(r compiled, s schema, p path, obj any, act *activation, c ratchet, budget int64) int64 {
	fp := p
	if r.fieldPath != "" {
		fp = p.child(r.fieldPath)
	}
	add := func(fe apierr.FieldError) {
		if !r.usesOldSelf && c.unchanged() {
			e.warnings = append(e.warnings, fe.Field+": "+fe.Message)
		} else {
			e.errs = append(e.errs, fe)
		}
	}
	detail, ok := "", false
	if r.msgProg != nil {
		msg, left, merr := evalMessage(e.ctx, r.msgProg, r.rule.MessageExpression, act, budget)
		switch {
		case merr == nil:
			detail, ok, budget = msg, true, left
		case merr.kind == errInternal:
			add(apierr.FieldError{Type: "InternalError", Field: fp.String(), Message: "Internal error: " + merr.detail})
			return -1
		case merr.kind == errInvalid:
			add(invalid(fp, typeValue(s), merr.detail))
			return -1
		default:
			budget = left // the message falls back to the rule's
		}
	}
	if !ok {
		detail = ruleMessage(r.rule)
	}
	var value any = omit{}
	if t := s.typ(); t != "object" && t != "array" {
		value = obj
	}
	add(reasonError(fp, value, detail, r.rule.Reason))
	return budget
}

// errMessage is the third kind of messageExpression failure: the message falls back to
// the rule's own.
const errMessage errKind = 3

// evalMessage evaluates a rule's messageExpression, as the server does: trimmed, one line,
// not empty, at most 5 KiB.
func evalMessage(ctx context.Context, prog cel.Program, src string, act interpreter.Activation, budget int64) (string, int64, *ruleError) {
	val, det, err := prog.ContextEval(ctx, act)
	var cost *uint64
	if det != nil {
		cost = det.ActualCost()
	}
	if cost == nil {
		return "", -1, &ruleError{errInternal, fmt.Sprintf("runtime cost could not be calculated for messageExpression: %q", src)}
	}
	if *cost > math.MaxInt64 || int64(*cost) > budget {
		return "", -1, &ruleError{errInvalid, "messageExpression evaluation failed due to running out of cost budget, no further validation rules will be run"}
	}
	left := budget - int64(*cost)
	if err != nil {
		if strings.HasPrefix(err.Error(), "operation cancelled: actual cost limit exceeded") {
			return "", -1, &ruleError{errInvalid, fmt.Sprintf("no further validation rules will be run due to call cost exceeds limit for messageExpression: %q", src)}
		}
		return "", left, &ruleError{errMessage, "messageExpression evaluation failed due to: " + err.Error()}
	}
	msg, ok := val.Value().(string)
	if !ok {
		return "", left, &ruleError{errMessage, "messageExpression failed to convert to string"}
	}
	msg = strings.TrimSpace(msg)
	switch {
	case len(msg) > maxMessageBytes:
		return "", left, &ruleError{errMessage, fmt.Sprintf("messageExpression beyond allowable length of %d", maxMessageBytes)}
	case strings.Contains(msg, "\n"):
		return "", left, &ruleError{errMessage, "messageExpression should not contain line breaks"}
	case msg == "":
		return "", left, &ruleError{errMessage, "messageExpression should evaluate to a non-empty string"}
	}
	return msg, left, nil
}

func ruleMessage(r Rule) string {
	if r.Message == "" {
		return "failed rule: " + ruleErrorString(r)
	}
	return strings.TrimSpace(r.Message)
}

func ruleErrorString(r Rule) string {
	if r.Message != "" {
		return strings.TrimSpace(r.Message)
	}
	return strings.TrimSpace(r.Rule)
}

// omit stands for a value the error does not print (objects and lists).
type omit struct{}

// badValue prints an invalid value as the server's field errors do: numbers and booleans
// plainly, strings quoted, anything else as JSON.
func badValue(v any) string {
	if isInteger(v) {
		i, _ := toInt64(v)
		return fmt.Sprint(i)
	}
	if f, ok := toFloat64(v); ok {
		return fmt.Sprint(f)
	}
	switch x := v.(type) {
	case bool:
		return fmt.Sprint(x)
	case string:
		return fmt.Sprintf("%q", x)
	}
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprintf("%#v", v)
	}
	return string(b)
}

func invalid(p path, value any, detail string) apierr.FieldError {
	msg := "Invalid value"
	if _, ok := value.(omit); !ok {
		msg += ": " + badValue(value)
	}
	if detail != "" {
		msg += ": " + detail
	}
	return apierr.FieldError{Type: "FieldValueInvalid", Field: p.String(), Message: msg}
}

// reasonError is the error of a failed rule with its reason (FieldValueInvalid unless the
// rule says FieldValueForbidden, FieldValueRequired or FieldValueDuplicate).
func reasonError(p path, value any, detail string, reason *string) apierr.FieldError {
	r := ""
	if reason != nil {
		r = *reason
	}
	switch r {
	case "FieldValueForbidden":
		return apierr.FieldError{Type: r, Field: p.String(), Message: "Forbidden: " + detail}
	case "FieldValueRequired":
		return apierr.FieldError{Type: r, Field: p.String(), Message: "Required value: " + detail}
	case "FieldValueDuplicate":
		msg := "Duplicate value"
		if _, ok := value.(omit); !ok {
			msg += ": " + badValue(value)
		}
		return apierr.FieldError{Type: r, Field: p.String(), Message: msg}
	}
	return invalid(p, value, detail)
}

// activation binds self and oldSelf.
type activation struct {
	self, old ref.Val
	hasOld    bool
}

func (a *activation) ResolveName(name string) (any, bool) {
	switch name {
	case "self":
		return a.self, true
	case "oldSelf":
		return a.old, a.hasOld
	}
	return nil, false
}

func (a *activation) Parent() interpreter.Activation { return nil }
