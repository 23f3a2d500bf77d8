package printers

import (
	"testing"
	"time"

	"github.com/informerkit/informerkit/apitest/internal/jsonobj"
	"github.com/informerkit/informerkit/internal/kubeschema"
	"github.com/informerkit/informerkit/meta"
)

func obj(t *testing.T, s string) map[string]any {
	t.Helper()
	m, err := jsonobj.Decode([]byte(s))
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func TestHumanDuration(t *testing.T) {
	for _, c := range []struct {
		d    time.Duration
		want string
	}{
		{-2 * time.Second, "<invalid>"},
		{-500 * time.Millisecond, "0s"},
		{119 * time.Second, "119s"},
		{150 * time.Second, "2m30s"},
		{10 * time.Minute, "10m"},
		{3*time.Hour + 5*time.Minute, "3h5m"},
		{30 * time.Hour, "30h"},
		{50 * time.Hour, "2d2h"},
		{400 * 24 * time.Hour, "400d"},
		{3*365*24*time.Hour + 24*time.Hour, "3y1d"},
		{9 * 365 * 24 * time.Hour, "9y"},
	} {
		if got := humanDuration(c.d); got != c.want {
			t.Errorf("%v: got %q, want %q", c.d, got, c.want)
		}
	}
}

func TestPodStatusColumn(t *testing.T) {
	now := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	for _, c := range []struct {
		name, pod string
		want      podCells
	}{
		{"pending", `{"spec":{"containers":[{"name":"a"}]},"status":{"phase":"Pending"}}`,
			podCells{"0/1", "Pending", "0"}},
		{"crash loop", `{"spec":{"containers":[{"name":"a"}]},"status":{"phase":"Running","containerStatuses":[
			{"name":"a","restartCount":3,"state":{"waiting":{"reason":"CrashLoopBackOff"}},
			 "lastState":{"terminated":{"finishedAt":"2026-01-01T11:59:00Z"}}}]}}`,
			podCells{"0/1", "CrashLoopBackOff", "3 (60s ago)"}},
		{"second init container", `{"spec":{"initContainers":[{"name":"i1"},{"name":"i2"}],"containers":[{"name":"a"}]},
			"status":{"phase":"Pending","initContainerStatuses":[
			{"name":"i1","state":{"terminated":{"exitCode":0}}},{"name":"i2","state":{"running":{}}}]}}`,
			podCells{"0/1", "Init:1/2", "0"}},
		{"failed init container", `{"spec":{"initContainers":[{"name":"i1"}],"containers":[{"name":"a"}]},
			"status":{"phase":"Pending","initContainerStatuses":[{"name":"i1","state":{"terminated":{"exitCode":2}}}]}}`,
			podCells{"0/1", "Init:ExitCode:2", "0"}},
		{"ready with a sidecar", `{"spec":{"initContainers":[{"name":"s","restartPolicy":"Always"}],"containers":[{"name":"a"}]},
			"status":{"phase":"Running","conditions":[{"type":"Initialized","status":"True"}],
			"initContainerStatuses":[{"name":"s","started":true,"ready":true,"restartCount":1,"state":{"running":{}}}],
			"containerStatuses":[{"name":"a","ready":true,"state":{"running":{}}}]}}`,
			podCells{"2/2", "Running", "1"}},
		{"terminating", `{"metadata":{"deletionTimestamp":"2026-01-01T11:00:00Z"},"spec":{"containers":[{"name":"a"}]},
			"status":{"phase":"Running"}}`,
			podCells{"0/1", "Terminating", "0"}},
	} {
		if got := podRow(obj(t, c.pod), now); got != c.want {
			t.Errorf("%s: got %+v, want %+v", c.name, got, c.want)
		}
	}
}

func TestTableOptions(t *testing.T) {
	cm := obj(t, `{"metadata":{"name":"c","creationTimestamp":"2026-01-01T11:00:00Z"},"data":{"a":"1","b":"2"}}`)
	now := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	tbl := Table("", "ConfigMap", []map[string]any{cm}, meta.ListMeta{ResourceVersion: "7"}, Options{Now: now})
	defs, _ := tbl["columnDefinitions"].([]map[string]any)
	if len(defs) != 3 || defs[1]["name"] != "Data" {
		t.Fatalf("ConfigMap columns: %v", defs)
	}
	row := tbl["rows"].([]map[string]any)[0]
	cells := row["cells"].([]any)
	if cells[0] != "c" || cells[1] != int64(2) || cells[2] != "60m" {
		t.Fatalf("cells: %v", cells)
	}
	if o := row["object"].(map[string]any); o["kind"] != "PartialObjectMetadata" {
		t.Fatalf("the default object is the metadata: %v", o)
	}

	tbl = Table("", "ConfigMap", []map[string]any{cm}, meta.ListMeta{}, Options{Generic: true, NoHeaders: true, IncludeObject: "None", Now: now})
	row = tbl["rows"].([]map[string]any)[0]
	if tbl["columnDefinitions"] != nil || len(row["cells"].([]any)) != 2 || row["object"] != nil {
		t.Fatalf("generic, no headers, no object: %v", tbl)
	}
}

func TestCompletedPodRowCondition(t *testing.T) {
	pod := obj(t, `{"metadata":{"name":"p"},"status":{"phase":"Succeeded"}}`)
	row := Table("", "Pod", []map[string]any{pod}, meta.ListMeta{}, Options{})["rows"].([]map[string]any)[0]
	conds, _ := row["conditions"].([]any)
	if len(conds) != 1 || conds[0].(map[string]any)["reason"] != "Succeeded" {
		t.Fatalf("a completed pod's row carries the Completed condition: %v", row)
	}
}

// TestEveryBuiltinKindHasItsColumns: every built-in resource's Table has the
// kube-apiserver's columns (recorded in kubeschema's table), apitest computing every cell:
// no kind falls back to Name and Age.
func TestEveryBuiltinKindHasItsColumns(t *testing.T) {
	n := 0
	for _, r := range kubeschema.Resources() {
		if r.Columns == nil {
			continue
		}
		n++
		cols, _ := builtinColumns(r.Group, r.Kind)
		if len(cols) != len(r.Columns) {
			t.Errorf("%s/%s: %d columns, the kube-apiserver has %d", r.Group, r.Resource, len(cols), len(r.Columns))
			continue
		}
		for i, c := range cols {
			if c.name != r.Columns[i].Name || c.typ != r.Columns[i].Type {
				t.Errorf("%s/%s column %d: %q %q, want %q %q", r.Group, r.Resource, i, c.name, c.typ, r.Columns[i].Name, r.Columns[i].Type)
			}
		}
	}
	if n < 60 {
		t.Errorf("only %d resources with columns", n)
	}
}
