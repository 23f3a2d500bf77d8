package apitest

import (
	"fmt"
	"regexp"
	"strconv"

	"github.com/informerkit/informerkit/internal/kubeschema"
)

// The kube-apiserver releases apitest answers as. Where 1.36 and 1.37 differ on the wire,
// Options.KubernetesVersion selects the answer; the default is the release the schema table
// (internal/kubeschema) was recorded from, so that apitest and the e2e reference agree.
// What 1.37 changed, each checked against the real server by e2e: a streaming list is
// gzipped when asked (WatchListCompression), a patch body is checked before the object is
// read (other error messages), and a shard selector counts as a selector (no
// remainingItemCount on a sharded page).
const (
	minRelease = 36
	maxRelease = 37
)

// releaseRE matches "v1.37", "1.37.2", "v1.36.3-apitest"...
var releaseRE = regexp.MustCompile(`^v?1\.(\d+)(\.(\d+))?(-.*)?$`)

// recordedRE finds the release in kubeschema.Source ("... recorded from kube-apiserver v1.36.3").
var recordedRE = regexp.MustCompile(`recorded from kube-apiserver (v1\.\d+\.\d+)`)

// release is a kube-apiserver release apitest answers as.
type release struct {
	minor int
	git   string // "v1.37.2": /version's gitVersion without "-apitest", and the kubelets'
}

// parseRelease reads Options.KubernetesVersion ("" for the recorded release).
func parseRelease(v string) (release, error) {
	if v == "" {
		m := recordedRE.FindStringSubmatch(kubeschema.Source())
		if m == nil {
			return release{}, fmt.Errorf("apitest: the schema table names no recorded release: %q", kubeschema.Source())
		}
		v = m[1]
	}
	m := releaseRE.FindStringSubmatch(v)
	if m == nil {
		return release{}, fmt.Errorf("apitest: KubernetesVersion %q is not a release such as v1.37.2", v)
	}
	minor, _ := strconv.Atoi(m[1])
	if minor < minRelease || minor > maxRelease {
		return release{}, fmt.Errorf("apitest: KubernetesVersion %q: apitest answers as 1.%d to 1.%d", v, minRelease, maxRelease)
	}
	patch := m[3]
	if patch == "" {
		patch = "0"
	}
	return release{minor: minor, git: fmt.Sprintf("v1.%d.%s", minor, patch)}, nil
}

// versionInfo is what /version reports.
func (rel release) versionInfo() map[string]string {
	return map[string]string{
		"major":        "1",
		"minor":        strconv.Itoa(rel.minor),
		"gitVersion":   rel.git + "-apitest",
		"gitCommit":    "0000000000000000000000000000000000000000",
		"gitTreeState": "clean",
		"buildDate":    "2026-01-01T00:00:00Z",
		"goVersion":    "go1.26",
		"compiler":     "gc",
		"platform":     "linux/amd64",
	}
}

// gzipsStreamingLists: 1.37 gzips a streaming list when asked (WatchListCompression).
func (rel release) gzipsStreamingLists() bool { return rel.minor >= 37 }

// checksPatchBodies: 1.37 checks a patch body before it reads the object.
func (rel release) checksPatchBodies() bool { return rel.minor >= 37 }

// shardSelectorFilters: from 1.37 a shard selector counts as a selector
// (SelectionPredicate.Empty), so that a sharded page has no remainingItemCount.
func (rel release) shardSelectorFilters() bool { return rel.minor >= 37 }

// DefaultKubernetesVersion returns the kube-apiserver release a server answers as when
// Options.KubernetesVersion is empty ("v1.37.2"): the release apitest's schema table was
// recorded from, the reference of informerkit's e2e tests.
func DefaultKubernetesVersion() string {
	rel, err := parseRelease("")
	if err != nil {
		panic(err) // the embedded table names its release; kubeschema's tests check it
	}
	return rel.git
}
