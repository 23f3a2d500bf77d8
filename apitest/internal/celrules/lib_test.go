package celrules

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
)

// libSchema gives rules typed values to work on.
const libSchema = `{"type":"object","properties":{"spec":{"type":"object","properties":{
 "ints":{"type":"array","items":{"type":"integer"}},
 "names":{"type":"array","items":{"type":"string"}},
 "set":{"type":"array","items":{"type":"string"},"x-kubernetes-list-type":"set"},
 "ports":{"type":"array","x-kubernetes-list-type":"map","x-kubernetes-list-map-keys":["name"],
   "items":{"type":"object","required":["name"],"properties":{"name":{"type":"string"},"port":{"type":"integer"}}}},
 "labels":{"type":"object","additionalProperties":{"type":"string"}},
 "cpu":{"type":"string"},"addr":{"type":"string"},"url":{"type":"string"},"ver":{"type":"string"},
 "timeout":{"type":"string","format":"duration"},"at":{"type":"string","format":"date-time"},
 "blob":{"type":"string","format":"byte"},"ratio":{"type":"number"},
 "size":{"x-kubernetes-int-or-string":true},
 "free":{"type":"object","x-kubernetes-preserve-unknown-fields":true},
 "namespace":{"type":"string"},"dash-name":{"type":"string"},
 "tmpl":{"type":"object","x-kubernetes-embedded-resource":true,"properties":{"spec":{"type":"string"}}}}}}}`

const libObject = `{"spec":{"ints":[3,1,2],"names":["b","a"],"set":["x","y"],
 "ports":[{"name":"http","port":80},{"name":"grpc","port":9090}],"labels":{"app":"web","tier":"front"},
 "cpu":"500m","addr":"10.1.2.3","url":"https://example.com:8443/a%20b?q=1&q=2","ver":"1.2.3-rc.1",
 "timeout":"90s","at":"2026-01-02T03:04:05Z","blob":"aGVsbG8=","ratio":0.5,"size":"50%",
 "free":{"anything":1},"namespace":"ns","dash-name":"d",
 "tmpl":{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p"},"spec":"s"}}}`

