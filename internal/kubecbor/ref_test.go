package kubecbor

import (
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"errors"
	"math"
	"strconv"
	"unicode/utf8"
)

// refDecode is the reference of the fuzz targets: a plain recursive CBOR decoder into
// generic values (map[string]any, []any, string, bool, nil, json.Number), written apart
// from the transcoder and as simply as possible, with the same acceptance rules.
func refDecode(b []byte) (any, error) {
	v, rest, err := refItem(b, 0)
	if err != nil {
		return nil, err
	}
	if len(rest) != 0 {
		return nil, errors.New("trailing data")
	}
	return v, nil
}

var errRef = errors.New("reference: bad item")

func refArg(b []byte) (major, info byte, arg uint64, rest []byte, err error) {
	if len(b) == 0 {
		return 0, 0, 0, nil, errRef
	}
	major, info = b[0]>>5, b[0]&31
	b = b[1:]
	size := map[byte]int{24: 1, 25: 2, 26: 4, 27: 8}[info]
	if info < 24 {
		return major, info, uint64(info), b, nil
	}
	if size == 0 || len(b) < size {
		return 0, 0, 0, nil, errRef
	}
	var full [8]byte
	copy(full[8-size:], b[:size])
	return major, info, binary.BigEndian.Uint64(full[:]), b[size:], nil
}

func refItem(b []byte, depth int) (any, []byte, error) {
	if depth >= maxDepth {
		return nil, nil, errRef
	}
	major, info, arg, b, err := refArg(b)
	if err != nil {
		return nil, nil, err
	}
	switch major {
	case 0:
		return json.Number(strconv.FormatUint(arg, 10)), b, nil
	case 1:
		if arg == math.MaxUint64 {
			return json.Number("-18446744073709551616"), b, nil
		}
		return json.Number("-" + strconv.FormatUint(arg+1, 10)), b, nil
	case 2, 3:
		if arg > uint64(len(b)) || !utf8.Valid(b[:arg]) {
			return nil, nil, errRef
		}
		return string(b[:arg]), b[arg:], nil
	case 4:
		if arg > uint64(len(b)) {
			return nil, nil, errRef
		}
		out := []any{}
		for range arg {
			var v any
			if v, b, err = refItem(b, depth+1); err != nil {
				return nil, nil, err
			}
			out = append(out, v)
		}
		return out, b, nil
	case 5:
		if arg > uint64(len(b)) {
			return nil, nil, errRef
		}
		out := map[string]any{}
		for range arg {
			for len(b) >= 3 && b[0] == 0xd9 && b[1] == 0xd9 && b[2] == 0xf7 {
				b = b[3:]
			}
			if len(b) == 0 || (b[0]>>5 != 2 && b[0]>>5 != 3) {
				return nil, nil, errRef
			}
			var k, v any
			if k, b, err = refItem(b, depth+1); err != nil {
				return nil, nil, err
			}
			if v, b, err = refItem(b, depth+1); err != nil {
				return nil, nil, err
			}
			out[k.(string)] = v
		}
		return out, b, nil
	case 6:
		switch arg {
		case 55799:
			return refItem(b, depth)
		case 21, 22, 23:
			if len(b) > 0 && b[0]>>5 == 2 {
				_, _, n, rest, err := refArg(b)
				if err != nil || n > uint64(len(rest)) {
					return nil, nil, errRef
				}
				raw := rest[:n]
				var s string
				switch arg {
				case 21:
					s = base64.RawURLEncoding.EncodeToString(raw)
				case 22:
					s = base64.StdEncoding.EncodeToString(raw)
				default:
					s = ""
					for _, c := range raw {
						s += strconv.FormatUint(uint64(c)|0x100, 16)[1:]
					}
				}
				return s, rest[n:], nil
			}
			return refItem(b, depth)
		case 0:
			if len(b) == 0 || b[0]>>5 != 3 {
				return nil, nil, errRef
			}
			return refItem(b, depth)
		}
		return nil, nil, errRef
	}
	var f float64
	switch info {
	case 20:
		return false, b, nil
	case 21:
		return true, b, nil
	case 22:
		return nil, b, nil
	case 25:
		f = refHalf(uint16(arg))
	case 26:
		f = float64(math.Float32frombits(uint32(arg)))
	case 27:
		f = math.Float64frombits(arg)
	default:
		return nil, nil, errRef
	}
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return nil, nil, errRef
	}
	js, _ := json.Marshal(f)
	return json.Number(js), b, nil
}

// refHalf decodes float16 by building the float32 bits.
func refHalf(h uint16) float64 {
	sign := uint32(h&0x8000) << 16
	exp := uint32(h>>10) & 0x1f
	mant := uint32(h & 0x3ff)
	switch {
	case exp == 0x1f:
		return float64(math.Float32frombits(sign | 0x7f800000 | mant<<13))
	case exp == 0:
		v := float64(mant) / (1 << 24)
		if sign != 0 {
			v = -v
		}
		return v
	}
	return float64(math.Float32frombits(sign | (exp+112)<<23 | mant<<13))
}
