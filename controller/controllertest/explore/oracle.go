package explore

import (
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/informerkit/informerkit/apitest"
)

// The oracles after a run: the end state and the history of creations and deletions,
// normalised, compared with the reference run's. (Invariants are checked during the run,
// liveness by the driver.)

// An Invariant is a property of the server's state that must hold after every change
// committed during a run ("never more than one unavailable Pod", "a Pod is never deleted
// without annotation X"); Check returns the violation.
type Invariant struct {
	Name  string
	Check func(*State) error
}

// snapshot is a run's end state, normalised: "resource namespace/name" → objects (several
// when generated names normalise alike), each as canonical JSON.
type snapshot map[string][]string

// Normalizer changes an object (its JSON form) before end states are compared, for fields
// a run may set differently without a bug; the default one has already run.
type Normalizer func(resource string, obj map[string]any)

func (j *journal) endState(ignore map[string]bool, extra Normalizer) snapshot {
	out := snapshot{}
	for res, objs := range j.cur {
		if j.quiet[res] || ignore[res] {
			continue
		}
		for k, raw := range objs {
			var m map[string]any
			if json.Unmarshal(raw, &m) != nil {
				continue
			}
			name := normalizeObject(m)
			if extra != nil {
				extra(res, m)
			}
			b, _ := json.Marshal(m)
			key := res + " " + objectName(k.namespace, name)
			out[key] = append(out[key], string(b))
		}
	}
	for _, v := range out {
		sort.Strings(v)
	}
	return out
}

// deletions counts, per object (normalised key), the deletions the controller began during
// the run: its DELETEs of an object the server held and was not deleting yet, answered
// 2xx or committed and never answered (a crash, a lost answer). Deletions by the workload
// or the garbage collector are not the controller's doing, and a second DELETE of an object
// already terminating (a grace period cut short) begins nothing: not counted. Nor are
// objects with generated names: one replica is as good as another, their number is the end
// state's to check, and a surplus made on a stale view or after an unanswered create and
// deleted again is how replica controllers (the ReplicaSet's) converge.
func (r *runResult) deletions(ignore map[string]bool) map[string]int {
	out := map[string]int{}
	for _, w := range r.writes {
		if w.w.Verb != apitest.VerbDelete || w.w.Name == "" || r.jr.quiet[w.w.Resource] || ignore[w.w.Resource] {
			continue
		}
		var rv uint64
		fmt.Sscan(w.w.ServerRV, &rv)
		raw, live := r.jr.at(objKey{w.w.Resource, w.w.Namespace, w.w.Name}, rv)
		live = live && !terminating(raw)
		switch w.action {
		case apitest.WriteProceed:
			code := r.codes[w.w.Seq]
			live = live && code >= 200 && code < 300
		case apitest.WriteKillAfter, apitest.WriteLostAnswer:
		default:
			live = false
		}
		if live && r.jr.stableName(w.w.Resource, w.w.Namespace, w.w.Name) == w.w.Name {
			out[w.w.Resource+" "+objectName(w.w.Namespace, w.w.Name)]++
		}
	}
	return out
}

// volatile are the fields whose values say when or in which order things happened, not what:
// removed before comparing.
var volatile = map[string]bool{"uid": true, "resourceVersion": true, "creationTimestamp": true, "managedFields": true,
	"generation": true, "observedGeneration": true, "selfLink": true, "podIP": true, "podIPs": true, "hostIP": true,
	"hostIPs": true, "containerID": true, "imageID": true}

// normalizeObject removes volatile fields, replaces timestamps with "<time>" and returns the
// object's name, generated names as their prefix and "*".
func normalizeObject(m map[string]any) string {
	md, _ := m["metadata"].(map[string]any)
	name, _ := md["name"].(string)
	if g, _ := md["generateName"].(string); g != "" && strings.HasPrefix(name, g) {
		name = g + "*"
		md["name"] = name
	}
	normalizeValue(m)
	return name
}

