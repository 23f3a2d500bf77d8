package celrules

import (
	"encoding/base64"
	"fmt"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/google/cel-go/cel"
	"github.com/google/cel-go/common/types"
	"github.com/google/cel-go/common/types/ref"
)

// The estimator's bounds for named formats (k8s.io/apiserver's CEL limits).
const (
	maxFormatSize      = 64
	maxFormatRegexSize = 128
)

// namedFormat is a format of format.named(), with the messages its validate() returns.
type namedFormat struct {
	opaque
	name         string
	check        func(string) []string
	maxRegexSize int
}

func (f namedFormat) ConvertToType(t ref.Type) ref.Val { return convertTo(f, formatType, nil, t) }
func (f namedFormat) Equal(o ref.Val) ref.Val {
	x, ok := o.(namedFormat)
	if !ok {
		return types.MaybeNoSuchOverloadErr(o)
	}
	return types.Bool(f.name == x.name)
}
func (f namedFormat) Value() any { return f }

const (
	label1123Fmt     = "[a-z0-9]([-a-z0-9]*[a-z0-9])?"
	subdomain1123Fmt = label1123Fmt + "(\\." + label1123Fmt + ")*"
	label1035Fmt     = "[a-z]([-a-z0-9]*[a-z0-9])?"
	labelKeyFmt      = "([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]"
	labelValueFmt    = "(" + labelKeyFmt + ")?"
	uuidPattern      = `(?i)^[0-9a-f]{8}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{12}$`
	dateTimePattern  = `^([0-9]{2}):([0-9]{2}):([0-9]{2})(.[0-9]+)?(z|([+-][0-9]{2}:[0-9]{2}))$`
)

var (
	label1123Re     = regexp.MustCompile("^" + label1123Fmt + "$")
	subdomain1123Re = regexp.MustCompile("^" + subdomain1123Fmt + "$")
	label1035Re     = regexp.MustCompile("^" + label1035Fmt + "$")
	labelKeyRe      = regexp.MustCompile("^" + labelKeyFmt + "$")
	labelValueRe    = regexp.MustCompile("^" + labelValueFmt + "$")
	uuidRe          = regexp.MustCompile(uuidPattern)
)

func maxLen(n int) string { return fmt.Sprintf("must be no more than %d characters", n) }

func regexErr(msg, format string, examples ...string) string {
	if len(examples) == 0 {
		return msg + " (regex used for validation is '" + format + "')"
	}
	msg += " (e.g. "
	for i, e := range examples {
		if i > 0 {
			msg += " or "
		}
		msg += "'" + e + "', "
	}
	return msg + "regex used for validation is '" + format + "')"
}

func dns1123Label(s string) []string {
	var errs []string
	if len(s) > 63 {
		errs = append(errs, maxLen(63))
	}
	if !label1123Re.MatchString(s) {
		if subdomain1123Re.MatchString(s) {
			errs = append(errs, "must not contain dots")
		} else {
			errs = append(errs, regexErr("a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character", label1123Fmt, "my-name", "123-abc"))
		}
	}
	return errs
}

func dns1123Subdomain(s string) []string {
	var errs []string
	if len(s) > 253 {
		errs = append(errs, maxLen(253))
	}
	if !subdomain1123Re.MatchString(s) {
		errs = append(errs, regexErr("a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character", subdomain1123Fmt, "example.com"))
	}
	return errs
}

func dns1035Label(s string) []string {
	var errs []string
	if len(s) > 63 {
		errs = append(errs, maxLen(63))
	}
	if !label1035Re.MatchString(s) {
		errs = append(errs, regexErr("a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character", label1035Fmt, "my-name", "abc-123"))
	}
	return errs
}

const labelKeyMsg = "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character"

func qualifiedName(s string) []string {
	var errs []string
	parts := strings.Split(s, "/")
	name := parts[0]
	switch len(parts) {
	case 1:
	case 2:
		prefix := parts[0]
		name = parts[1]
		if prefix == "" {
			errs = append(errs, "prefix part must be non-empty")
		} else {
			for _, m := range dns1123Subdomain(prefix) {
				errs = append(errs, "prefix part "+m)
			}
		}
	default:
		return []string{"a valid label key " + regexErr(labelKeyMsg, labelKeyFmt, "MyName", "my.name", "123-abc") +
			" with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')"}
	}
	if name == "" {
		errs = append(errs, "name part must be non-empty")
	} else if len(name) > 63 {
		errs = append(errs, "name part "+maxLen(63))
	}
	if !labelKeyRe.MatchString(name) {
		errs = append(errs, "name part "+regexErr(labelKeyMsg, labelKeyFmt, "MyName", "my.name", "123-abc"))
	}
	return errs
}

