package printers

import (
	"fmt"
	"strings"
	"time"

	"github.com/informerkit/informerkit/apitest/internal/jsonobj"
	"github.com/informerkit/informerkit/internal/kubeschema"
	"github.com/informerkit/informerkit/internal/kubeschema/descriptions"
)

// column is one Table column: its definition and how a row's cell is computed.
type column struct {
	name, typ, format string
	priority          int
	desc              string
	cell              func(obj map[string]any, now time.Time) any
}

// doc is the OpenAPI description of a field (what the kube-apiserver's printers take from
// the Go types' SwaggerDoc).
func doc(typ, field string) string {
	if t := kubeschema.Lookup(typ); t != nil {
		if f := t.Field(field); f != nil {
			// SwaggerDoc is the Go comment, without the OpenAPI's list of enum values.
			d, _, _ := strings.Cut(descriptions.Field(f.Owner().Name, f.Name), "\n\nPossible enum values:")
			return d
		}
	}
	return ""
}

const (
	metaType      = "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"
	containersMsg = "Names of each container in the template."
	imagesMsg     = "Images referenced by each container in the template."
)

func nameColumn() column {
	return column{name: "Name", typ: "string", format: "name", desc: doc(metaType, "name"),
		cell: func(o map[string]any, _ time.Time) any { return jsonobj.Str(jsonobj.Map(o["metadata"]), "name") }}
}

func ageColumn() column {
	return column{name: "Age", typ: "string", desc: doc(metaType, "creationTimestamp"),
		cell: func(o map[string]any, now time.Time) any {
			return since(jsonobj.Str(jsonobj.Map(o["metadata"]), "creationTimestamp"), now)
		}}
}

// cellFunc computes one cell of a row.
type cellFunc func(obj map[string]any, now time.Time) any

// kindCells are a kind's cells by column name (beyond the generic Name, Age and Created
// At), and extra cells after the columns (the kube-apiserver's IPAddress printer writes an
// age its columns do not declare).
type kindCells struct {
	cells map[string]cellFunc
	extra []cellFunc
}

// builtinColumns are the kube-apiserver's columns of a built-in kind, or Name and Age if
// apitest lacks a cell of one of them.
func builtinColumns(group, kind string) ([]column, []cellFunc) {
	kc := kinds[group+"/"+kind]
	var cols []column
	r := definitions(group, kind)
	for _, d := range r.Columns {
		c := column{name: d.Name, typ: d.Type, format: d.Format, priority: d.Priority,
			desc: descriptions.Column(r.Group, r.Resource, d.Name)}
		switch {
		case kc.cells[d.Name] != nil:
			c.cell = kc.cells[d.Name]
		case d.Name == "Name" && d.Format == "name":
			c.cell = nameColumn().cell
		case d.Name == "Age":
			c.cell = ageColumn().cell
		case d.Type == "date":
			c.cell = func(o map[string]any, _ time.Time) any { return jsonobj.StrAt(o, "metadata", "creationTimestamp") }
		default:
			return []column{nameColumn(), ageColumn()}, nil
		}
		cols = append(cols, c)
	}
	if cols == nil {
		return []column{nameColumn(), ageColumn()}, nil
	}
	return cols, kc.extra
}

// definitions is the resource of a built-in kind (of any of its versions) with its
// column definitions.
func definitions(group, kind string) kubeschema.Resource {
	for _, r := range kubeschema.Resources() {
		if r.Group == group && r.Kind == kind && r.Columns != nil {
			return r
		}
	}
	return kubeschema.Resource{}
}

func containerCells(template map[string]any) (names, images string) {
	var n, i []string
	for _, c := range jsonobj.ListAt(jsonobj.Map(template["spec"]), "containers") {
		cm := jsonobj.Map(c)
		n = append(n, jsonobj.Str(cm, "name"))
		i = append(i, jsonobj.Str(cm, "image"))
	}
	return strings.Join(n, ","), strings.Join(i, ",")
}

func serviceExternalIP(o map[string]any, _ time.Time) any {
	spec := jsonobj.Map(o["spec"])
	ext := jsonobj.Strings(spec["externalIPs"])
	switch jsonobj.Str(spec, "type") {
	case "ClusterIP", "NodePort":
		if len(ext) > 0 {
			return strings.Join(ext, ",")
		}
		return "<none>"
	case "LoadBalancer":
		var ips []string
		for _, ing := range jsonobj.ListAt(jsonobj.Map(o["status"]), "loadBalancer", "ingress") {
			im := jsonobj.Map(ing)
			ips = append(ips, firstNonEmpty(jsonobj.Str(im, "ip"), jsonobj.Str(im, "hostname")))
		}
		ips = append(ips, ext...)
		if len(ips) > 0 {
			return strings.Join(ips, ",")
		}
		return "<pending>"
	case "ExternalName":
		return jsonobj.Str(spec, "externalName")
	}
	return "<unknown>"
}

func readinessGates(o map[string]any, _ time.Time) any {
	gates := jsonobj.ListAt(o, "spec", "readinessGates")
	if len(gates) == 0 {
		return "<none>"
	}
	conds := jsonobj.ListAt(o, "status", "conditions")
	ok := 0
	for _, g := range gates {
		for _, c := range conds {
			if jsonobj.Str(jsonobj.Map(c), "type") == jsonobj.Str(jsonobj.Map(g), "conditionType") && jsonobj.Str(jsonobj.Map(c), "status") == "True" {
				ok++
			}
		}
	}
	return fmt.Sprintf("%d/%d", ok, len(gates))
}

func eventRef(o map[string]any) map[string]any {
	if ref := jsonobj.Map(o["involvedObject"]); ref != nil {
		return ref
	}
	return jsonobj.Map(o["regarding"])
}

type evTimes struct {
	first, last string
	count       int64
}

// eventTimes are an Event's First Seen, Last Seen and Count cells (core/v1 and
// events.k8s.io/v1 field names).
func eventTimes(o map[string]any, now time.Time) evTimes {
	first := firstNonEmpty(jsonobj.Str(o, "firstTimestamp"), jsonobj.Str(o, "deprecatedFirstTimestamp"))
	var t evTimes
	if first != "" {
		t.first = since(first, now)
	} else {
		t.first = since(jsonobj.Str(o, "eventTime"), now)
	}
	last := firstNonEmpty(jsonobj.Str(o, "lastTimestamp"), jsonobj.Str(o, "deprecatedLastTimestamp"))
	t.last = t.first
	if last != "" {
		t.last = since(last, now)
	}
	t.count = jsonobj.Num(firstNonNil(o["count"], o["deprecatedCount"]))
	if series := jsonobj.Map(o["series"]); series != nil {
		t.last = since(jsonobj.Str(series, "lastObservedTime"), now)
		t.count = jsonobj.Num(series["count"])
	} else if t.count == 0 {
		t.count = 1
	}
	return t
}

func firstNonNil(vs ...any) any {
	for _, v := range vs {
		if v != nil {
			return v
		}
	}
	return nil
}
