package descriptions

import (
	"strings"
	"testing"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestDescriptions(t *testing.T) {
	if d := Type("io.k8s.api.core.v1.Pod"); !strings.HasPrefix(d, "Pod is a collection of containers") {
		t.Errorf("Pod: %q", d)
	}
	if d := Field("io.k8s.api.core.v1.PodSpec", "nodeName"); !strings.Contains(d, "node") {
		t.Errorf("PodSpec.nodeName: %q", d)
	}
	if d := Column("apps", "deployments", "Up-to-date"); d == "" {
		t.Error("no description of the Up-to-date column of deployments")
	}
	if Type("io.k8s.api.core.v1.NoSuchType") != "" || Field("io.k8s.api.core.v1.Pod", "nosuchfield") != "" {
		t.Error("a description of something that does not exist")
	}
	// Every line decodes.
	indexOnce.Do(index)
	for name := range lines {
		of(name)
	}
	if len(lines) < 400 {
		t.Errorf("%d described types", len(lines))
	}
}