func labelValue(s string) []string {
	var errs []string
	if len(s) > 63 {
		errs = append(errs, maxLen(63))
	}
	if !labelValueRe.MatchString(s) {
		errs = append(errs, regexErr("a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character", labelValueFmt, "MyValue", "my_value", "12345"))
	}
	return errs
}

// prefix lets a name end in "-", as a generateName prefix may.
func prefix(f func(string) []string) func(string) []string {
	return func(s string) []string {
		if len(s) > 1 && strings.HasSuffix(s, "-") {
			s = s[:len(s)-2] + "a"
		}
		return f(s)
	}
}

func one(ok bool, msg string) []string {
	if ok {
		return nil
	}
	return []string{msg}
}

var namedFormats = map[string]namedFormat{
	"dns1123Label":           {name: "DNS1123Label", check: dns1123Label, maxRegexSize: 30},
	"dns1123Subdomain":       {name: "DNS1123Subdomain", check: dns1123Subdomain, maxRegexSize: 60},
	"dns1035Label":           {name: "DNS1035Label", check: dns1035Label, maxRegexSize: 30},
	"qualifiedName":          {name: "QualifiedName", check: qualifiedName, maxRegexSize: 60},
	"dns1123LabelPrefix":     {name: "DNS1123LabelPrefix", check: prefix(dns1123Label), maxRegexSize: 30},
	"dns1123SubdomainPrefix": {name: "DNS1123SubdomainPrefix", check: prefix(dns1123Subdomain), maxRegexSize: 60},
	"dns1035LabelPrefix":     {name: "DNS1035LabelPrefix", check: prefix(dns1035Label), maxRegexSize: 30},
	"labelValue":             {name: "LabelValue", check: labelValue, maxRegexSize: 40},
	"uri": {name: "URI", maxRegexSize: 1103, check: func(s string) []string {
		if _, err := url.ParseRequestURI(s); err != nil {
			return []string{err.Error()}
		}
		return nil
	}},
	"uuid": {name: "uuid", maxRegexSize: len(uuidPattern), check: func(s string) []string {
		return one(uuidRe.MatchString(s), "does not match the UUID format")
	}},
	"byte": {name: "byte", maxRegexSize: 84, check: func(s string) []string {
		_, err := base64.StdEncoding.DecodeString(s)
		return one(err == nil, "invalid base64")
	}},
	"date": {name: "date", maxRegexSize: len(dateTimePattern), check: func(s string) []string {
		_, err := time.Parse("2006-01-02", s)
		return one(err == nil, "invalid date")
	}},
	"datetime": {name: "datetime", maxRegexSize: len(dateTimePattern), check: func(s string) []string {
		return one(!types.IsError(formatted(s, "date-time")), "invalid datetime")
	}},
}

func formatFunctions() []cel.EnvOption {
	opts := []cel.EnvOption{
		cel.Function("validate", cel.MemberOverload("format-validate", []*cel.Type{formatType, cel.StringType},
			cel.OptionalType(cel.ListType(cel.StringType)), cel.BinaryBinding(func(fv, sv ref.Val) ref.Val {
				f, ok := fv.(namedFormat)
				if !ok {
					return types.MaybeNoSuchOverloadErr(fv)
				}
				s, ok := sv.Value().(string)
				if !ok {
					return types.MaybeNoSuchOverloadErr(sv)
				}
				if errs := f.check(s); len(errs) > 0 {
					return types.OptionalOf(types.NewStringList(types.DefaultTypeAdapter, errs))
				}
				return types.OptionalNone
			}))),
		cel.Function("format.named", cel.Overload("format-named", []*cel.Type{cel.StringType}, cel.OptionalType(formatType),
			cel.UnaryBinding(func(v ref.Val) ref.Val {
				s, ok := v.Value().(string)
				if !ok {
					return types.MaybeNoSuchOverloadErr(v)
				}
				if f, ok := namedFormats[s]; ok {
					return types.OptionalOf(withType(f))
				}
				return types.OptionalNone
			}))),
	}
	for k, f := range namedFormats {
		f := withType(f)
		name := "format." + k
		opts = append(opts, cel.Function(name, cel.Overload(name, nil, formatType,
			cel.FunctionBinding(func(...ref.Val) ref.Val { return f }))))
	}
	return opts
}

