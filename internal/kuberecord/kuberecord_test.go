package kuberecord

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestNormalize(t *testing.T) {
	obj := map[string]any{
		"metadata": map[string]any{"name": "ns1-abc123", "uid": "6f1c", "resourceVersion": "42",
			"creationTimestamp": "2026-12-01T22:14:43Z", "managedFields": []any{map[string]any{"time": "2026-12-01T22:14:43Z", "manager": "m"}}},
		"spec":     map[string]any{"clusterIP": "10.0.0.7", "clusterIPs": []any{"10.0.0.7"}, "ports": []any{map[string]any{"nodePort": 31234.0, "port": 80.0}}},
		"headless": map[string]any{"clusterIP": "None"},
	}
	got := string(normalize(obj, "abc123"))
	want := `{"headless":{"clusterIP":"None"},"metadata":{"creationTimestamp":"<time>","managedFields":[{"manager":"m","time":"<time>"}],"name":"ns1","resourceVersion":"<rv>","uid":"<uid>"},"spec":{"clusterIP":"<ip>","clusterIPs":["<ip>"],"ports":[{"nodePort":"<port>","port":80}]}}`
	if got != strings.ReplaceAll(strings.ReplaceAll(want, "<", `\u003c`), ">", `\u003e`) {
		t.Errorf("normalize:\n got %s\nwant %s", got, want)
	}
	cells := []struct {
		c    Column
		v    any
		want any
	}{
		{Column{Name: "Age"}, "3s", Age},
		{Column{Name: "Created At", Type: "date"}, "2026-12-01T22:14:43Z", Created},
		{Column{Name: "Port(s)"}, "80:31234/TCP,443/TCP", "80:<port>/TCP,443/TCP"},
		{Column{Name: "Name"}, "ns1-abc123", "ns1"},
		{Column{Name: "Replicas", Type: "integer"}, 3.0, 3.0},
	}
	for _, c := range cells {
		if got := normalizeCell(c.c, c.v, "abc123"); got != c.want {
			t.Errorf("cell %s %v: %v, want %v", c.c.Name, c.v, got, c.want)
		}
	}
}

func TestEncodeAndDiff(t *testing.T) {
	s := &Served{Source: "v1.36.3", Resources: []Resource{
		{Version: "v1", Resource: "pods", Kind: "Pod", Namespaced: true, Verbs: []string{"get"}},
		{Group: "apps", Version: "v1", Resource: "deployments", Kind: "Deployment", Verbs: []string{"get"}},
	}}
	want := s.Encode()
	var back Served
	if err := json.Unmarshal(want, &back); err != nil || len(back.Resources) != 2 || back.Resources[1].Key() != "apps/v1/deployments" {
		t.Fatalf("decoded %+v, %v", back, err)
	}
	if d := Diff(want, want); len(d) != 0 {
		t.Errorf("a recording differs from itself: %v", d)
	}
	s.Resources[0].Verbs = []string{"get", "list"}
	s.Resources = append(s.Resources[:1], Resource{Group: "batch", Version: "v1", Resource: "jobs", Kind: "Job"})
	d := Diff(want, s.Encode())
	if len(d) != 3 || !strings.HasPrefix(d[0], "/v1/pods differs") || !strings.HasPrefix(d[1], "missing apps/v1/deployments") ||
		!strings.HasPrefix(d[2], "unexpected batch/v1/jobs") {
		t.Errorf("diff:\n%s", strings.Join(d, "\n"))
	}
	o := &Objects{Source: "v1.36.3", Objects: []Object{{Key: "b", Status: 201}, {Key: "a", Status: 201}}}
	if d := Diff(o.Encode(), (&Objects{Source: "v1.36.3", Objects: []Object{{Key: "a", Status: 201}, {Key: "b", Status: 422}}}).Encode()); len(d) != 1 || !strings.HasPrefix(d[0], "b differs") {
		t.Errorf("objects diff: %v", d)
	}
}
