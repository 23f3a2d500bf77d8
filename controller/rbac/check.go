package rbac

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"

	"github.com/informerkit/informerkit/apiclient"
	"github.com/informerkit/informerkit/meta"
)

// ErrMissingPermissions is wrapped by every *MissingPermissionsError.
var ErrMissingPermissions = errors.New("rbac: missing permissions")

// ErrCannotCheck is wrapped by the error of a Check the server could not answer: the client
// may not create SelfSubjectAccessReviews, or the server does not serve them.
var ErrCannotCheck = errors.New("rbac: the permissions could not be checked")

// Denied is one verb on one resource that a SelfSubjectAccessReview did not allow.
type Denied struct {
	Verb, Group, Resource, Subresource, Namespace string
	// Reason is the authorizer's, when it gave one.
	Reason string
}

// String reads "list pods in all namespaces".
func (d Denied) String() string {
	res := d.Resource
	if d.Subresource != "" {
		res += "/" + d.Subresource
	}
	return d.Verb + " " + qualified(d.Group, res) + " " + where(d.Namespace)
}

// MissingPermissionsError lists what the API server's authorizer does not allow the client
// to do, of the rules a Check asked about. It wraps ErrMissingPermissions.
type MissingPermissionsError struct {
	// Denied are the verbs and resources not allowed, sorted.
	Denied []Denied
}

// Error names each verb and resource.
func (e *MissingPermissionsError) Error() string {
	parts := make([]string, len(e.Denied))
	for i, d := range e.Denied {
		parts[i] = d.String()
	}
	return "rbac: missing permissions: the API server does not allow this client to " + strings.Join(parts, "; ") +
		" (grant them: Manager.Permissions lists what the controllers declared, and rbac.Manifest writes the roles)"
}

// Unwrap returns ErrMissingPermissions.
func (e *MissingPermissionsError) Unwrap() error { return ErrMissingPermissions }

// CheckOptions are the optional settings of Check.
type CheckOptions struct {
	// Parallel bounds the reviews in flight (default 8).
	Parallel int
}

// Check asks the API server, with one SelfSubjectAccessReview per verb of each rule, whether
// the client may do what rules say. It returns nil if everything is allowed, a
// *MissingPermissionsError listing what is not, or an error wrapping ErrCannotCheck when the
// server did not answer the reviews.
func Check(ctx context.Context, api *apiclient.Client, rules []Rule, opts CheckOptions) error {
	if opts.Parallel <= 0 {
		opts.Parallel = 8
	}
	var asks []Denied
	for _, r := range Merge(rules...) {
		res, sub, _ := strings.Cut(r.Resource, "/")
		for _, v := range r.Verbs {
			asks = append(asks, Denied{Verb: v, Group: r.Group, Resource: res, Subresource: sub, Namespace: r.Namespace})
		}
	}
	var (
		mu      sync.Mutex
		denied  []Denied
		firstEr error
		wg      sync.WaitGroup
		slots   = make(chan struct{}, opts.Parallel)
	)
	for _, a := range asks {
		slots <- struct{}{}
		wg.Go(func() {
			defer func() { <-slots }()
			allowed, reason, err := review(ctx, api, a)
			mu.Lock()
			defer mu.Unlock()
			switch {
			case err != nil:
				if firstEr == nil {
					firstEr = err
				}
			case !allowed:
				a.Reason = reason
				denied = append(denied, a)
			}
		})
	}
	wg.Wait()
	if firstEr != nil {
		return firstEr
	}
	if len(denied) == 0 {
		return nil
	}
	slices.SortFunc(denied, func(a, b Denied) int { return strings.Compare(a.String(), b.String()) })
	return &MissingPermissionsError{Denied: denied}
}

// review sends one SelfSubjectAccessReview.
func review(ctx context.Context, api *apiclient.Client, a Denied) (allowed bool, reason string, err error) {
	body, _ := json.Marshal(map[string]any{
		"apiVersion": "authorization.k8s.io/v1", "kind": "SelfSubjectAccessReview",
		"spec": map[string]any{"resourceAttributes": map[string]any{
			"namespace": a.Namespace, "verb": a.Verb, "group": a.Group, "resource": a.Resource, "subresource": a.Subresource}},
	})
	out, err := api.Do(ctx, apiclient.Request{Method: http.MethodPost,
		Path: "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews", Body: body})
	if err != nil {
		if meta.IsForbidden(err) || meta.IsNotFound(err) || meta.IsMethodNotAllowed(err) {
			return false, "", fmt.Errorf("%w: %w", ErrCannotCheck, err)
		}
		return false, "", fmt.Errorf("rbac: SelfSubjectAccessReview: %w", err)
	}
	var resp struct {
		Status struct {
			Allowed         bool   `json:"allowed"`
			Reason          string `json:"reason"`
			EvaluationError string `json:"evaluationError"`
		} `json:"status"`
	}
	if err := json.Unmarshal(out, &resp); err != nil {
		return false, "", fmt.Errorf("%w: the SelfSubjectAccessReview's answer: %w", ErrCannotCheck, err)
	}
	reason = resp.Status.Reason
	if resp.Status.EvaluationError != "" {
		reason = strings.TrimSpace(reason + " " + resp.Status.EvaluationError)
	}
	return resp.Status.Allowed, reason, nil
}
