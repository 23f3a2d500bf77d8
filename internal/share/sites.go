package share

import (
	"strings"
)

type shareSite struct {
	lookups     uint32 // in the current window
	skip        uint32 // visits left to skip
	fails       uint8  // consecutive windows that did not pay
	saved, cost uint64 // bytes, in the current window
}

// siteState returns the state of a site: a plan's site (≥ 0), or a site of this sharer's
// dynamic values (< 0; see childSite).
func (s *sharer) siteState(site int) *shareSite {
	if site < 0 {
		return &s.dynSites[-site-1]
	}
	if site >= len(s.sites) {
		s.sites = append(s.sites, make([]shareSite, int(shareSiteNext.Load())+1-len(s.sites))...)
	}
	return &s.sites[site]
}

// childSite returns the site of the value at key (a map key, or "[]" for the elements of a
// slice) below a dynamic value (in an interface{}, as in Unstructured objects) reached
// through site, so that the policy follows JSON paths: metadata.name is not
// spec.containers[].image. Past maxDynSites paths, children share their parent's site.
func (s *sharer) childSite(site int, key string) int {
	k := dynSiteKey{site, key}
	if c, ok := s.dyn[k]; ok {
		return c
	}
	if len(s.dynSites) >= maxDynSites {
		return site
	}
	if s.dyn == nil {
		s.dyn = map[dynSiteKey]int{}
	}
	s.dynSites = append(s.dynSites, shareSite{})
	c := -len(s.dynSites)
	s.dyn[dynSiteKey{site, strings.Clone(key)}] = c
	return c
}

type dynSiteKey struct {
	parent int
	key    string
}

func (s *sharer) enabled(site int) bool {
	st := s.siteState(site)
	if st.skip > 0 {
		st.skip--
		return false
	}
	return true
}

func (s *sharer) tick(site int) {
	st := s.siteState(site)
	if st.lookups++; st.lookups < shareWindow {
		return
	}
	if st.saved < st.cost {
		st.fails++
		st.skip = shareWindow * shareSkipWindows << min(st.fails-1, shareMaxBackoff)
	} else {
		st.fails = 0
	}
	st.lookups, st.saved, st.cost = 0, 0, 0
}

func (s *sharer) hit(site int, saved uintptr) {
	s.siteState(site).saved += uint64(saved)
	s.hits++
	s.saved += uint64(saved)
	s.tick(site)
}
