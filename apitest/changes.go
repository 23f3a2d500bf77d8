package apitest

import (
	"encoding/json"
	"fmt"
	"sort"
	"strconv"

	"github.com/informerkit/informerkit/apiclient"
)

// Change is one committed change of the store: what a watch of every resource from the
// beginning would deliver, in resourceVersion order.
type Change struct {
	// RV is the change's resourceVersion: the server numbers every change of every
	// resource in one sequence.
	RV       uint64
	Type     apiclient.EventType
	Resource string
	// Namespace and Name are the object's.
	Namespace, Name string
	// Object is the object after the change (for Deleted, its last state), as JSON.
	Object json.RawMessage
}

// Changes returns every change committed after the resourceVersion after ("" or "0": from
// the start), oldest first, across every resource. It fails if the history of a resource
// (Options.HistorySize events per resource) no longer reaches back to after.
func (s *Server) Changes(after string) ([]Change, error) {
	var from uint64
	if after != "" {
		n, err := strconv.ParseUint(after, 10, 64)
		if err != nil {
			return nil, fmt.Errorf("apitest: Changes: invalid resource version %q", after)
		}
		from = n
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []Change
	for _, r := range s.order {
		if from < r.evictedRV {
			return nil, fmt.Errorf("apitest: Changes: the history of %s starts after %d (at %d)", r.typ.name(), from, r.evictedRV)
		}
		for i := r.seqAfter(from) - r.base; i < uint64(len(r.events)); i++ {
			ev := r.events[i]
			out = append(out, Change{RV: ev.rv, Type: ev.typ, Resource: r.typ.name(), Namespace: ev.obj.namespace,
				Name: ev.obj.name, Object: append(json.RawMessage(nil), ev.obj.raw...)})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].RV < out[j].RV })
	return out, nil
}
