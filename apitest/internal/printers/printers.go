// Package printers renders objects as the meta.k8s.io/v1 Table that `kubectl get` asks for
// (Accept: application/json;as=Table;g=meta.k8s.io;v=v1), with the kube-apiserver's
// columns for each built-in kind (their definitions from kubeschema's table, recorded from
// the real server) and its printers' cells, computed on the objects' JSON form, always
// "wide" (kubectl hides the priority-1 columns unless -o wide). A kind with a column
// apitest has no cell for gets Name and Age, as custom resources without printer columns
// do (Options.Generic).
package printers

import (
	"time"

	"github.com/informerkit/informerkit/apitest/internal/jsonobj"
	"github.com/informerkit/informerkit/meta"
)

// Options are the optional settings of Table.
type Options struct {
	// IncludeObject is the request's includeObject: "None" (no object), "Object" (the
	// whole object), or "Metadata" and "" (the default: its PartialObjectMetadata).
	IncludeObject string
	// NoHeaders leaves out the column definitions (a Table watch sends them only in its
	// first event).
	NoHeaders bool
	// Generic makes the table of a custom resource: Name, then Columns (its
	// CustomResourceDefinition's additionalPrinterColumns), or Age without any.
	Generic bool
	// Columns are the additionalPrinterColumns of a Generic table.
	Columns []CustomColumn
	// Now is the time ages are computed from (default: time.Now()).
	Now time.Time
}

// Table renders objs, objects of group ("" for the core group) and kind in their JSON
// form, as a Table whose metadata is lm. The objects are not modified.
func Table(group, kind string, objs []map[string]any, lm meta.ListMeta, o Options) map[string]any {
	var cols []column
	var extra []cellFunc
	switch {
	case o.Generic:
		cols = customColumns(o.Columns)
	default:
		cols, extra = builtinColumns(group, kind)
	}
	now := o.Now
	if now.IsZero() {
		now = time.Now()
	}
	rows := make([]map[string]any, 0, len(objs))
	for _, m := range objs {
		cells := make([]any, len(cols), len(cols)+len(extra))
		for i, c := range cols {
			cells[i] = c.cell(m, now)
		}
		for _, c := range extra {
			cells = append(cells, c(m, now))
		}
		row := map[string]any{"cells": cells}
		switch o.IncludeObject {
		case "None":
			row["object"] = nil
		case "Object":
			row["object"] = m
		default:
			row["object"] = map[string]any{"kind": "PartialObjectMetadata", "apiVersion": "meta.k8s.io/v1", "metadata": m["metadata"]}
		}
		if group == "" && kind == "Pod" && !o.Generic {
			if c := podCompleted(m); c != nil {
				row["conditions"] = []any{c}
			}
		}
		rows = append(rows, row)
	}
	t := map[string]any{"kind": "Table", "apiVersion": "meta.k8s.io/v1", "metadata": lm, "rows": rows}
	if o.NoHeaders {
		t["columnDefinitions"] = nil
		return t
	}
	defs := make([]map[string]any, len(cols))
	for i, c := range cols {
		defs[i] = map[string]any{"name": c.name, "type": c.typ, "format": c.format, "description": c.desc, "priority": c.priority}
	}
	t["columnDefinitions"] = defs
	return t
}

// podCompleted is the Completed condition of a pod's row once it has ended (nil before).
func podCompleted(pod map[string]any) map[string]any {
	switch jsonobj.StrAt(pod, "status", "phase") {
	case "Succeeded":
		return map[string]any{"type": "Completed", "status": "True", "reason": "Succeeded", "message": "The pod has completed successfully."}
	case "Failed":
		return map[string]any{"type": "Completed", "status": "True", "reason": "Failed", "message": "The pod failed."}
	}
	return nil
}
