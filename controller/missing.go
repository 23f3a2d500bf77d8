package controller

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/informerkit/informerkit/apiclient"
	"github.com/informerkit/informerkit/kinds"
	"github.com/informerkit/informerkit/meta"
)

// DefaultMissingResourceTimeout is the default of ManagerOptions.MissingResourceTimeout.
const DefaultMissingResourceTimeout = 5 * time.Second

// missingCheckInterval is how often Start reads discovery while an informer has not synced.
const missingCheckInterval = time.Second

// MissingResourceError: informers the Manager started watch resources the API server does
// not serve (a CRD not installed, a version the CRD does not serve, an API group turned off).
// Start returns it after ManagerOptions.MissingResourceTimeout instead of waiting for
// CacheSyncTimeout to say only that the caches did not sync.
type MissingResourceError struct {
	// Resources are the resources not served, sorted.
	Resources []MissingResource
}

// MissingResource is one resource a MissingResourceError names.
type MissingResource struct {
	meta.GroupVersionResource
	// Versions are the versions of the group the server does serve (none if the group is
	// not served at all).
	Versions []string
}

// String reads "widgets.example.com is not served: is its CRD installed?", or for a
// version the server does not serve "widgets.example.com/v2 is not served (example.com
// serves v1): is its CRD up to date?".
func (r MissingResource) String() string {
	name := r.Resource
	if r.Group != "" {
		name += "." + r.Group
	}
	builtin := slices.ContainsFunc(kinds.Builtin(), func(i kinds.Info) bool { return i.Group == r.Group })
	switch {
	case len(r.Versions) > 0 && builtin:
		return fmt.Sprintf("%s/%s is not served (%s serves %s): does this Kubernetes release serve it?", name, r.Version, groupName(r.Group), strings.Join(r.Versions, ", "))
	case len(r.Versions) > 0:
		return fmt.Sprintf("%s/%s is not served (%s serves %s): is its CRD up to date?", name, r.Version, groupName(r.Group), strings.Join(r.Versions, ", "))
	case builtin:
		return name + " is not served: is its API group enabled on this server?"
	}
	return name + " is not served: is its CRD installed?"
}

func groupName(g string) string {
	if g == "" {
		return "the core group"
	}
	return g
}

// Error names every resource.
func (e *MissingResourceError) Error() string {
	parts := make([]string, len(e.Resources))
	for i, r := range e.Resources {
		parts[i] = r.String()
	}
	return "controller: " + strings.Join(parts, "; ")
}

// checkServed reads discovery every missingCheckInterval while informers have not synced,
// and returns a *MissingResourceError once the resource of one of them has been missing for
// MissingResourceTimeout; nil when ctx ends or every informer has synced. A group version
// whose discovery fails for another reason than 404 counts as served: only the informers'
// sync timeout judges it.
func (m *Manager) checkServed(ctx context.Context) error {
	missingSince := map[meta.GroupVersionResource]time.Time{}
	timer := time.NewTimer(missingCheckInterval)
	defer timer.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-timer.C:
		}
		pending := map[meta.GroupVersionResource]bool{}
		for _, inf := range m.factory.Informers() {
			if gvr, ok := m.factory.ResourceOf(inf); ok && !inf.HasSynced() {
				pending[gvr] = true
			}
		}
		if len(pending) == 0 {
			return nil
		}
		now := time.Now()
		var missing []MissingResource
		for gvr := range pending {
			versions, served := servedVersions(ctx, m.client, gvr)
			if served {
				delete(missingSince, gvr)
				continue
			}
			if _, ok := missingSince[gvr]; !ok {
				missingSince[gvr] = now
				m.log.Info("a resource an informer watches is not served", "resource", gvr.String(), "failingAfter", m.opts.MissingResourceTimeout)
			}
			if now.Sub(missingSince[gvr]) >= m.opts.MissingResourceTimeout {
				missing = append(missing, MissingResource{GroupVersionResource: gvr, Versions: versions})
			}
		}
		if len(missing) > 0 {
			slices.SortFunc(missing, func(a, b MissingResource) int { return strings.Compare(a.String(), b.String()) })
			return &MissingResourceError{Resources: missing}
		}
		timer.Reset(missingCheckInterval)
	}
}

// servedVersions asks discovery whether gvr is served; when it is not, it returns the
// versions its group serves. Anything but a clear answer (a 404, or a resource list without
// the resource) counts as served.
func servedVersions(ctx context.Context, api *apiclient.Client, gvr meta.GroupVersionResource) (versions []string, served bool) {
	path := "/apis/" + gvr.Group + "/" + gvr.Version
	if gvr.Group == "" {
		path = "/api/" + gvr.Version
	}
	body, err := api.Do(ctx, apiclient.Request{Method: http.MethodGet, Path: path})
	if err == nil {
		var list struct {
			Resources []struct {
				Name string `json:"name"`
			} `json:"resources"`
		}
		if json.Unmarshal(body, &list) != nil {
			return nil, true
		}
		for _, r := range list.Resources {
			if r.Name == gvr.Resource {
				return nil, true
			}
		}
		return nil, false // the group version is served, without this resource
	} else if !meta.IsNotFound(err) {
		return nil, true
	}
	if gvr.Group == "" {
		return nil, false
	}
	body, err = api.Do(ctx, apiclient.Request{Method: http.MethodGet, Path: "/apis"})
	if err != nil {
		return nil, false
	}
	var groups struct {
		Groups []struct {
			Name     string `json:"name"`
			Versions []struct {
				Version string `json:"version"`
			} `json:"versions"`
		} `json:"groups"`
	}
	_ = json.Unmarshal(body, &groups)
	for _, g := range groups.Groups {
		if g.Name != gvr.Group {
			continue
		}
		for _, v := range g.Versions {
			if v.Version != gvr.Version {
				versions = append(versions, v.Version)
			}
		}
	}
	return versions, false
}
