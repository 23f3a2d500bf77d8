package celrules

import (
	"fmt"
	"math"
	"net/netip"
	"net/url"
	"reflect"

	"github.com/google/cel-go/cel"
	"github.com/google/cel-go/common/types"
	"github.com/google/cel-go/common/types/ref"
)

// The types the Kubernetes libraries add, under the names the kube-apiserver gives them.
var (
	urlType      = cel.ObjectType("kubernetes.URL")
	quantityType = cel.ObjectType("kubernetes.Quantity")
	formatType   = cel.ObjectType("kubernetes.NamedFormat")
	semverType   = cel.ObjectType("kubernetes.Semver")
	ipType       = cel.OpaqueType("net.IP")
	cidrType     = cel.OpaqueType("net.CIDR")
)

// opaque is the part of ref.Val the library types share: no conversions but to
// themselves and to their type.
type opaque struct{ t *types.Type }

func (o opaque) ConvertToNative(t reflect.Type) (any, error) {
	return nil, fmt.Errorf("type conversion error from '%s' to '%v'", o.t.TypeName(), t)
}
func (o opaque) Type() ref.Type { return o.t }

func convertTo(v ref.Val, own *types.Type, str func() string, t ref.Type) ref.Val {
	switch {
	case t.TypeName() == own.TypeName():
		return v
	case t == types.TypeType:
		return own
	case t == types.StringType && str != nil && (own == ipType || own == cidrType):
		return types.String(str())
	}
	return types.NewErr("type conversion error from '%s' to '%s'", own.TypeName(), t.TypeName())
}

// urlVal is a URL of url().
type urlVal struct {
	opaque
	u *url.URL
}

func (u urlVal) ConvertToType(t ref.Type) ref.Val { return convertTo(u, urlType, nil, t) }
func (u urlVal) Equal(o ref.Val) ref.Val {
	x, ok := o.(urlVal)
	if !ok {
		return types.MaybeNoSuchOverloadErr(o)
	}
	return types.Bool(u.u.String() == x.u.String())
}
func (u urlVal) Value() any { return u.u }

func urlFunctions() []cel.EnvOption {
	get := func(name, id string, f func(*url.URL) ref.Val, result *cel.Type) cel.EnvOption {
		return cel.Function(name, cel.MemberOverload(id, []*cel.Type{urlType}, result, cel.UnaryBinding(func(v ref.Val) ref.Val {
			u, ok := v.(urlVal)
			if !ok {
				return types.MaybeNoSuchOverloadErr(v)
			}
			return f(u.u)
		})))
	}
	str := func(f func(*url.URL) string) func(*url.URL) ref.Val {
		return func(u *url.URL) ref.Val { return types.String(f(u)) }
	}
	return []cel.EnvOption{
		cel.Function("url", cel.Overload("string_to_url", []*cel.Type{cel.StringType}, urlType, cel.UnaryBinding(func(v ref.Val) ref.Val {
			s, ok := v.Value().(string)
			if !ok {
				return types.MaybeNoSuchOverloadErr(v)
			}
			if _, err := url.ParseRequestURI(s); err != nil {
				return types.NewErr("URL parse error during conversion from string: %v", err)
			}
			u, err := url.Parse(s)
			if err != nil {
				return types.NewErr("URL parse error during conversion from string: %v", err)
			}
			return urlVal{opaque{urlType}, u}
		}))),
		cel.Function("isURL", cel.Overload("is_url_string", []*cel.Type{cel.StringType}, cel.BoolType, cel.UnaryBinding(func(v ref.Val) ref.Val {
			s, ok := v.Value().(string)
			if !ok {
				return types.MaybeNoSuchOverloadErr(v)
			}
			_, err := url.ParseRequestURI(s)
			return types.Bool(err == nil)
		}))),
		get("getScheme", "url_get_scheme", str(func(u *url.URL) string { return u.Scheme }), cel.StringType),
		get("getHost", "url_get_host", str(func(u *url.URL) string { return u.Host }), cel.StringType),
		get("getHostname", "url_get_hostname", str((*url.URL).Hostname), cel.StringType),
		get("getPort", "url_get_port", str((*url.URL).Port), cel.StringType),
		get("getEscapedPath", "url_get_escaped_path", str((*url.URL).EscapedPath), cel.StringType),
		get("getQuery", "url_get_query", func(u *url.URL) ref.Val {
			out := map[ref.Val]ref.Val{}
			for k, v := range u.Query() {
				out[types.String(k)] = types.NewStringList(types.DefaultTypeAdapter, v)
			}
			return types.NewRefValMap(types.DefaultTypeAdapter, out)
		}, cel.MapType(cel.StringType, cel.ListType(cel.StringType))),
	}
}

// ipVal is an address of ip().
type ipVal struct {
	opaque
	a netip.Addr
}