func withType(f namedFormat) namedFormat { f.opaque = opaque{formatType}; return f }

// semverVal is a semantic version of semver().
type semverVal struct {
	opaque
	major, minor, patch uint64
	pre                 []string
}

func (v semverVal) ConvertToType(t ref.Type) ref.Val { return convertTo(v, semverType, nil, t) }
func (v semverVal) Equal(o ref.Val) ref.Val {
	x, ok := o.(semverVal)
	if !ok {
		return types.MaybeNoSuchOverloadErr(o)
	}
	return types.Bool(v.compare(x) == 0)
}
func (v semverVal) Value() any { return v }

func cmpUint(a, b uint64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// compare orders versions as semantic versioning 2.0 does (build metadata is ignored).
func (v semverVal) compare(o semverVal) int {
	for _, c := range []int{cmpUint(v.major, o.major), cmpUint(v.minor, o.minor), cmpUint(v.patch, o.patch)} {
		if c != 0 {
			return c
		}
	}
	switch {
	case len(v.pre) == 0 && len(o.pre) == 0:
		return 0
	case len(v.pre) == 0:
		return 1
	case len(o.pre) == 0:
		return -1
	}
	for i := 0; i < len(v.pre) && i < len(o.pre); i++ {
		a, b := v.pre[i], o.pre[i]
		an, aerr := strconv.ParseUint(a, 10, 64)
		bn, berr := strconv.ParseUint(b, 10, 64)
		switch {
		case aerr == nil && berr == nil:
			if c := cmpUint(an, bn); c != 0 {
				return c
			}
		case aerr == nil:
			return -1
		case berr == nil:
			return 1
		case a != b:
			return strings.Compare(a, b)
		}
	}
	return cmpUint(uint64(len(v.pre)), uint64(len(o.pre)))
}

const (
	digits   = "0123456789"
	alphanum = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ-" + digits
)

func only(s, set string) bool {
	return strings.Trim(s, set) == ""
}

// parseSemver reads a semantic version with the messages of the parser the kube-apiserver
// uses.
func parseSemver(s string) (semverVal, error) {
	v := semverVal{opaque: opaque{semverType}}
	if s == "" {
		return v, fmt.Errorf("Version string empty")
	}
	parts := strings.SplitN(s, ".", 3)
	if len(parts) != 3 {
		return v, fmt.Errorf("No Major.Minor.Patch elements found")
	}
	num := func(p, name string) (uint64, error) {
		if !only(p, digits) {
			return 0, fmt.Errorf("Invalid character(s) found in %s number %q", strings.ToLower(name), p)
		}
		if len(p) > 1 && p[0] == '0' {
			return 0, fmt.Errorf("%s number must not contain leading zeroes %q", name, p)
		}
		return strconv.ParseUint(p, 10, 64)
	}
	var err error
	if v.major, err = num(parts[0], "Major"); err != nil {
		return v, err
	}
	if v.minor, err = num(parts[1], "Minor"); err != nil {
		return v, err
	}
	patch, build, hasBuild := strings.Cut(parts[2], "+")
	patch, pre, hasPre := strings.Cut(patch, "-")
	if v.patch, err = num(patch, "Patch"); err != nil {
		return v, err
	}
	if hasPre {
		for _, p := range strings.Split(pre, ".") {
			switch {
			case p == "":
				return v, fmt.Errorf("Prerelease is empty")
			case only(p, digits) && len(p) > 1 && p[0] == '0':
				return v, fmt.Errorf("Version contains leading zeroes: %q", p)
			case !only(p, alphanum):
				return v, fmt.Errorf("Invalid character(s) found in prerelease %q", p)
			}
			v.pre = append(v.pre, p)
		}
	}
	if hasBuild {
		for _, b := range strings.Split(build, ".") {
			switch {
			case b == "":
				return v, fmt.Errorf("Build meta data is empty")
			case !only(b, alphanum):
				return v, fmt.Errorf("Invalid character(s) found in build meta data %q", b)
			}
		}
	}
	return v, nil
}

// normalizeSemver reads "v1.02" as "1.2.0", as semver(s, true) does.
func normalizeSemver(s string) (semverVal, error) {
	parts := strings.SplitN(strings.TrimPrefix(s, "v"), ".", 3)
	for i, p := range parts {
		if len(p) > 1 {
			p = strings.TrimLeft(p, "0")
			if p == "" || !strings.ContainsAny(p[:1], digits) {
				p = "0" + p
			}
			parts[i] = p
		}
	}
	if len(parts) < 3 {
		if strings.ContainsAny(parts[len(parts)-1], "+-") {
			return semverVal{}, fmt.Errorf("short version cannot contain PreRelease/Build meta data")
		}
		for len(parts) < 3 {
			parts = append(parts, "0")
		}
	}
	return parseSemver(strings.Join(parts, "."))
}

func semverFunctions() []cel.EnvOption {
	parse := func(s ref.Val, norm ref.Val) (semverVal, ref.Val) {
		str, ok := s.Value().(string)
		if !ok {
			return semverVal{}, types.MaybeNoSuchOverloadErr(s)
		}
		n, ok := norm.Value().(bool)
		if !ok {
			return semverVal{}, types.MaybeNoSuchOverloadErr(norm)
		}
		var v semverVal
		var err error
		if n {
			v, err = normalizeSemver(str)
		} else {
			v, err = parseSemver(str)
		}
		if err != nil {
			return semverVal{}, types.WrapErr(err)
		}
		return v, nil
	}
	toSemver := func(s, n ref.Val) ref.Val {
		v, err := parse(s, n)
		if err != nil {
			return err
		}
		return v
	}
	isSemver := func(s, n ref.Val) ref.Val {
		_, err := parse(s, n)
		if err != nil && !types.IsError(err) {
			return err
		}
		return types.Bool(err == nil)
	}
	v1 := func(f func(semverVal) ref.Val) func(ref.Val) ref.Val {
		return func(v ref.Val) ref.Val {
			x, ok := v.(semverVal)
			if !ok {
				return types.MaybeNoSuchOverloadErr(v)
			}
			return f(x)
		}
	}
	v2 := func(f func(a, b semverVal) ref.Val) func(ref.Val, ref.Val) ref.Val {
		return func(a, b ref.Val) ref.Val {
			x, ok1 := a.(semverVal)
			y, ok2 := b.(semverVal)
			if !ok1 || !ok2 {
				return types.MaybeNoSuchOverloadErr(a)
			}
			return f(x, y)
		}
	}
	st := []*cel.Type{semverType, semverType}
	return []cel.EnvOption{
		cel.Function("semver",
			cel.Overload("string_to_semver", []*cel.Type{cel.StringType}, semverType,
				cel.UnaryBinding(func(s ref.Val) ref.Val { return toSemver(s, types.False) })),
			cel.Overload("string_bool_to_semver", []*cel.Type{cel.StringType, cel.BoolType}, semverType, cel.BinaryBinding(toSemver))),
		cel.Function("isSemver",
			cel.Overload("is_semver_string", []*cel.Type{cel.StringType}, cel.BoolType,
				cel.UnaryBinding(func(s ref.Val) ref.Val { return isSemver(s, types.False) })),
			cel.Overload("is_semver_string_bool", []*cel.Type{cel.StringType, cel.BoolType}, cel.BoolType, cel.BinaryBinding(isSemver))),
		cel.Function("isGreaterThan", cel.MemberOverload("semver_is_greater_than", st, cel.BoolType,
			cel.BinaryBinding(v2(func(a, b semverVal) ref.Val { return types.Bool(a.compare(b) == 1) })))),
		cel.Function("isLessThan", cel.MemberOverload("semver_is_less_than", st, cel.BoolType,
			cel.BinaryBinding(v2(func(a, b semverVal) ref.Val { return types.Bool(a.compare(b) == -1) })))),
		cel.Function("compareTo", cel.MemberOverload("semver_compare_to", st, cel.IntType,
			cel.BinaryBinding(v2(func(a, b semverVal) ref.Val { return types.Int(a.compare(b)) })))),
		cel.Function("major", cel.MemberOverload("semver_major", []*cel.Type{semverType}, cel.IntType,
			cel.UnaryBinding(v1(func(v semverVal) ref.Val { return types.Int(v.major) })))),
		cel.Function("minor", cel.MemberOverload("semver_minor", []*cel.Type{semverType}, cel.IntType,
			cel.UnaryBinding(v1(func(v semverVal) ref.Val { return types.Int(v.minor) })))),
		cel.Function("patch", cel.MemberOverload("semver_patch", []*cel.Type{semverType}, cel.IntType,
			cel.UnaryBinding(v1(func(v semverVal) ref.Val { return types.Int(v.patch) })))),
	}
}