func normalizeValue(v any) any {
	switch v := v.(type) {
	case map[string]any:
		for k, x := range v {
			if volatile[k] {
				delete(v, k)
				continue
			}
			v[k] = normalizeValue(x)
		}
	case []any:
		for i, x := range v {
			v[i] = normalizeValue(x)
		}
	case string:
		if len(v) >= 20 && v[4] == '-' && v[10] == 'T' {
			if _, err := time.Parse(time.RFC3339, v); err == nil {
				return "<time>"
			}
		}
	}
	return v
}

// diff lists how got differs from want, one line per object (at most limit lines).
func diffSnapshots(want, got snapshot, limit int) []string {
	keys := map[string]bool{}
	for k := range want {
		keys[k] = true
	}
	for k := range got {
		keys[k] = true
	}
	sorted := make([]string, 0, len(keys))
	for k := range keys {
		sorted = append(sorted, k)
	}
	sort.Strings(sorted)
	var out []string
	for _, k := range sorted {
		w, g := want[k], got[k]
		switch {
		case slices.Equal(w, g):
			continue
		case len(w) == 0:
			out = append(out, fmt.Sprintf("%s: not in the reference run's end state (%d here)", k, len(g)))
		case len(g) == 0:
			out = append(out, fmt.Sprintf("%s: missing (in the reference run's end state)", k))
		case len(w) != len(g):
			out = append(out, fmt.Sprintf("%s: %d objects, %d in the reference run", k, len(g), len(w)))
		default:
			for i := range w {
				if w[i] != g[i] {
					out = append(out, fmt.Sprintf("%s: %s", k, fieldDiff(w[i], g[i])))
				}
			}
		}
	}
	if len(out) > limit {
		out = append(out[:limit], fmt.Sprintf("... and %d more", len(out)-limit))
	}
	return out
}

// fieldDiff says which fields of two objects (JSON) differ: "spec.replicas: 3 (reference 1)".
func fieldDiff(want, got string) string {
	var w, g any
	json.Unmarshal([]byte(want), &w)
	json.Unmarshal([]byte(got), &g)
	var parts []string
	walkDiff("", w, g, &parts)
	if len(parts) > 4 {
		parts = append(parts[:4], fmt.Sprintf("and %d more fields", len(parts)-4))
	}
	return strings.Join(parts, "; ")
}

func walkDiff(path string, w, g any, out *[]string) {
	wm, wok := w.(map[string]any)
	gm, gok := g.(map[string]any)
	if wok && gok {
		keys := map[string]bool{}
		for k := range wm {
			keys[k] = true
		}
		for k := range gm {
			keys[k] = true
		}
		sorted := make([]string, 0, len(keys))
		for k := range keys {
			sorted = append(sorted, k)
		}
		sort.Strings(sorted)
		for _, k := range sorted {
			p := k
			if path != "" {
				p = path + "." + k
			}
			walkDiff(p, wm[k], gm[k], out)
		}
		return
	}
	wb, _ := json.Marshal(w)
	gb, _ := json.Marshal(g)
	if string(wb) != string(gb) {
		*out = append(*out, fmt.Sprintf("%s: %s (reference %s)", path, clip(string(gb)), clip(string(wb))))
	}
}

func clip(s string) string {
	if len(s) > 120 {
		return s[:117] + "..."
	}
	return s
}

// moreDeletions lists the objects deleted more often in got than in want.
func moreDeletions(want, got map[string]int) []string {
	var out []string
	for k, n := range got {
		if n > want[k] {
			out = append(out, fmt.Sprintf("%s deleted by the controller %d times (%d in the reference run)", k, n, want[k]))
		}
	}
	sort.Strings(out)
	return out
}

// terminating reports whether the object (JSON) has a deletionTimestamp.
func terminating(raw json.RawMessage) bool {
	var m struct {
		Metadata struct {
			DeletionTimestamp *string `json:"deletionTimestamp"`
		} `json:"metadata"`
	}
	return json.Unmarshal(raw, &m) == nil && m.Metadata.DeletionTimestamp != nil
}