func (v ipVal) ConvertToType(t ref.Type) ref.Val { return convertTo(v, ipType, v.a.String, t) }
func (v ipVal) Equal(o ref.Val) ref.Val {
	x, ok := o.(ipVal)
	if !ok {
		return types.ValOrErr(o, "no such overload")
	}
	return types.Bool(v.a == x.a)
}
func (v ipVal) Value() any    { return v.a }
func (v ipVal) Size() ref.Val { return types.Int(int(math.Ceil(float64(v.a.BitLen()) / 8))) }

// cidrVal is a prefix of cidr().
type cidrVal struct {
	opaque
	p netip.Prefix
}

func (v cidrVal) ConvertToType(t ref.Type) ref.Val { return convertTo(v, cidrType, v.p.String, t) }
func (v cidrVal) Equal(o ref.Val) ref.Val {
	x, ok := o.(cidrVal)
	if !ok {
		return types.ValOrErr(o, "no such overload")
	}
	return types.Bool(v.p == x.p)
}
func (v cidrVal) Value() any    { return v.p }
func (v cidrVal) Size() ref.Val { return types.Int(int(math.Ceil(float64(v.p.Bits()) / 8))) }

func parseIP(s string) (netip.Addr, error) {
	a, err := netip.ParseAddr(s)
	switch {
	case err != nil:
		return netip.Addr{}, fmt.Errorf("IP Address %q parse error during conversion from string: %v", s, err)
	case a.Zone() != "":
		return netip.Addr{}, fmt.Errorf("IP address %q with zone value is not allowed", s)
	case a.Is4In6():
		return netip.Addr{}, fmt.Errorf("IPv4-mapped IPv6 address %q is not allowed", s)
	}
	return a, nil
}

func parseCIDR(s string) (netip.Prefix, error) {
	p, err := netip.ParsePrefix(s)
	if err != nil {
		return netip.Prefix{}, fmt.Errorf("network address parse error during conversion from string: %v", err)
	}
	if p.Addr().Is4In6() {
		return netip.Prefix{}, fmt.Errorf("IPv4-mapped IPv6 address %q is not allowed", s)
	}
	return p, nil
}

func toIP(v ref.Val) ref.Val {
	s, ok := v.Value().(string)
	if !ok {
		return types.MaybeNoSuchOverloadErr(v)
	}
	a, err := parseIP(s)
	if err != nil {
		return types.NewErr("%v", err)
	}
	return ipVal{opaque{ipType}, a}
}

func toCIDR(v ref.Val) ref.Val {
	s, ok := v.Value().(string)
	if !ok {
		return types.MaybeNoSuchOverloadErr(v)
	}
	p, err := parseCIDR(s)
	if err != nil {
		return types.NewErr("network address parse error during conversion from string: %v", err)
	}
	return cidrVal{opaque{cidrType}, p}
}

func ipMember(name, id string, f func(netip.Addr) ref.Val, result *cel.Type) cel.EnvOption {
	return cel.Function(name, cel.MemberOverload(id, []*cel.Type{ipType}, result, cel.UnaryBinding(func(v ref.Val) ref.Val {
		x, ok := v.(ipVal)
		if !ok {
			return types.MaybeNoSuchOverloadErr(v)
		}
		return f(x.a)
	})))
}

func isString(parse func(string) error) func(ref.Val) ref.Val {
	return func(v ref.Val) ref.Val {
		s, ok := v.Value().(string)
		if !ok {
			return types.MaybeNoSuchOverloadErr(v)
		}
		return types.Bool(parse(s) == nil)
	}
}

func ipFunctions() []cel.EnvOption {
	flag := func(f func(netip.Addr) bool) func(netip.Addr) ref.Val {
		return func(a netip.Addr) ref.Val { return types.Bool(f(a)) }
	}
	return []cel.EnvOption{
		cel.Types(ipType),
		cel.Function("ip", cel.Overload("string_to_ip", []*cel.Type{cel.StringType}, ipType, cel.UnaryBinding(toIP))),
		ipMember("family", "ip_family", func(a netip.Addr) ref.Val {
			switch {
			case a.Is4():
				return types.Int(4)
			case a.Is6():
				return types.Int(6)
			}
			return types.NewErr("IP address %q is not an IPv4 or IPv6 address", a.String())
		}, cel.IntType),
		cel.Function("ip.isCanonical", cel.Overload("ip_is_canonical", []*cel.Type{cel.StringType}, cel.BoolType, cel.UnaryBinding(func(v ref.Val) ref.Val {
			s, ok := v.Value().(string)
			if !ok {
				return types.MaybeNoSuchOverloadErr(v)
			}
			a, err := parseIP(s)
			if err != nil {
				return types.NewErr("%v", err)
			}
			return types.Bool(a.String() == s)
		}))),
		ipMember("isUnspecified", "ip_is_unspecified", flag(netip.Addr.IsUnspecified), cel.BoolType),
		ipMember("isLoopback", "ip_is_loopback", flag(netip.Addr.IsLoopback), cel.BoolType),
		ipMember("isLinkLocalMulticast", "ip_is_link_local_multicast", flag(netip.Addr.IsLinkLocalMulticast), cel.BoolType),
		ipMember("isLinkLocalUnicast", "ip_is_link_local_unicast", flag(netip.Addr.IsLinkLocalUnicast), cel.BoolType),
		ipMember("isGlobalUnicast", "ip_is_global_unicast", flag(netip.Addr.IsGlobalUnicast), cel.BoolType),
		cel.Function("isIP", cel.Overload("is_ip", []*cel.Type{cel.StringType}, cel.BoolType,
			cel.UnaryBinding(isString(func(s string) error { _, err := parseIP(s); return err })))),
		cel.Function("string", cel.Overload("ip_to_string", []*cel.Type{ipType}, cel.StringType, cel.UnaryBinding(func(v ref.Val) ref.Val {
			x, ok := v.(ipVal)
			if !ok {
				return types.MaybeNoSuchOverloadErr(v)
			}
			return types.String(x.a.String())
		}))),
	}
}

