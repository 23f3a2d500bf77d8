package kuberecord

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"time"
)

// Target is a server to record.
type Target struct {
	// URL is the server's base URL.
	URL string
	// Client sends the requests (with the credentials of an administrator).
	Client *http.Client
	// SkipGroup, if set, leaves out the groups it reports (those of custom resources
	// other tests installed).
	SkipGroup func(group string) bool
}

// userAgent names the recorder in managedFields.
const userAgent = "kuberecord"

// Media types of the requests.
const (
	acceptJSON       = "application/json"
	acceptTable      = "application/json;as=Table;v=v1;g=meta.k8s.io"
	acceptAggregated = "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList"
)

// do sends one request and reads the whole answer.
func (t Target) do(ctx context.Context, method, path, accept, contentType string, body []byte) (int, []byte, error) {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	var r io.Reader
	if body != nil {
		r = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, t.URL+path, r)
	if err != nil {
		return 0, nil, err
	}
	req.Header.Set("Accept", accept)
	req.Header.Set("User-Agent", userAgent)
	if body != nil {
		req.Header.Set("Content-Type", contentType)
	}
	resp, err := t.Client.Do(req)
	if err != nil {
		return 0, nil, fmt.Errorf("%s %s: %w", method, path, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return 0, nil, fmt.Errorf("%s %s: %w", method, path, err)
	}
	return resp.StatusCode, b, nil
}

// getJSON GETs path and decodes a 200 answer into out.
func (t Target) getJSON(ctx context.Context, path, accept string, out any) error {
	code, b, err := t.do(ctx, http.MethodGet, path, accept, "", nil)
	if err != nil {
		return err
	}
	if code != http.StatusOK {
		return fmt.Errorf("GET %s: %d %s", path, code, b)
	}
	if err := json.Unmarshal(b, out); err != nil {
		return fmt.Errorf("GET %s: %w", path, err)
	}
	return nil
}

// legacyResource is an entry of an APIResourceList.
type legacyResource struct {
	Name               string   `json:"name"`
	SingularName       string   `json:"singularName"`
	Namespaced         bool     `json:"namespaced"`
	Group              string   `json:"group"`
	Version            string   `json:"version"`
	Kind               string   `json:"kind"`
	Verbs              []string `json:"verbs"`
	ShortNames         []string `json:"shortNames"`
	Categories         []string `json:"categories"`
	StorageVersionHash string   `json:"storageVersionHash"`
}

// groupVersion is one group version in discovery order.
type groupVersion struct{ group, version string }

func (gv groupVersion) path() string {
	if gv.group == "" {
		return "/api/" + gv.version
	}
	return "/apis/" + gv.group + "/" + gv.version
}

// RecordServed records the server's discovery: every resource of every group version, from
// the legacy documents, checked against the aggregated ones (disagreements are the
// resources' Problems), with their Table columns.
func RecordServed(ctx context.Context, t Target) (*Served, error) {
	var ver struct {
		GitVersion string `json:"gitVersion"`
	}
	if err := t.getJSON(ctx, "/version", acceptJSON, &ver); err != nil {
		return nil, err
	}
	gvs, err := t.groupVersions(ctx)
	if err != nil {
		return nil, err
	}
	s := &Served{Source: strings.TrimSuffix(ver.GitVersion, "-apitest")}
	for _, gv := range gvs {
		var list struct {
			Resources []legacyResource `json:"resources"`
		}
		if err := t.getJSON(ctx, gv.path(), acceptJSON, &list); err != nil {
			return nil, err
		}
		s.Resources = append(s.Resources, fromLegacy(gv, list.Resources)...)
	}
	agg, aggErr := t.aggregated(ctx)
	for i := range s.Resources {
		r := &s.Resources[i]
		switch a, ok := agg[r.Key()]; {
		case aggErr != nil:
			r.Problems = append(r.Problems, "aggregated discovery: "+aggErr.Error())
		case !ok:
			r.Problems = append(r.Problems, "not in the aggregated discovery")
		default:
			r.Problems = append(r.Problems, compareAggregated(*r, a)...)
		}
		if slices.Contains(r.Verbs, "list") {
			if r.Columns, err = t.columns(ctx, *r); err != nil {
				r.Problems = append(r.Problems, err.Error())
			}
		}
	}
	// What only the aggregated discovery has.
	have := map[string]bool{}
	for _, r := range s.Resources {
		have[r.Key()] = true
	}
	for _, k := range sortedKeys(agg) {
		if !have[k] && (t.SkipGroup == nil || !t.SkipGroup(agg[k].Group)) {
			r := agg[k]
			r.Problems = append(r.Problems, "only in the aggregated discovery")
			s.Resources = append(s.Resources, r)
		}
	}
	return s, nil
}

// groupVersions lists /api's and /apis's group versions in discovery order.
func (t Target) groupVersions(ctx context.Context) ([]groupVersion, error) {
	var core struct {
		Versions []string `json:"versions"`
	}
	if err := t.getJSON(ctx, "/api", acceptJSON, &core); err != nil {
		return nil, err
	}
	var out []groupVersion
	for _, v := range core.Versions {
		out = append(out, groupVersion{"", v})
	}
	var groups struct {
		Groups []struct {
			Name     string `json:"name"`
			Versions []struct {
				Version string `json:"version"`
			} `json:"versions"`
		} `json:"groups"`
	}
	if err := t.getJSON(ctx, "/apis", acceptJSON, &groups); err != nil {
		return nil, err
	}
	for _, g := range groups.Groups {
		if t.SkipGroup != nil && t.SkipGroup(g.Name) {
			continue
		}
		for _, v := range g.Versions {
			out = append(out, groupVersion{g.Name, v.Version})
		}
	}
	return out, nil
}

// fromLegacy turns an APIResourceList into Resources, subresources folded into their
// parents.
func fromLegacy(gv groupVersion, list []legacyResource) []Resource {
	var out []Resource
	index := map[string]int{}
	for _, lr := range list {
		if strings.Contains(lr.Name, "/") {
			continue
		}
		index[lr.Name] = len(out)
		out = append(out, Resource{Group: gv.group, Version: gv.version, Resource: lr.Name, Kind: lr.Kind,
			Namespaced: lr.Namespaced, Singular: lr.SingularName, Verbs: lr.Verbs, ShortNames: lr.ShortNames,
			Categories: lr.Categories, StorageVersionHash: lr.StorageVersionHash})
	}
	for _, lr := range list {
		parent, sub, ok := strings.Cut(lr.Name, "/")
		if !ok {
			continue
		}
		i, found := index[parent]
		if !found {
			continue
		}
		sr := Subresource{Name: sub, Group: lr.Group, Version: lr.Version, Kind: lr.Kind, Verbs: lr.Verbs}
		if sr.Group == gv.group && sr.Version == gv.version {
			sr.Group, sr.Version = "", ""
		}
		out[i].Subresources = append(out[i].Subresources, sr)
	}
	for i := range out {
		slices.SortFunc(out[i].Subresources, func(a, b Subresource) int { return strings.Compare(a.Name, b.Name) })
	}
	return out
}

// aggregated reads the aggregated discovery of /api and /apis.
func (t Target) aggregated(ctx context.Context) (map[string]Resource, error) {
	out := map[string]Resource{}
	for _, path := range []string{"/api", "/apis"} {
		var doc struct {
			Kind  string `json:"kind"`
			Items []struct {
				Metadata struct {
					Name string `json:"name"`
				} `json:"metadata"`
				Versions []struct {
					Version   string `json:"version"`
					Freshness string `json:"freshness"`
					Resources []struct {
						Resource         string   `json:"resource"`
						ResponseKind     kindRef  `json:"responseKind"`
						Scope            string   `json:"scope"`
						SingularResource string   `json:"singularResource"`
						Verbs            []string `json:"verbs"`
						ShortNames       []string `json:"shortNames"`
						Categories       []string `json:"categories"`
						Subresources     []struct {
							Subresource  string   `json:"subresource"`
							ResponseKind kindRef  `json:"responseKind"`
							Verbs        []string `json:"verbs"`
						} `json:"subresources"`
					} `json:"resources"`
				} `json:"versions"`
			} `json:"items"`
		}
		if err := t.getJSON(ctx, path, acceptAggregated, &doc); err != nil {
			return nil, err
		}
		if doc.Kind != "APIGroupDiscoveryList" {
			return nil, fmt.Errorf("GET %s: kind %q, not APIGroupDiscoveryList", path, doc.Kind)
		}
		for _, g := range doc.Items {
			for _, v := range g.Versions {
				for _, ar := range v.Resources {
					r := Resource{Group: g.Metadata.Name, Version: v.Version, Resource: ar.Resource, Kind: ar.ResponseKind.Kind,
						Namespaced: ar.Scope == "Namespaced", Singular: ar.SingularResource, Verbs: ar.Verbs,
						ShortNames: ar.ShortNames, Categories: ar.Categories}
					if v.Freshness != "Current" {
						r.Problems = append(r.Problems, "freshness "+v.Freshness)
					}
					for _, as := range ar.Subresources {
						sr := Subresource{Name: as.Subresource, Group: as.ResponseKind.Group, Version: as.ResponseKind.Version,
							Kind: as.ResponseKind.Kind, Verbs: as.Verbs}
						if sr.Group == r.Group && sr.Version == r.Version {
							sr.Group, sr.Version = "", ""
						}
						r.Subresources = append(r.Subresources, sr)
					}
					slices.SortFunc(r.Subresources, func(a, b Subresource) int { return strings.Compare(a.Name, b.Name) })
					out[r.Key()] = r
				}
			}
		}
	}
	return out, nil
}

type kindRef struct {
	Group   string `json:"group"`
	Version string `json:"version"`
	Kind    string `json:"kind"`
}

// compareAggregated lists where the aggregated discovery's resource differs from the
// legacy one's.
func compareAggregated(legacy, agg Resource) []string {
	legacy.StorageVersionHash = ""
	legacy.Columns, legacy.Probe, legacy.Problems = nil, nil, nil
	lb, _ := json.Marshal(legacy)
	ab, _ := json.Marshal(agg)
	if bytes.Equal(lb, ab) {
		return agg.Problems
	}
	return append(agg.Problems, "aggregated discovery differs: "+string(ab))
}

// columns reads the resource's Table column definitions from a list of at most one object.
func (t Target) columns(ctx context.Context, r Resource) ([]Column, error) {
	var table struct {
		Kind    string   `json:"kind"`
		Columns []Column `json:"columnDefinitions"`
	}
	if err := t.getJSON(ctx, groupVersion{r.Group, r.Version}.path()+"/"+r.Resource+"?limit=1", acceptTable, &table); err != nil {
		return nil, err
	}
	if table.Kind != "Table" {
		return nil, fmt.Errorf("list as Table: kind %q", table.Kind)
	}
	return table.Columns, nil
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
