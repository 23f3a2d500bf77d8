package controller

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"reflect"
	"slices"
	"time"

	"github.com/informerkit/informerkit/informer"
)

// ErrInformerBudget is wrapped by the error of a new informer past
// ManagerOptions.InformerBudget (see InformerBudgetError).
var ErrInformerBudget = errors.New("controller: past the Manager's informer budget")

// InformerBudget bounds what a Manager's informers may cost (ManagerOptions.InformerBudget):
// informers started implicitly (a cached read of a new kind) have cost users gigabytes
// and minutes (NVIDIA/NVSentinel#1757). The zero value bounds nothing.
type InformerBudget struct {
	// MaxInformers refuses a new informer (InformerFor, a Kind source, a cached read of a
	// kind without one) past this number of informers. 0: no bound.
	MaxInformers int
	// MaxEstimatedBytes fails Start once the caches synced if their estimated memory
	// (InformerInfo.EstimatedBytes, summed) is above it. 0: no bound.
	MaxEstimatedBytes int64
}

// InformerBudgetError is the error of a new informer, or of Start, past the budget.
type InformerBudgetError struct {
	// Informer is the informer refused (for MaxInformers), or "" for the estimated bytes.
	Informer string
	// Limit and Have are the bound and what it would be with the informer (informers or
	// estimated bytes).
	Limit, Have int64
	// What is "informers" or "estimated bytes".
	What string
}

func (e *InformerBudgetError) Error() string {
	if e.Informer != "" {
		return fmt.Sprintf("%v: informer %s would be informer %d of at most %d", ErrInformerBudget, e.Informer, e.Have, e.Limit)
	}
	return fmt.Sprintf("%v: the caches hold an estimated %d bytes, above %d", ErrInformerBudget, e.Have, e.Limit)
}

// Unwrap returns ErrInformerBudget.
func (e *InformerBudgetError) Unwrap() error { return ErrInformerBudget }

// InformerInfo describes one informer of a Manager (Inventory, /debug/informers).
type InformerInfo struct {
	// Name is the informer's ("configmaps.v1", "pods.v1 in default", with its selectors).
	Name string `json:"name"`
	// Resource is what it lists and watches ("configmaps.v1", "deployments.v1.apps"); ""
	// if the Manager cannot tell (an informer of a source from elsewhere).
	Resource string `json:"resource,omitempty"`
	// Namespaces is its scope: the namespaces it caches, none for every namespace (or a
	// cluster-scoped resource).
	Namespaces []string `json:"namespaces,omitempty"`
	// LabelSelector and FieldSelector filter what it caches ("" for everything).
	LabelSelector string `json:"labelSelector,omitempty"`
	FieldSelector string `json:"fieldSelector,omitempty"`
	// Type is the Go type of its objects: a projection (*meta.PartialObjectMetadata) costs
	// a fraction of the full type.
	Type string `json:"type,omitempty"`
	// Objects is the number of cached objects, EstimatedBytes their estimated memory
	// (informer.Informer.EstimatedBytes: an upper bound).
	Objects        int   `json:"objects"`
	EstimatedBytes int64 `json:"estimatedBytes"`
	// Synced and Staleness are the informer's HasSynced and Staleness.
	Synced    bool          `json:"synced"`
	Staleness time.Duration `json:"stalenessNanoseconds"`
	// AcquiredBy says who asked for it: "InformerFor", "Kind", "Scoped", "cached read"
	// (the client started it for a read), "factory" (started on the factory directly).
	AcquiredBy []string `json:"acquiredBy"`
}

// Inventory lists the Manager's informers, sorted by name: every informer of its factory
// and those of its controllers' sources, with what they hold and who acquired them.
func (m *Manager) Inventory() []InformerInfo {
	tracked := m.trackedInformers()
	out := make([]InformerInfo, 0, len(tracked))
	m.mu.Lock()
	by := make(map[trackedInformer][]string, len(m.acquirers))
	for k, v := range m.acquirers {
		by[k] = slices.Clone(v)
	}
	m.mu.Unlock()
	if m.ctrlClient != nil {
		for _, inf := range m.ctrlClient.StartedOnRead() {
			if t, ok := inf.(trackedInformer); ok {
				by[t] = append(by[t], "cached read")
			}
		}
	}
	for _, t := range tracked {
		info := InformerInfo{Name: t.name, Synced: t.inf.HasSynced(), Staleness: t.inf.Staleness(), AcquiredBy: by[t.inf]}
		if len(info.AcquiredBy) == 0 {
			info.AcquiredBy = []string{"factory"}
		}
		m.selection(&info, t.inf)
		if e, ok := t.inf.(interface {
			ObjectType() reflect.Type
			EstimatedBytes() int64
		}); ok {
			info.Type = e.ObjectType().String()
			info.EstimatedBytes = e.EstimatedBytes()
		}
		if c, ok := t.inf.(interface{ Stats() informer.Stats }); ok {
			info.Objects = c.Stats().Cached
		}
		out = append(out, info)
	}
	return out
}

// selection fills info's resource, scope and selectors: from the factory for its informers,
// from the scope of a scoped informer.
func (m *Manager) selection(info *InformerInfo, inf trackedInformer) {
	if any, ok := inf.(informer.AnyInformer); ok {
		if sel, ok := m.factory.SelectionOf(any); ok {
			info.Resource = sel.Resource.String()
			if sel.Namespace != "" {
				info.Namespaces = []string{sel.Namespace}
			}
			info.LabelSelector, info.FieldSelector = sel.LabelSelector, sel.FieldSelector
			return
		}
	}
	if sc, ok := inf.(interface{ Scope() informer.Scope }); ok {
		scope := sc.Scope()
		info.Namespaces = scope.Namespaces
		if !scope.LabelSelector.Empty() {
			info.LabelSelector = scope.LabelSelector.String()
		}
	}
}

// acquired records that who acquired inf (for the inventory).
func (m *Manager) acquired(inf trackedInformer, who string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.acquirers == nil {
		m.acquirers = map[trackedInformer][]string{}
	}
	if !slices.Contains(m.acquirers[inf], who) {
		m.acquirers[inf] = append(m.acquirers[inf], who)
	}
}

// admitInformer refuses a new informer named name past InformerBudget.MaxInformers; exists
// says whether the factory already has it (then it is not new).
func (m *Manager) admitInformer(name string, exists bool) error {
	limit := m.opts.InformerBudget.MaxInformers
	if limit <= 0 || exists {
		return nil
	}
	if n := len(m.trackedInformers()) + 1; n > limit {
		return &InformerBudgetError{Informer: name, Limit: int64(limit), Have: int64(n), What: "informers"}
	}
	return nil
}

// checkBytesBudget fails when the synced caches are past InformerBudget.MaxEstimatedBytes.
func (m *Manager) checkBytesBudget() error {
	limit := m.opts.InformerBudget.MaxEstimatedBytes
	if limit <= 0 {
		return nil
	}
	var total int64
	for _, i := range m.Inventory() {
		total += i.EstimatedBytes
	}
	if total > limit {
		return &InformerBudgetError{Limit: limit, Have: total, What: "estimated bytes"}
	}
	return nil
}

// serveInventory answers /debug/informers: the Inventory as JSON.
func (m *Manager) serveInventory(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	_ = enc.Encode(map[string]any{"informers": m.Inventory()})
}
