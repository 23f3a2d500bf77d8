package kuberecord

import (
	"encoding/json"
	"regexp"
	"strings"
)

// Placeholders of the values that differ from one run (or one server) to the next.
const (
	UID     = "<uid>"
	RV      = "<rv>"
	Time    = "<time>"
	IP      = "<ip>"
	Port    = "<port>"
	Age     = "<age>"
	Created = "<created>"
	// Controller is a value an in-server controller sets a moment after a create.
	Controller = "<controller>"
)

var (
	reTime    = regexp.MustCompile(`^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)$`)
	reNodePrt = regexp.MustCompile(`:\d+/`)
)

// normalize returns obj as JSON with the run's values replaced: uids, resourceVersions,
// timestamps, allocated cluster IPs and node ports, the kubernetes Service's target port,
// and the run's unique suffix of names.
func normalize(obj map[string]any, id string) json.RawMessage {
	if obj == nil {
		return json.RawMessage("null")
	}
	v := walk(obj, "", id)
	b, _ := json.Marshal(v)
	return b
}

func walk(v any, key, id string) any {
	switch x := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = walk(e, k, id)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = walk(e, key, id)
		}
		return out
	case string:
		switch {
		case key == "uid":
			return UID
		case key == "resourceVersion":
			return RV
		case key == "clusterIP" || key == "clusterIPs":
			if x != "None" && x != "" {
				return IP
			}
		case reTime.MatchString(x):
			return Time
		}
		return strings.ReplaceAll(x, "-"+id, "")
	case float64:
		switch key {
		case "nodePort", "healthCheckNodePort":
			return Port
		}
	}
	return v
}

// normalizeCell replaces a Table cell that differs from one run to the next: ages, dates,
// allocated IPs and node ports.
func normalizeCell(c Column, v any, id string) any {
	switch {
	case c.Name == "Age":
		return Age
	case c.Type == "date" || c.Format == "date":
		return Created
	case c.Name == "MissingPL":
		// Set by the server's own flow-control controller, soon after the create.
		return Controller
	case c.Name == "Cluster-IP":
		return IP
	}
	if s, ok := v.(string); ok {
		s = strings.ReplaceAll(s, "-"+id, "")
		if c.Name == "Port(s)" {
			s = reNodePrt.ReplaceAllString(s, ":"+Port+"/")
		}
		return s
	}
	return v
}