func cidrFunctions() []cel.EnvOption {
	withCIDR := func(f func(netip.Prefix) ref.Val) func(ref.Val) ref.Val {
		return func(v ref.Val) ref.Val {
			x, ok := v.(cidrVal)
			if !ok {
				return types.MaybeNoSuchOverloadErr(v)
			}
			return f(x.p)
		}
	}
	containsIP := func(c, o ref.Val) ref.Val {
		x, ok := c.(cidrVal)
		if !ok {
			return types.MaybeNoSuchOverloadErr(c)
		}
		a, ok := o.(ipVal)
		if !ok {
			// The server answers "no such overload" here, even for an IP string that
			// does not parse.
			return types.MaybeNoSuchOverloadErr(c)
		}
		return types.Bool(x.p.Contains(a.a))
	}
	containsCIDR := func(c, o ref.Val) ref.Val {
		x, ok := c.(cidrVal)
		if !ok {
			return types.MaybeNoSuchOverloadErr(c)
		}
		y, ok := o.(cidrVal)
		if !ok {
			return types.MaybeNoSuchOverloadErr(o)
		}
		return types.Bool(x.p.Overlaps(y.p) && x.p.Bits() <= y.p.Bits())
	}
	return []cel.EnvOption{
		cel.Types(cidrType),
		cel.Function("cidr", cel.Overload("string_to_cidr", []*cel.Type{cel.StringType}, cidrType, cel.UnaryBinding(toCIDR))),
		cel.Function("containsIP",
			cel.MemberOverload("cidr_contains_ip_string", []*cel.Type{cidrType, cel.StringType}, cel.BoolType,
				cel.BinaryBinding(func(c, s ref.Val) ref.Val { return containsIP(c, toIP(s)) })),
			cel.MemberOverload("cidr_contains_ip_ip", []*cel.Type{cidrType, ipType}, cel.BoolType, cel.BinaryBinding(containsIP))),
		cel.Function("containsCIDR",
			cel.MemberOverload("cidr_contains_cidr_string", []*cel.Type{cidrType, cel.StringType}, cel.BoolType,
				cel.BinaryBinding(func(c, s ref.Val) ref.Val { return containsCIDR(c, toCIDR(s)) })),
			cel.MemberOverload("cidr_contains_cidr", []*cel.Type{cidrType, cidrType}, cel.BoolType, cel.BinaryBinding(containsCIDR))),
		cel.Function("ip", cel.MemberOverload("cidr_ip", []*cel.Type{cidrType}, ipType,
			cel.UnaryBinding(withCIDR(func(p netip.Prefix) ref.Val { return ipVal{opaque{ipType}, p.Addr()} })))),
		cel.Function("prefixLength", cel.MemberOverload("cidr_prefix_length", []*cel.Type{cidrType}, cel.IntType,
			cel.UnaryBinding(withCIDR(func(p netip.Prefix) ref.Val { return types.Int(p.Bits()) })))),
		cel.Function("masked", cel.MemberOverload("cidr_masked", []*cel.Type{cidrType}, cidrType,
			cel.UnaryBinding(withCIDR(func(p netip.Prefix) ref.Val { return cidrVal{opaque{cidrType}, p.Masked()} })))),
		cel.Function("isCIDR", cel.Overload("is_cidr", []*cel.Type{cel.StringType}, cel.BoolType,
			cel.UnaryBinding(isString(func(s string) error { _, err := parseCIDR(s); return err })))),
		cel.Function("string", cel.Overload("cidr_to_string", []*cel.Type{cidrType}, cel.StringType,
			cel.UnaryBinding(withCIDR(func(p netip.Prefix) ref.Val { return types.String(p.String()) })))),
	}
}
