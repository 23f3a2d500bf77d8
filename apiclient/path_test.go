package apiclient

import (
	"testing"

	"github.com/informerkit/informerkit/internal/testobj"
	"github.com/informerkit/informerkit/meta"
)

func TestResourcePath(t *testing.T) {
	deploy := meta.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}
	for _, c := range []struct{ got, want string }{
		{resourcePath(deploy, "", ""), "/apis/apps/v1/deployments"},
		{resourcePath(deploy, "ns", ""), "/apis/apps/v1/namespaces/ns/deployments"},
		{resourcePath(deploy, "ns", "web", "status"), "/apis/apps/v1/namespaces/ns/deployments/web/status"},
		{resourcePath(testobj.PodGVR, "", "n1"), "/api/v1/pods/n1"},
		{resourcePath(testobj.PodGVR, "a b", "x/y"), "/api/v1/namespaces/a%20b/pods/x%2Fy"},
	} {
		if c.got != c.want {
			t.Errorf("got %s, want %s", c.got, c.want)
		}
	}
}
