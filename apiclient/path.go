package apiclient

import (
	"net/url"
	"strings"

	"github.com/informerkit/informerkit/meta"
)

// groupVersionPath returns the API root of a group version: "/api/v1" for the core group,
// "/apis/<group>/<version>" otherwise.
func groupVersionPath(gv meta.GroupVersion) string {
	if gv.Group == "" {
		return "/api/" + gv.Version
	}
	return "/apis/" + gv.Group + "/" + gv.Version
}

// resourcePath returns the API path of a collection, an object or an object's subresource:
//
//	resourcePath(gvr, "", "")                 /apis/apps/v1/deployments (all namespaces)
//	resourcePath(gvr, "ns", "")               /apis/apps/v1/namespaces/ns/deployments
//	resourcePath(gvr, "ns", "web", "status")  /apis/apps/v1/namespaces/ns/deployments/web/status
//
// Segments are path-escaped. A cluster-scoped resource is addressed with namespace "".
func resourcePath(gvr meta.GroupVersionResource, namespace, name string, subresources ...string) string {
	var b strings.Builder
	b.Grow(64)
	b.WriteString(groupVersionPath(gvr.GroupVersion()))
	if namespace != "" {
		b.WriteString("/namespaces/")
		b.WriteString(url.PathEscape(namespace))
	}
	b.WriteByte('/')
	b.WriteString(gvr.Resource)
	if name != "" {
		b.WriteByte('/')
		b.WriteString(url.PathEscape(name))
	}
	for _, s := range subresources {
		if s == "" {
			continue
		}
		b.WriteByte('/')
		b.WriteString(url.PathEscape(s))
	}
	return b.String()
}
