package apiclient

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
)

// parseEnvelope reads {"type":"...","object":{...}} (keys in any order, other keys ignored)
// and returns the type and the raw object. The object is a sub-slice of frame.
func parseEnvelope(frame []byte) (typ string, obj []byte, err error) {
	p := scanner{b: frame}
	p.ws()
	if !p.consume('{') {
		return "", nil, errors.New("event is not a JSON object")
	}
	p.ws()
	if p.consume('}') {
		return "", nil, errors.New("empty event object")
	}
	haveType := false
	for {
		p.ws()
		key, ok := p.str()
		if !ok {
			return "", nil, fmt.Errorf("bad key at byte %d", p.i)
		}
		p.ws()
		if !p.consume(':') {
			return "", nil, fmt.Errorf("missing ':' at byte %d", p.i)
		}
		p.ws()
		switch string(key) {
		case "type":
			v, ok := p.str()
			if !ok {
				return "", nil, errors.New(`"type" is not a string`)
			}
			if typ, ok = unquote(v); !ok {
				return "", nil, errors.New(`"type" is not a valid JSON string`)
			}
			haveType = true
		case "object":
			start := p.i
			if !p.value() {
				return "", nil, fmt.Errorf(`bad "object" value at byte %d`, start)
			}
			obj = frame[start:p.i]
			if string(obj) == "null" {
				obj = nil
			}
		default:
			if !p.value() {
				return "", nil, fmt.Errorf("bad value at byte %d", p.i)
			}
		}
		p.ws()
		if p.consume(',') {
			continue
		}
		if p.consume('}') {
			break
		}
		return "", nil, fmt.Errorf("expected ',' or '}' at byte %d", p.i)
	}
	p.ws()
	if p.i != len(frame) {
		return "", nil, fmt.Errorf("trailing data at byte %d", p.i)
	}
	if !haveType {
		return "", nil, errors.New(`event without "type"`)
	}
	return typ, obj, nil
}

// topLevelString returns the value of a top-level string member of a JSON object, stopping
// at the first match (the API server writes kind first).
func topLevelString(obj []byte, name string) (string, bool) {
	p := scanner{b: obj}
	p.ws()
	if !p.consume('{') {
		return "", false
	}
	for {
		p.ws()
		key, ok := p.str()
		if !ok {
			return "", false
		}
		p.ws()
		if !p.consume(':') {
			return "", false
		}
		p.ws()
		if string(key) == name {
			v, ok := p.str()
			if !ok {
				return "", false
			}
			return unquote(v)
		}
		if !p.value() {
			return "", false
		}
		p.ws()
		if !p.consume(',') {
			return "", false
		}
	}
}

// unquote turns the inside of a JSON string into Go text.
func unquote(inner []byte) (string, bool) {
	if bytes.IndexByte(inner, '\\') < 0 {
		return string(inner), true
	}
	var s string
	q := make([]byte, 0, len(inner)+2)
	q = append(append(append(q, '"'), inner...), '"')
	if err := json.Unmarshal(q, &s); err != nil {
		return "", false
	}
	return s, true
}

// scanner is a minimal JSON reader used for event envelopes: it finds value boundaries and
// leaves real decoding (and full validation of objects) to the JSON decoder.
type scanner struct {
	b []byte
	i int
}

func (p *scanner) ws() {
	for p.i < len(p.b) && isSpace(p.b[p.i]) {
		p.i++
	}
}

func (p *scanner) consume(c byte) bool {
	if p.i < len(p.b) && p.b[p.i] == c {
		p.i++
		return true
	}
	return false
}

// str reads a string and returns its raw inside (escapes not processed).
func (p *scanner) str() ([]byte, bool) {
	if !p.consume('"') {
		return nil, false
	}
	start := p.i
	for {
		j := bytes.IndexByte(p.b[p.i:], '"')
		if j < 0 {
			return nil, false
		}
		p.i += j
		if escaped(p.b, p.i) {
			p.i++
			continue
		}
		s := p.b[start:p.i]
		p.i++
		return s, true
	}
}

// value skips one JSON value: objects and arrays by bracket matching, strings, and literals.
func (p *scanner) value() bool {
	if p.i >= len(p.b) {
		return false
	}
	switch c := p.b[p.i]; c {
	case '"':
		_, ok := p.str()
		return ok
	case '{', '[':
		depth := 0
		for p.i < len(p.b) {
			switch p.b[p.i] {
			case '"':
				if _, ok := p.str(); !ok {
					return false
				}
				continue
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					p.i++
					return true
				}
			}
			p.i++
		}
		return false
	default:
		start := p.i
		for p.i < len(p.b) {
			switch p.b[p.i] {
			case ',', '}', ']', ' ', '\t', '\r', '\n':
				return p.i > start && validLiteral(p.b[start:p.i])
			}
			p.i++
		}
		return p.i > start && validLiteral(p.b[start:p.i])
	}
}

func validLiteral(b []byte) bool {
	switch string(b) {
	case "true", "false", "null":
		return true
	}
	c := b[0]
	return c == '-' || (c >= '0' && c <= '9')
}
