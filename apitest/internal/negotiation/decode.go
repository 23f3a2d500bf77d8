package negotiation

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"mime"
	"net/http"
	"slices"
	"strings"

	"github.com/informerkit/informerkit/apitest/internal/apierr"
	"github.com/informerkit/informerkit/apitest/internal/jsonobj"
	"github.com/informerkit/informerkit/internal/kubeproto"
	"github.com/informerkit/informerkit/meta"
	"go.yaml.in/yaml/v3"
)

// DecodeObject is Decode of a request body for an object of kind, with the kube-apiserver's
// words for a protobuf body that does not decode.
func DecodeObject(contentType string, b []byte, kind string, accepted []string) (map[string]any, *meta.Status) {
	m, st := Decode(contentType, b, accepted)
	if st != nil && st.Code == http.StatusBadRequest && strings.HasPrefix(contentType, MediaProtobuf) {
		// As the kube-apiserver words a body its protobuf decoder cannot read.
		why := "unexpected EOF"
		if _, err := kubeproto.Unwrap(b); err == nil || !strings.Contains(err.Error(), "exceeds") && !strings.Contains(err.Error(), "truncated") {
			why = strings.TrimPrefix(st.Message, "the body of the request does not decode as "+MediaProtobuf+": ")
		}
		st = apierr.BadRequest(fmt.Sprintf("the object provided is unrecognized (must be of type %s): %s (%s)", kind, why, summarizeBody(b)))
	}
	return m, st
}

// summarizeBody is the kube-apiserver's summary of a body in decode errors.
func summarizeBody(b []byte) string {
	const max = 30
	switch {
	case len(b) == 0:
		return "<empty>"
	case b[0] == '{':
		if len(b) > max {
			return string(b[:max]) + " ..."
		}
		return string(b)
	}
	if len(b) > max {
		return hex.EncodeToString(b[:max]) + " ..."
	}
	return hex.EncodeToString(b)
}

// Decode decodes b in the media type of the Content-Type ct ("" is JSON), accepted being
// what the endpoint reads: 415 for another media type, 400 for a body that does not decode.
func Decode(ct string, b []byte, accepted []string) (map[string]any, *meta.Status) {
	mt := MediaJSON
	if strings.TrimSpace(ct) != "" {
		var err error
		if mt, _, err = mime.ParseMediaType(ct); err != nil {
			return nil, apierr.UnsupportedMediaType(accepted)
		}
	}
	if !slices.Contains(accepted, mt) {
		return nil, apierr.UnsupportedMediaType(accepted)
	}
	var m map[string]any
	var err error
	switch mt {
	case MediaJSON:
		m, err = jsonobj.Decode(b)
	case MediaYAML:
		m, err = DecodeYAML(b)
	case MediaProtobuf:
		m, err = kubeproto.DecodeObject(b)
	}
	if err != nil {
		return nil, apierr.BadRequest(fmt.Sprintf("the body of the request does not decode as %s: %v", mt, err))
	}
	if m == nil {
		return nil, apierr.BadRequest("the request body is not an object")
	}
	return m, nil
}

// DecodeYAML decodes one YAML document into the JSON form (numbers as json.Number).
// CheckYAML reports whether b is YAML at all (of any shape), with the YAML parser's error.
func CheckYAML(b []byte) error {
	var v any
	return yaml.Unmarshal(b, &v)
}

func DecodeYAML(b []byte) (map[string]any, error) {
	var v any
	if err := yaml.Unmarshal(b, &v); err != nil {
		return nil, err
	}
	j, err := json.Marshal(yamlToJSON(v))
	if err != nil {
		return nil, err
	}
	return jsonobj.Decode(j)
}

func yamlToJSON(v any) any {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			x[k] = yamlToJSON(e)
		}
		return x
	case map[any]any:
		m := make(map[string]any, len(x))
		for k, e := range x {
			m[fmt.Sprint(k)] = yamlToJSON(e)
		}
		return m
	case []any:
		for i, e := range x {
			x[i] = yamlToJSON(e)
		}
	}
	return v
}

// EncodeYAML writes a JSON document as YAML (numbers kept as numbers).
func EncodeYAML(j []byte) []byte {
	d := json.NewDecoder(bytes.NewReader(j))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		return j
	}
	out, err := yaml.Marshal(numbersForYAML(v))
	if err != nil {
		return j
	}
	return out
}

func numbersForYAML(v any) any {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			x[k] = numbersForYAML(e)
		}
	case []any:
		for i, e := range x {
			x[i] = numbersForYAML(e)
		}
	case json.Number:
		if n, err := x.Int64(); err == nil {
			return n
		}
		f, _ := x.Float64()
		return f
	}
	return v
}
