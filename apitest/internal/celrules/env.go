package celrules

import (
	"fmt"
	"regexp"
	"sync"
	"sync/atomic"
	"time"

	"github.com/google/cel-go/cel"
	"github.com/google/cel-go/checker"
	"github.com/google/cel-go/common/types"
	"github.com/google/cel-go/common/types/ref"
	"github.com/google/cel-go/ext"
	"github.com/google/cel-go/interpreter"
)

// The kube-apiserver's limits on rules (k8s.io/apiserver's CEL configuration).
const (
	// PerCallLimit is the runtime cost one evaluation of a rule may reach.
	PerCallLimit = 1_000_000
	// RuntimeCostBudget is the runtime cost all rules of one object may reach together.
	RuntimeCostBudget = 10_000_000
	// StaticCostLimit is the estimated cost one rule may have (times how often it can run).
	StaticCostLimit = 10_000_000
	// StaticCRDCostLimit is the estimated cost all rules of one schema may have together.
	StaticCRDCostLimit = 100_000_000
	checkFrequency     = 100
	maxMessageBytes    = 5 * 1024
)

var (
	baseOnce sync.Once
	baseEnv  *cel.Env
	baseErr  error
)

// base is the environment every rule compiles in: what the kube-apiserver v1.36 offers
// CRD rules (its "stored expressions" environment): CEL's standard library with
// homogeneous literals, cross-type numeric comparisons and optional types; cel-go's string
// (version 2), set, list (version 3) and two-variable comprehension extensions; and the
// Kubernetes libraries, written here: lists, regex, URLs, quantities, IPs and CIDRs, named
// formats and semantic versions.
func base() (*cel.Env, error) {
	baseOnce.Do(func() {
		opts := []cel.EnvOption{
			cel.HomogeneousAggregateLiterals(),
			cel.EagerlyValidateDeclarations(true),
			cel.DefaultUTCTimeZone(true),
			cel.CostEstimatorOptions(checker.PresenceTestHasCost(false)),
			cel.CrossTypeNumericComparisons(true),
			cel.OptionalTypes(),
			cel.ASTValidators(cel.ValidateDurationLiterals(), cel.ValidateTimestampLiterals(),
				cel.ValidateRegexLiterals(), cel.ValidateHomogeneousAggregateLiterals()),
			ext.Strings(ext.StringsVersion(2)),
			ext.Sets(),
			ext.TwoVarComprehensions(),
			ext.Lists(ext.ListsVersion(3)),
			cel.Lib(programOptions{}),
		}
		opts = append(opts, kubernetesLibraries()...)
		baseEnv, baseErr = cel.NewEnv(opts...)
	})
	return baseEnv, baseErr
}

// programOptions are the options of every program: cost tracking with the Kubernetes
// libraries' costs, the per-call limit, and presence tests (has()) free, as on the server.
type programOptions struct{}

func (programOptions) CompileOptions() []cel.EnvOption { return nil }
func (programOptions) ProgramOptions() []cel.ProgramOption {
	return []cel.ProgramOption{
		cel.EvalOptions(cel.OptOptimize, cel.OptTrackCost),
		cel.CostLimit(PerCallLimit),
		cel.CostTrackerOptions(interpreter.PresenceTestHasCost(false)),
		cel.CostTracking(&costEstimator{}),
		cel.OptimizeRegex(regexOptimization("find"), regexOptimization("findAll")),
	}
}

// regexOptimization compiles the literal pattern of find and findAll once, when the
// program is made; a literal that is no regex fails the program, as on the server.
func regexOptimization(fn string) *interpreter.RegexOptimization {
	return &interpreter.RegexOptimization{Function: fn, RegexIndex: 1,
		Factory: func(call interpreter.InterpretableCall, pattern string) (interpreter.InterpretableCall, error) {
			re, err := regexp.Compile(pattern)
			if err != nil {
				return nil, err
			}
			return interpreter.NewCall(call.ID(), call.Function(), call.OverloadID(), call.Args(), func(args ...ref.Val) ref.Val {
				if len(args) < 2 || len(args) > 3 {
					return types.NoSuchOverloadErr()
				}
				s, ok := args[0].Value().(string)
				if !ok {
					return types.MaybeNoSuchOverloadErr(args[0])
				}
				if fn == "find" {
					return types.String(re.FindString(s))
				}
				n := int64(-1)
				if len(args) == 3 {
					if n, ok = args[2].Value().(int64); !ok {
						return types.MaybeNoSuchOverloadErr(args[2])
					}
				}
				return types.NewStringList(types.DefaultTypeAdapter, re.FindAllString(s, int(n)))
			}), nil
		}}
}

var typeSeq atomic.Int64

// selfTypeName is the name self's object type gets: like the kube-apiserver's, it changes
// each time a schema is compiled, so that no rule can depend on it.
func selfTypeName() string {
	return fmt.Sprintf("selfType%d", time.Now().Nanosecond()+int(typeSeq.Add(1)))
}

// scopeEnvs are the environments of the rules of one schema node: self (and oldSelf) of
// the node's type; oldSelf optional for rules with optionalOldSelf.
type scopeEnvs struct {
	t        *declType
	plain    *cel.Env
	optional *cel.Env
}

func newScopeEnvs(t *declType) (*scopeEnvs, error) {
	b, err := base()
	if err != nil {
		return nil, err
	}
	named := t.named(selfTypeName())
	p := newProvider(b, named)
	plain, err := b.Extend(cel.CustomTypeProvider(p), cel.CustomTypeAdapter(p),
		cel.Variable("self", named.cel), cel.Variable("oldSelf", named.cel))
	if err != nil {
		return nil, err
	}
	return &scopeEnvs{t: named, plain: plain}, nil
}

func (s *scopeEnvs) env(optionalOldSelf bool) (*cel.Env, error) {
	if !optionalOldSelf {
		return s.plain, nil
	}
	if s.optional == nil {
		b, err := base()
		if err != nil {
			return nil, err
		}
		p := newProvider(b, s.t)
		s.optional, err = b.Extend(cel.CustomTypeProvider(p), cel.CustomTypeAdapter(p),
			cel.Variable("self", s.t.cel), cel.Variable("oldSelf", cel.OptionalType(s.t.cel)))
		if err != nil {
			return nil, err
		}
	}
	return s.optional, nil
}
