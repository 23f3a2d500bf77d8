package e2e

import (
	"bytes"
	"encoding/json"
	"net/http"
	"os"
	"strings"
	"testing"

	"github.com/informerkit/informerkit/e2e/cluster"
	"github.com/informerkit/informerkit/internal/kuberecord"
)

// recordingDir holds the recording of the kube-apiserver that apitest's resource table is
// generated from (e2e/tools/schemagen reads served.json) and that apitest's tests compare
// apitest with.
const recordingDir = "../testdata/kube-apiserver/"

// TestKubeAPIServerRecording records the real kube-apiserver with kuberecord (discovery,
// Table columns, and what it makes of one stub of every stored resource) and fails when
// the recording differs from testdata/kube-apiserver: a new release, or a flag of the e2e
// cluster, changed what the server serves. INFORMERKIT_UPDATE_RECORDING=1 rewrites the
// files instead; then run `make schema` to regenerate apitest's table from them.
func TestKubeAPIServerRecording(t *testing.T) {
	c := cluster.ForTest(t)
	target := kuberecord.Target{URL: c.URL, Client: c.HTTPClient(), SkipGroup: customGroups(t, c)}
	served, err := kuberecord.RecordServed(t.Context(), target)
	if err != nil {
		t.Fatal(err)
	}
	if rec := recordedSource(t, recordingDir+"served.json"); rec != served.Source && os.Getenv("INFORMERKIT_UPDATE_RECORDING") == "" {
		// E2E_RELEASE=1.36: the recording is the pinned release's, not this one's.
		t.Skipf("the recording is of kube-apiserver %s, this cluster is %s: not compared", rec, served.Source)
	}
	stubs, err := kuberecord.ReadStubs(recordingDir + "stubs.json")
	if err != nil {
		t.Fatal(err)
	}
	objects, err := kuberecord.RecordObjects(t.Context(), target, stubs, served)
	if err != nil {
		t.Fatal(err)
	}
	checkRecording(t, recordingDir+"served.json", served.Encode())
	checkRecording(t, recordingDir+"objects.json", objects.Encode())
}

// customGroups reports the groups served by CustomResourceDefinitions (other tests').
func customGroups(t *testing.T, c *cluster.Cluster) func(string) bool {
	var crds struct {
		Items []struct {
			Spec struct {
				Group string `json:"group"`
			} `json:"spec"`
		} `json:"items"`
	}
	do(t, c, http.MethodGet, "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", nil, http.StatusOK, &crds)
	custom := map[string]bool{}
	for _, crd := range crds.Items {
		custom[crd.Spec.Group] = true
	}
	return func(g string) bool { return custom[g] }
}

// recordedSource returns the release a recording was made from (its "source").
func recordedSource(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (INFORMERKIT_UPDATE_RECORDING=1 records it)", err)
	}
	var rec struct {
		Source string `json:"source"`
	}
	if err := json.Unmarshal(b, &rec); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return rec.Source
}

func checkRecording(t *testing.T, path string, got []byte) {
	t.Helper()
	if os.Getenv("INFORMERKIT_UPDATE_RECORDING") != "" {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		t.Logf("wrote %s (%d bytes)", path, len(got))
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (INFORMERKIT_UPDATE_RECORDING=1 records it)", err)
	}
	if bytes.Equal(want, got) {
		return
	}
	t.Errorf("%s is not what the kube-apiserver serves (INFORMERKIT_UPDATE_RECORDING=1 records it again, then make schema):\n%s",
		path, strings.Join(kuberecord.Diff(want, got), "\n"))
}