// TestLibraries: each rule must hold on libObject.
func TestLibraries(t *testing.T) {
	rules := []string{
		// Kubernetes lists
		"!self.ints.isSorted() && [1, 2, 3].isSorted() && self.names.sort().isSorted()",
		"self.ints.sum() == 6 && self.ints.min() == 1 && self.ints.max() == 3",
		"self.ints.indexOf(1) == 1 && self.ints.lastIndexOf(7) == -1 && [1, 2, 1].lastIndexOf(1) == 2",
		"[1.5, 2.5].sum() == 4.0 && [duration('1s'), duration('2s')].sum() == duration('3s')",
		// regex
		"'abc123'.find('[0-9]+') == '123' && 'a1b2c3'.findAll('[0-9]') == ['1', '2', '3'] && 'a1b2'.findAll('[0-9]', 1) == ['1']",
		// URLs
		"url(self.url).getScheme() == 'https' && url(self.url).getHost() == 'example.com:8443'",
		"url(self.url).getHostname() == 'example.com' && url(self.url).getPort() == '8443'",
		"url(self.url).getEscapedPath() == '/a%20b' && url(self.url).getQuery()['q'] == ['1', '2']",
		"isURL(self.url) && !isURL('not a url')",
		// quantities
		"quantity(self.cpu).isLessThan(quantity('1')) && quantity('1Gi').isGreaterThan(quantity('1G'))",
		"quantity('1.5').asApproximateFloat() == 1.5 && quantity('2k').asInteger() == 2000 && !quantity('500m').isInteger()",
		"quantity('1').add(quantity('500m')).compareTo(quantity('1500m')) == 0 && quantity('2').sub(1).asInteger() == 1 && quantity('1').add(1) == quantity('2')",
		"isQuantity('10Mi') && !isQuantity('10 Mi') && !isQuantity('1ki') && sign(quantity('-1')) == -1",
		"quantity('1e3') == quantity('1k') && quantity('0.0000000001').isGreaterThan(quantity('0'))",
		// IPs and CIDRs
		"ip(self.addr).family() == 4 && ip('::1').family() == 6 && ip('::1').isLoopback()",
		"isIP(self.addr) && !isIP('10.1.2') && ip.isCanonical('10.1.2.3') && !ip.isCanonical('2001:db8:0:0:0:0:0:1')",
		"cidr('10.0.0.0/8').containsIP(self.addr) && cidr('10.0.0.0/8').containsIP(ip('10.9.9.9'))",
		"cidr('10.0.0.0/8').containsCIDR('10.1.0.0/16') && !cidr('10.1.0.0/16').containsCIDR('10.0.0.0/8')",
		"cidr('10.1.2.3/8').masked() == cidr('10.0.0.0/8') && cidr('10.1.2.3/8').prefixLength() == 8 && cidr('10.1.2.3/8').ip() == ip('10.1.2.3')",
		"isCIDR('10.0.0.0/8') && !isCIDR('10.0.0.0') && string(ip('10.0.0.1')) == '10.0.0.1' && string(cidr('10.0.0.0/8')) == '10.0.0.0/8'",
		"ip('fe80::1').isLinkLocalUnicast() && ip('0.0.0.0').isUnspecified() && ip('8.8.8.8').isGlobalUnicast() && ip('ff02::1').isLinkLocalMulticast()",
		// named formats
		"!format.dns1123Label().validate('ok-name').hasValue() && format.dns1123Label().validate('Not_OK').hasValue()",
		"format.named('uuid').hasValue() && !format.named('nope').hasValue() && format.named('labelValue').value().validate('a b').hasValue()",
		"format.dns1123Subdomain().validate('a.b').orValue([]) == [] && format.qualifiedName().validate('example.com/x').orValue([]) == []",
		// semantic versions
		"semver(self.ver).isLessThan(semver('1.2.3')) && semver('1.10.0').isGreaterThan(semver('1.9.0'))",
		"semver('v1.02', true).minor() == 2 && isSemver('1.0.0') && !isSemver('1.0') && isSemver('1.0', true) && semver('2.3.4').major() == 2",
		// strings extension (version 2), sets, lists extension, optional types, two-variable comprehensions
		"'a,b'.split(',') == ['a', 'b'] && 'ABC'.lowerAscii() == 'abc' && ['a', 'b'].join('-') == 'a-b' && '  x '.trim() == 'x'",
		"'%s=%d'.format(['a', 1]) == 'a=1' && 'hello'.charAt(1) == 'e' && 'abc'.indexOf('c') == 2",
		"sets.contains(self.names, ['a']) && sets.intersects(self.names, ['b', 'z']) && sets.equivalent(['a', 'b'], ['b', 'a'])",
		"self.ints.sort() == [1, 2, 3] && [[1], [2]].flatten() == [1, 2] && lists.range(3) == [0, 1, 2] && self.ints.distinct().size() == 3",
		"self.labels.all(k, v, k.size() > 2 && v.size() > 2) && self.ints.exists(i, v, i == 0 && v == 3)",
		"self.labels.transformMap(k, v, v + '!')['app'] == 'web!' && self.ints.transformList(i, v, v * i) == [0, 1, 4]",
		"self.?cpu.orValue('d') == '500m' && self.labels[?'app'] == optional.of('web') && !has(self.labels.nope)",
		// types from the schema
		"self.timeout == duration('90s') && self.at == timestamp('2026-01-02T03:04:05Z') && self.blob == b'hello'",
		"self.ratio == 0.5 && self.ratio < 1 && type(self.size) == string && self.size.endsWith('%')",
		"self.set == ['y', 'x'] && self.set + ['x', 'z'] == ['x', 'y', 'z']",
		"self.ports == [self.ports[1], self.ports[0]] && (self.ports + self.ports).size() == 2 && (self.names + self.names).size() == 4",
		"self.__namespace__ == 'ns' && self.dash__dash__name == 'd' && self.tmpl.metadata.name == 'p' && self.tmpl.kind == 'Pod'",
		"self.free == self.free && 'app' in self.labels && !('x' in self.labels)",
	}
	for _, r := range rules {
		s := decode(t, libSchema)
		spec := s["properties"].(map[string]any)["spec"].(map[string]any)
		spec["x-kubernetes-validations"] = []any{map[string]any{"rule": r}}
		v := New(s)
		errs, _ := v.Validate(context.Background(), decode(t, libObject), nil)
		if len(errs) > 0 {
			t.Errorf("%s:\n %v", r, errs[0].Message)
		}
	}
}

// TestLibraryErrors: runtime errors of the libraries, in the server's words.
func TestLibraryErrors(t *testing.T) {
	for rule, want := range map[string]string{
		"quantity(self.cpu + 'x') == quantity('1')": "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$' evaluating rule",
		"quantity('500m').asInteger() == 0":         "cannot convert value to integer evaluating rule",
		"cidr('10.0.0.0/8').containsIP('10.1')":     "'no such overload': call arguments did not match a supported operator, function or macro signature for rule",
		"cidr('10.0.0.0/8').containsCIDR('10.1')":   "network address parse error during conversion from string: network address parse error during conversion from string",
		"ip('10.1.2') == ip('10.1.2.3')":            `IP Address "10.1.2" parse error during conversion from string: ParseAddr("10.1.2"): IPv4 address too short evaluating rule`,
		"url('x') == url('y')":                      "URL parse error during conversion from string: parse \"x\": invalid URI for request evaluating rule",
		"[0][1:2] == []":                            "",
		"self.ints.filter(i, i > 5).min() == 0":     "min called on empty list evaluating rule",
		"semver('1.0') == semver('1.0.0')":          "No Major.Minor.Patch elements found evaluating rule",
		"quantity('2') == quantity('1').add(1)":     "'no such overload': call arguments did not match",
		"'a'.findAll('(') == []":                    "",
	} {
		s := decode(t, libSchema)
		spec := s["properties"].(map[string]any)["spec"].(map[string]any)
		spec["x-kubernetes-validations"] = []any{map[string]any{"rule": rule}}
		if want == "" { // does not compile: checked at CRD creation
			errs := Check(s, "spec", false)
			if len(errs) == 0 {
				t.Errorf("%s compiled", rule)
			}
			continue
		}
		errs, _ := New(s).Validate(context.Background(), decode(t, libObject), nil)
		if len(errs) != 1 || !strings.Contains(errs[0].Message, want) {
			b, _ := json.Marshal(errs)
			t.Errorf("%s:\n got %s\nwant %s", rule, b, want)
		}
	}
}
