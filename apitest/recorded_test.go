package apitest_test

import (
	"os"
	"strings"
	"testing"

	"github.com/informerkit/informerkit/apitest"
	"github.com/informerkit/informerkit/internal/kuberecord"
)

// TestMatchesRecordedKubeAPIServer records apitest as e2e's TestKubeAPIServerRecording
// records the real kube-apiserver (internal/kuberecord: discovery, Table columns, and what
// a create of one stub of every stored resource answers) and compares the two.
func TestMatchesRecordedKubeAPIServer(t *testing.T) {
	s := apitest.NewServerWithOptions(apitest.Options{TLS: true})
	defer s.Close()
	c := s.Client()
	defer c.CloseIdleConnections()
	target := kuberecord.Target{URL: s.URL, Client: c}
	served, err := kuberecord.RecordServed(t.Context(), target)
	if err != nil {
		t.Fatal(err)
	}
	stubs, err := kuberecord.ReadStubs("../testdata/kube-apiserver/stubs.json")
	if err != nil {
		t.Fatal(err)
	}
	objects, err := kuberecord.RecordObjects(t.Context(), target, stubs, served)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range []struct {
		path string
		got  []byte
	}{{"served.json", served.Encode()}, {"objects.json", objects.Encode()}} {
		want, err := os.ReadFile("../testdata/kube-apiserver/" + f.path)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range kuberecord.Diff(want, f.got) {
			key, _, _ := strings.Cut(d, " ")
			if why, ok := recordedDifferences[key]; ok {
				t.Logf("known difference (%s): %s", why, d)
				continue
			}
			t.Errorf("%s: %s", f.path, d)
		}
	}
}

// recordedDifferences are the keys whose lines differ from the kube-apiserver's recording,
// with why (each is in docs/apitest.md's differences).
var recordedDifferences = map[string]string{
	"source": "apitest's version",
	// CustomResourceDefinitions are served from JSON without a schema of their own: the
	// field manager sees spec as a map (its "." entries).
	"apiextensions.k8s.io/v1/customresourcedefinitions": "managedFields of a CRD",
	// A write at autoscaling/v1 is recorded in managedFields at the storage version.
	"autoscaling/v1/horizontalpodautoscalers": "managedFields of a non-storage version's write",
	// The requester's identity (username, groups, uid) is not filled in by apitest.
	"certificates.k8s.io/v1/certificatesigningrequests": "CSR requester",
	// Empty lists sent ([]) are not owned in managedFields (decoding drops them).
	"discovery.k8s.io/v1/endpointslices": "managedFields of empty lists",
}
