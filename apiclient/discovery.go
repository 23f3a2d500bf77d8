package apiclient

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/informerkit/informerkit/meta"
)

// ErrUnknownResource is wrapped by the error of a resolution that no served resource
// matches, even after the discovery cache was refreshed.
var ErrUnknownResource = errors.New("unknown resource")

// APIResource describes one resource collection the server serves, from discovery.
type APIResource struct {
	meta.GroupVersionResource
	// Kind is the kind of the objects in the collection.
	Kind string
	// Namespaced is true for namespaced resources (pods), false for cluster-scoped ones
	// (nodes, namespaces, CRDs).
	Namespaced   bool
	SingularName string
	ShortNames   []string
	Verbs        []string
	// Preferred is true if Version is the group's preferred version.
	Preferred bool
}

// GroupVersionKind returns the group, version and kind of the resource's objects.
func (r APIResource) GroupVersionKind() meta.GroupVersionKind {
	return meta.GroupVersionKind{Group: r.Group, Version: r.Version, Kind: r.Kind}
}

// discoveryCache holds the resources the server serves; it is filled on first use and
// refreshed when a resolution misses.
type discoveryCache struct {
	mu        sync.Mutex
	resources []APIResource // core first, then groups in server order; preferred versions first
	loaded    bool
}

// discovery wire formats (legacy discovery: /api, /apis, /api/v1, /apis/<g>/<v>).
type apiVersionsDoc struct {
	Versions []string `json:"versions"`
}

type groupVersionDoc struct {
	GroupVersion string `json:"groupVersion"`
	Version      string `json:"version"`
}

type apiGroupListDoc struct {
	Groups []struct {
		Name             string            `json:"name"`
		Versions         []groupVersionDoc `json:"versions"`
		PreferredVersion groupVersionDoc   `json:"preferredVersion"`
	} `json:"groups"`
}

type apiResourceListDoc struct {
	GroupVersion string `json:"groupVersion"`
	Resources    []struct {
		Name         string   `json:"name"`
		SingularName string   `json:"singularName"`
		Namespaced   bool     `json:"namespaced"`
		Kind         string   `json:"kind"`
		Verbs        []string `json:"verbs"`
		ShortNames   []string `json:"shortNames"`
	} `json:"resources"`
}

// ServerResources returns every resource collection the server serves (subresources
// excluded), from the discovery cache, filling it on first use. Groups whose discovery
// fails (an unavailable aggregated API) are skipped; their error is returned along with
// the resources that could be read.
func (c *Client) ServerResources(ctx context.Context) ([]APIResource, error) {
	c.discovery.mu.Lock()
	defer c.discovery.mu.Unlock()
	if c.discovery.loaded {
		return c.discovery.resources, nil
	}
	res, err := c.fetchResources(ctx)
	if res != nil {
		c.discovery.resources, c.discovery.loaded = res, true
	}
	return res, err
}

// InvalidateDiscovery drops the discovery cache; the next resolution reads it again.
func (c *Client) InvalidateDiscovery() {
	c.discovery.mu.Lock()
	c.discovery.loaded, c.discovery.resources = false, nil
	c.discovery.mu.Unlock()
}

func (c *Client) getJSON(ctx context.Context, path string, out any) error {
	body, err := c.do(ctx, Request{Method: "GET", Path: path})
	if err != nil {
		return err
	}
	if err := json.Unmarshal(body, out); err != nil {
		return fmt.Errorf("apiclient: discovery %s: %w", path, err)
	}
	return nil
}

func (c *Client) fetchResources(ctx context.Context) ([]APIResource, error) {
	type job struct {
		gv        meta.GroupVersion
		preferred bool
	}
	var jobs []job
	var core apiVersionsDoc
	if err := c.getJSON(ctx, "/api", &core); err != nil {
		return nil, err
	}
	for i, v := range core.Versions {
		jobs = append(jobs, job{meta.GroupVersion{Version: v}, i == 0})
	}
	var groups apiGroupListDoc
	if err := c.getJSON(ctx, "/apis", &groups); err != nil {
		return nil, err
	}
	for _, g := range groups.Groups {
		pref := g.PreferredVersion.Version
		if pref == "" && len(g.Versions) > 0 {
			pref = g.Versions[0].Version
		}
		jobs = append(jobs, job{meta.GroupVersion{Group: g.Name, Version: pref}, true})
		for _, v := range g.Versions {
			if v.Version != pref {
				jobs = append(jobs, job{meta.GroupVersion{Group: g.Name, Version: v.Version}, false})
			}
		}
	}
	results := make([][]APIResource, len(jobs))
	errs := make([]error, len(jobs))
	sem := make(chan struct{}, 8)
	var wg sync.WaitGroup
	for i, j := range jobs {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			var doc apiResourceListDoc
			if err := c.getJSON(ctx, groupVersionPath(j.gv), &doc); err != nil {
				errs[i] = fmt.Errorf("%s: %w", j.gv, err)
				return
			}
			for _, r := range doc.Resources {
				if strings.Contains(r.Name, "/") {
					continue
				}
				results[i] = append(results[i], APIResource{
					GroupVersionResource: meta.GroupVersionResource{Group: j.gv.Group, Version: j.gv.Version, Resource: r.Name},
					Kind:                 r.Kind, Namespaced: r.Namespaced, SingularName: r.SingularName,
					ShortNames: r.ShortNames, Verbs: r.Verbs, Preferred: j.preferred,
				})
			}
		}()
	}
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	// Preferred versions first (in discovery order: core, then groups), then the others.
	var out []APIResource
	for _, pass := range []bool{true, false} {
		for i, j := range jobs {
			if j.preferred == pass {
				out = append(out, results[i]...)
			}
		}
	}
	return out, errors.Join(errs...)
}

