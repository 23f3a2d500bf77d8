package share

import (
	"encoding/json"
	"reflect"
	"testing"
)

// ShareLike shares an update with the version it replaces: what did not change becomes the
// old version's (without the table), what changed is shared as Share shares it, the value
// is what was decoded, and the old version is not written.
func TestShareLikeTakesWhatDidNotChange(t *testing.T) {
	sh := &Sharer[*sPod]{newSharer(reflect.TypeFor[*sPod]())}
	old := sh.Share(decodePod(t, deploymentPodJSON(1, 1)))
	before, _ := json.Marshal(old)
	other := sh.Share(decodePod(t, deploymentPodJSON(1, 2)))

	upd := decodePod(t, deploymentPodJSON(1, 1))
	upd.Annotations["new"] = "yes"
	upd.Status.Phase = "Succeeded"
	upd.Spec.Containers[0].Env[0].Value = "debug"
	want := decodePod(t, deploymentPodJSON(1, 1))
	want.Annotations["new"] = "yes"
	want.Status.Phase = "Succeeded"
	want.Spec.Containers[0].Env[0].Value = "debug"

	got := sh.ShareLike(upd, old)
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("the update changed:\n got %+v\nwant %+v", got, want)
	}
	if after, _ := json.Marshal(old); string(after) != string(before) {
		t.Fatalf("the old version was written:\n%s\n%s", before, after)
	}
	for what, same := range map[string]bool{
		"labels (unchanged)":           mapPtr(got.Labels) == mapPtr(old.Labels),
		"owner references (unchanged)": sliceData(got.OwnerReferences) == sliceData(old.OwnerReferences),
		"volumes (unchanged)":          sliceData(got.Spec.Volumes) == sliceData(old.Spec.Volumes),
		"conditions (unchanged)":       sliceData(got.Status.Conditions) == sliceData(old.Status.Conditions),
		"name (unchanged)":             sameString(got.Name, old.Name),
		"phase (changed)":              !sameString(got.Status.Phase, old.Status.Phase),
		"annotations (changed)":        mapPtr(got.Annotations) != mapPtr(old.Annotations),
		"containers (changed)":         sliceData(got.Spec.Containers) != sliceData(old.Spec.Containers),
		// Inside the changed container, the unchanged ports are the other pod's, which the
		// table holds: the changed parts were shared through it.
		"ports in the changed container": sliceData(got.Spec.Containers[0].Ports) == sliceData(other.Spec.Containers[0].Ports),
	} {
		if !same {
			t.Errorf("%s: not as expected", what)
		}
	}
}
