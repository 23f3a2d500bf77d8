package main

import (
	"fmt"
	"io"
	"slices"
	"strings"
)

// A command line in the style of the Kubernetes components (spf13/pflag): --name=value,
// --name value, --name for a boolean. The drop-ins accept every flag of the real program's
// command line envtest or a user may pass; the flags they model change what they do, the
// others are accepted and named on standard error as ignored, so that a test suite's
// extra kube-apiserver flags do not stop it from starting.

// flagSpec is one flag a drop-in knows: its name, whether it is boolean (takes no separate
// value), its help line, and whether the drop-in models it.
type flagSpec struct {
	name    string
	boolean bool
	help    string
	ignored bool
}

// parsedFlags are the values of a command line by flag name (the last one wins for a
// single value; repeated list flags append) and the unknown flags met.
type parsedFlags struct {
	values  map[string][]string
	unknown []string
}

func (p parsedFlags) get(name, def string) string {
	if v := p.values[name]; len(v) > 0 {
		return v[len(v)-1]
	}
	return def
}

func (p parsedFlags) has(name string) bool { _, ok := p.values[name]; return ok }

// parseFlags parses args against specs. A flag it does not know takes the next argument as
// its value when that does not start with "-" (pflag cannot tell either without the spec).
func parseFlags(args []string, specs []flagSpec) (parsedFlags, error) {
	p := parsedFlags{values: map[string][]string{}}
	find := func(name string) (flagSpec, bool) {
		i := slices.IndexFunc(specs, func(s flagSpec) bool { return s.name == name })
		if i < 0 {
			return flagSpec{}, false
		}
		return specs[i], true
	}
	for i := 0; i < len(args); i++ {
		a := args[i]
		if !strings.HasPrefix(a, "-") || a == "-" || a == "--" {
			return p, fmt.Errorf("unexpected argument %q", a)
		}
		name, value, hasValue := strings.Cut(strings.TrimLeft(a, "-"), "=")
		spec, known := find(name)
		if !known {
			p.unknown = append(p.unknown, "--"+name)
		}
		if !hasValue {
			switch {
			case known && spec.boolean:
				value = "true"
			case i+1 < len(args) && !strings.HasPrefix(args[i+1], "-"):
				i++
				value = args[i]
			case known:
				return p, fmt.Errorf("flag needs an argument: --%s", name)
			default:
				value = "true"
			}
		}
		p.values[name] = append(p.values[name], value)
	}
	return p, nil
}

// printHelp writes a --help in the Kubernetes components' layout: envtest greps it for the
// flags it may pass (its CheckFlag).
func printHelp(w io.Writer, program, summary string, specs []flagSpec) {
	fmt.Fprintf(w, "%s\n\nUsage:\n  %s [flags]\n\nFlags:\n", summary, program)
	for _, s := range specs {
		arg := " string"
		if s.boolean {
			arg = ""
		}
		help := s.help
		if s.ignored {
			help += " (accepted, not modelled by apitest)"
		}
		fmt.Fprintf(w, "      --%s%s\n                %s\n", s.name, arg, help)
	}
}