// ResolveResource finds the resource a user means by name, as kubectl does: a plural
// ("configmaps"), singular ("configmap"), short name ("cm", "deploy") or kind
// ("ConfigMap"), optionally qualified by group ("deployments.apps") or by version and
// group ("deployments.v1.apps"). Core resources and preferred versions win ties. A miss
// refreshes the discovery cache once before failing with ErrUnknownResource.
func (c *Client) ResolveResource(ctx context.Context, name string) (APIResource, error) {
	return c.resolve(ctx, name, func(rs []APIResource) (APIResource, bool) { return matchName(rs, name) })
}

// ResolveKind finds the resource serving a kind. Group and Version may be empty to match
// any (preferred versions first).
func (c *Client) ResolveKind(ctx context.Context, gvk meta.GroupVersionKind) (APIResource, error) {
	return c.resolve(ctx, gvk.String(), func(rs []APIResource) (APIResource, bool) {
		for _, r := range rs {
			if r.Kind == gvk.Kind && (gvk.Group == "" || r.Group == gvk.Group) && (gvk.Version == "" || r.Version == gvk.Version) {
				return r, true
			}
		}
		return APIResource{}, false
	})
}

func (c *Client) resolve(ctx context.Context, what string, match func([]APIResource) (APIResource, bool)) (APIResource, error) {
	c.discovery.mu.Lock()
	cached := c.discovery.loaded
	c.discovery.mu.Unlock()
	rs, err := c.ServerResources(ctx)
	if r, ok := match(rs); ok {
		return r, nil
	}
	if ctx.Err() != nil {
		return APIResource{}, ctx.Err()
	}
	if cached {
		c.InvalidateDiscovery()
		rs, err = c.ServerResources(ctx)
		if r, ok := match(rs); ok {
			return r, nil
		}
	}
	if err != nil {
		return APIResource{}, fmt.Errorf("apiclient: resolving %q: %w (discovery was incomplete: %v)", what, ErrUnknownResource, err)
	}
	return APIResource{}, fmt.Errorf("apiclient: resolving %q: %w", what, ErrUnknownResource)
}

func matchName(rs []APIResource, name string) (APIResource, bool) {
	type query struct{ res, version, group string }
	queries := []query{{res: name}}
	if i := strings.IndexByte(name, '.'); i > 0 {
		rest := name[i+1:]
		queries = append(queries, query{res: name[:i], group: rest})
		if j := strings.IndexByte(rest, '.'); j > 0 {
			queries = append(queries, query{res: name[:i], version: rest[:j], group: rest[j+1:]})
		}
	}
	for _, q := range queries {
		grouped := q.group != ""
		for _, r := range rs {
			if grouped && r.Group != q.group {
				continue
			}
			if q.version != "" && r.Version != q.version {
				continue
			}
			if nameMatches(r, q.res) {
				return r, true
			}
		}
	}
	return APIResource{}, false
}

func nameMatches(r APIResource, n string) bool {
	if strings.EqualFold(r.Resource, n) || strings.EqualFold(r.SingularName, n) || strings.EqualFold(r.Kind, n) {
		return true
	}
	for _, s := range r.ShortNames {
		if strings.EqualFold(s, n) {
			return true
		}
	}
	return false
}

// ResourceFor resolves name through discovery (see Client.ResolveResource) and returns a
// Resource[T] for it that checks the kind of watched objects, with the discovered facts.
func ResourceFor[T meta.Object](ctx context.Context, c *Client, name string) (*Resource[T], APIResource, error) {
	r, err := c.ResolveResource(ctx, name)
	if err != nil {
		return nil, APIResource{}, err
	}
	return NewResource[T](c, r.GroupVersionResource).WithKind(r.Kind), r, nil
}
