package celrules

import (
	"strings"

	"github.com/google/cel-go/cel"
)

// Rule is one entry of x-kubernetes-validations.
type Rule struct {
	Rule              string
	Message           string
	MessageExpression string
	Reason            *string
	FieldPath         string
	OptionalOldSelf   *bool
}

// errKind is how a compile error reads in the server's answer (its cel.ErrorType).
type errKind int

const (
	errInvalid errKind = iota
	errRequired
	errInternal
)

type ruleError struct {
	kind   errKind
	detail string
}

func (e *ruleError) Error() string { return e.detail }

// compiled is one rule ready to run, or why it cannot.
type compiled struct {
	rule        Rule
	prog        cel.Program
	err         *ruleError
	usesOldSelf bool
	// maxCost is the estimated worst cost of one evaluation; maxCardinality the most
	// times the rule can run in one object when nothing bounds the lists and maps above it.
	maxCost, maxCardinality uint64
	msgProg                 cel.Program
	msgErr                  *ruleError
	msgMaxCost              uint64
	fieldPath               string // the rule's fieldPath as a field path ("" if none)
}

// compileRules compiles the rules of the schema node s, whose values have type t.
func compileRules(s schema, rules []Rule, t *declType) ([]compiled, error) {
	if len(rules) == 0 {
		return nil, nil
	}
	envs, err := newScopeEnvs(t)
	if err != nil {
		return nil, err
	}
	est := &costEstimator{sizes: sizeEstimator{root: envs.t}}
	card := maxCardinality(t.minSize)
	out := make([]compiled, len(rules))
	for i, r := range rules {
		env, err := envs.env(r.OptionalOldSelf != nil && *r.OptionalOldSelf)
		if err != nil {
			return nil, err
		}
		out[i] = compileRule(s, r, env, est, card)
	}
	return out, nil
}

// compileRule compiles one rule and its messageExpression, in the server's words when
// they do not compile.
func compileRule(s schema, r Rule, env *cel.Env, est *costEstimator, card uint64) (c compiled) {
	c.rule = r
	if strings.TrimSpace(r.Rule) == "" {
		return c
	}
	ast, iss := env.Compile(r.Rule)
	if iss != nil && iss.Err() != nil {
		c.err = &ruleError{errInvalid, "compilation failed: " + iss.String()}
		return c
	}
	if ast.OutputType() != cel.BoolType {
		c.err = &ruleError{errInvalid, "cel expression must evaluate to a bool"}
		return c
	}
	checked, err := cel.AstToCheckedExpr(ast)
	if err != nil {
		c.err = &ruleError{errInternal, "unexpected compilation error: " + err.Error()}
		return c
	}
	for _, ref := range checked.ReferenceMap {
		if ref.Name == "oldSelf" {
			c.usesOldSelf = true
			break
		}
	}
	prog, err := env.Program(ast, cel.CostLimit(PerCallLimit), cel.CostTracking(est), cel.InterruptCheckFrequency(checkFrequency))
	if err != nil {
		c.err = &ruleError{errInvalid, "program instantiation failed: " + err.Error()}
		return c
	}
	cost, err := env.EstimateCost(ast, est)
	if err != nil {
		c.err = &ruleError{errInternal, "cost estimation failed: " + err.Error()}
		return c
	}
	c.prog, c.maxCost, c.maxCardinality = prog, cost.Max, card
	if r.MessageExpression != "" {
		c.compileMessage(env, est)
	}
	if r.FieldPath != "" {
		if p, _, err := validFieldPath(r.FieldPath, s); err == nil {
			c.fieldPath = p
		}
	}
	return c
}

func (c *compiled) compileMessage(env *cel.Env, est *costEstimator) {
	src := c.rule.MessageExpression
	ast, iss := env.Compile(src)
	if iss != nil && iss.Err() != nil {
		c.msgErr = &ruleError{errInvalid, "messageExpression compilation failed: " + iss.String()}
		return
	}
	if ast.OutputType() != cel.StringType {
		c.msgErr = &ruleError{errInvalid, "messageExpression must evaluate to a string"}
		return
	}
	prog, err := env.Program(ast, cel.CostLimit(PerCallLimit), cel.CostTracking(est), cel.InterruptCheckFrequency(checkFrequency))
	if err != nil {
		c.msgErr = &ruleError{errInvalid, "messageExpression instantiation failed: " + err.Error()}
		return
	}
	cost, err := env.EstimateCost(ast, est)
	if err != nil {
		c.msgErr = &ruleError{errInternal, "cost estimation failed for messageExpression: " + err.Error()}
		return
	}
	c.msgProg, c.msgMaxCost = prog, cost.Max
}

// node parallels a schema node that holds rules, or whose descendants do: the compiled
// rules and the nodes below.
type node struct {
	s          schema // the node's schema (its values' types)
	root       bool   // a resource's root or an embedded resource
	rules      []compiled
	compileErr error
	items      *node
	additional *node
	props      map[string]*node
	allOf      []*node
}

// build compiles the rules of vs (the validation schema: the node's own, or one of its
// allOf) against the node schema ns, whose values have type t; nil if there are none.
func build(vs, ns schema, root bool, t *declType) *node {
	n := &node{s: ns, root: root}
	if r := vs.rules(); len(r) > 0 {
		if t == nil {
			n.compileErr = errNoDeclType
		} else {
			n.rules, n.compileErr = compileRules(ns, r, t)
		}
	}
	var elem *declType
	if t != nil {
		elem = t.elem
	}
	if vi, ni := vs.items(), ns.items(); vi != nil && ni != nil {
		n.items = build(vi, ni, ni.embedded(), elem)
	}
	if va, na := vs.additional(), ns.additional(); va != nil && na != nil {
		n.additional = build(va, na, na.embedded(), elem)
	}
	nprops := ns.properties()
	vprops := vs.properties()
	for _, k := range vs.propertyNames() {
		np, ok := nprops[k]
		if !ok {
			continue // only the structural spine holds rules
		}
		var ft *declType
		if esc, ok := escape(k); ok {
			if t == nil {
				continue
			}
			f, ok := t.fields[esc]
			if !ok {
				continue // a field rules cannot see has no rules run either
			}
			ft = f.typ
		} else if ft = declTypeOf(np, np.embedded()); ft == nil {
			continue
		}
		if p := build(vprops[k], np, np.embedded(), ft); p != nil {
			if n.props == nil {
				n.props = map[string]*node{}
			}
			n.props[k] = p
		}
	}
	for _, a := range vs.allOf() {
		if an := build(a, ns, root, t); an != nil {
			n.allOf = append(n.allOf, an)
		}
	}
	if len(n.rules) == 0 && n.compileErr == nil && n.items == nil && n.additional == nil && n.props == nil && n.allOf == nil {
		return nil
	}
	return n
}

type constError string

func (e constError) Error() string { return string(e) }

const errNoDeclType = constError("failed to convert to declType for CEL validation rules")

// hasRules reports whether s or a schema under it has x-kubernetes-validations.
func hasRules(s schema) bool {
	if s == nil {
		return false
	}
	if len(s.rules()) > 0 || hasRules(s.items()) || hasRules(s.additional()) {
		return true
	}
	for _, p := range s.properties() {
		if hasRules(p) {
			return true
		}
	}
	return false
}
