package apitest_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/informerkit/informerkit/apitest"
	"github.com/informerkit/informerkit/internal/kubeschema"
)

// TestKubernetesVersionSelectsTheAnswers: /version names the release asked for (default
// the recorded one), and a patch body that is not JSON is refused before the object is read
// as 1.37 does ("invalid JSON patch", even for an object that does not exist), where 1.36
// reads the object first (404) and its decoder names the error.
func TestKubernetesVersionSelectsTheAnswers(t *testing.T) {
	for _, tc := range []struct {
		release, minor, git string
		badPatch            int // status of a bad merge patch of a missing object
		badPatchMsg         string
	}{
		{"v1.36.3", "36", "v1.36.3-apitest", http.StatusNotFound, `configmaps "missing" not found`},
		{"1.37", "37", "v1.37.0-apitest", http.StatusBadRequest, "invalid JSON patch"},
		{"v1.37.2", "37", "v1.37.2-apitest", http.StatusBadRequest, "invalid JSON patch"},
	} {
		t.Run("release="+tc.release, func(t *testing.T) {
			s := apitest.NewServerWithOptions(apitest.Options{KubernetesVersion: tc.release})
			defer s.Close()
			var v map[string]string
			if code, b := send(t, s, http.MethodGet, "/version", ""); code != http.StatusOK || json.Unmarshal(b, &v) != nil {
				t.Fatalf("/version: %d %s", code, b)
			}
			if v["minor"] != tc.minor || v["gitVersion"] != tc.git {
				t.Errorf("/version minor %q gitVersion %q, want %q %q", v["minor"], v["gitVersion"], tc.minor, tc.git)
			}
			code, b := send(t, s, http.MethodPatch, "/api/v1/namespaces/default/configmaps/missing", "{not json")
			var st struct{ Message string }
			json.Unmarshal(b, &st)
			if code != tc.badPatch || st.Message != tc.badPatchMsg {
				t.Errorf("bad patch: %d %q, want %d %q", code, st.Message, tc.badPatch, tc.badPatchMsg)
			}
		})
	}
}

// TestKubernetesVersionDefaultsToTheRecordedRelease: without KubernetesVersion the server
// answers as the kube-apiserver its schema table was recorded from.
func TestKubernetesVersionDefaultsToTheRecordedRelease(t *testing.T) {
	s := apitest.NewServer()
	defer s.Close()
	var v map[string]string
	if code, b := send(t, s, http.MethodGet, "/version", ""); code != http.StatusOK || json.Unmarshal(b, &v) != nil {
		t.Fatalf("/version: %d %s", code, b)
	}
	if want := "recorded from kube-apiserver " + strings.TrimSuffix(v["gitVersion"], "-apitest"); !strings.HasSuffix(kubeschema.Source(), want) {
		t.Errorf("/version %q; the schema table: %q", v["gitVersion"], kubeschema.Source())
	}
}

// TestKubernetesVersionRefusesOtherReleases: a release apitest does not answer as is an
// error of Start, not a silent default.
func TestKubernetesVersionRefusesOtherReleases(t *testing.T) {
	for _, v := range []string{"v1.35.0", "v1.38.1", "2.0", "latest"} {
		s, err := apitest.Start(apitest.Options{KubernetesVersion: v})
		if err == nil {
			s.Close()
			t.Errorf("KubernetesVersion %q: Start succeeded", v)
		} else if !strings.Contains(err.Error(), v) {
			t.Errorf("KubernetesVersion %q: error %q does not name it", v, err)
		}
	}
}

// send sends a request with a JSON merge patch or no body and returns the status and body.
func send(t *testing.T, s *apitest.Server, method, path, body string) (int, []byte) {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), method, s.URL+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/merge-patch+json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, b
}

// A server answers as the release of its schema table unless Options.KubernetesVersion
// names another one that apitest serves.
func ExampleDefaultKubernetesVersion() {
	fmt.Println(apitest.DefaultKubernetesVersion())
	old := apitest.NewServerWithOptions(apitest.Options{KubernetesVersion: "v1.36.3"})
	defer old.Close()
	resp, err := http.Get(old.URL + "/version")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer resp.Body.Close()
	var v struct{ GitVersion string }
	json.NewDecoder(resp.Body).Decode(&v)
	fmt.Println(v.GitVersion)
	// Output:
	// v1.37.2
	// v1.36.3-apitest
}
