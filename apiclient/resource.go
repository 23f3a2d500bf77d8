package apiclient

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"net/http"
	"net/url"
	"reflect"
	"strconv"
	"time"

	"github.com/informerkit/informerkit/meta"
)

// Resource is a typed client for one resource collection, optionally bound to a namespace:
// the counterpart of client-go's typed clientsets (clientset.CoreV1().Pods(ns)) and, with
// T = *Unstructured, of its dynamic client. T is usually a pointer to a user struct that
// embeds TypeMeta and ObjectMeta; only its declared fields are decoded. A *Resource[T] is
// a ListerWatcher[T] and is safe for concurrent use; Namespace and WithKind return copies.
type Resource[T meta.Object] struct {
	c         *Client
	gvr       meta.GroupVersionResource
	namespace string
	kind      string
	decode    DecodeOptions
	// pk is the protobuf kind of the collection, nil when it is read as JSON only (a kind
	// the schema table does not have, or a Go type that is not a struct).
	pk *protoKind
}

var _ ListerWatcher[*meta.ObjectMeta] = (*Resource[*meta.ObjectMeta])(nil)

// NewResource returns a client for the collection gvr (all namespaces, or cluster-scoped,
// until Namespace is called).
func NewResource[T meta.Object](c *Client, gvr meta.GroupVersionResource) *Resource[T] {
	r := &Resource[T]{c: c, gvr: gvr}
	if protobufType(reflect.TypeFor[T]()) {
		r.pk = protoKindFor(gvr, "")
	}
	return r
}

// Namespace returns a copy of r bound to namespace ns ("" means all namespaces for List and
// Watch, and the object's own namespace for Create and Update).
func (r *Resource[T]) Namespace(ns string) *Resource[T] {
	cp := *r
	cp.namespace = ns
	return &cp
}

// WithKind returns a copy of r whose objects must be of kind: a watch event of another kind
// is skipped (a Skipped event with ErrWrongKind), a list of another kind fails. Without it,
// a resource of a built-in kind checks that kind, and a custom resource the kind its first
// list names. Discovery-built resources (ResourceFor) set it.
func (r *Resource[T]) WithKind(kind string) *Resource[T] {
	cp := *r
	cp.kind = kind
	if protobufType(reflect.TypeFor[T]()) {
		cp.pk = protoKindFor(r.gvr, kind)
	}
	return &cp
}

// WithDecodeOptions returns a copy of r that decodes what it reads with o.
func (r *Resource[T]) WithDecodeOptions(o DecodeOptions) ListerWatcher[T] {
	cp := *r
	cp.decode = o
	return &cp
}

// DecodeTunable is implemented by ListerWatchers whose decoding can be tuned (Resource):
// informers use it to skip what their transform drops and to share strings while decoding.
type DecodeTunable[T any] interface {
	WithDecodeOptions(DecodeOptions) ListerWatcher[T]
}

var _ DecodeTunable[*meta.ObjectMeta] = (*Resource[*meta.ObjectMeta])(nil)

func (r *Resource[T]) decoding() decoding {
	return decoding{decoder: r.c.jsonDecoder, opts: r.decode, pk: r.pk, kind: r.expectedKind(), workers: r.c.decodeWorkers}
}

// read sends a request whose answer is an object or a list of the collection, asking for
// protobuf first when the collection has it; a server that refuses the media type (406,
// 415) is asked again for JSON, and the collection is read as JSON from then on.
func (r *Resource[T]) read(ctx context.Context, req Request) (response, error) {
	pk := r.c.protoKind(r.gvr, r.pk)
	if pk != nil {
		req.Accept = acceptProtobuf
	}
	resp, err := r.c.doRead(ctx, req)
	if pk != nil && refusedMedia(err) {
		r.c.refuseProtobuf(r.gvr, err)
		req.Accept = ""
		return r.c.doRead(ctx, req)
	}
	return resp, err
}

// AwaitRecovery is Client.AwaitRecovery of r's client: the reflector waits out its backoff
// through it, and is woken as soon as the server answers again.
func (r *Resource[T]) AwaitRecovery(ctx context.Context, err error, since time.Time) bool {
	return r.c.AwaitRecovery(ctx, err, since)
}

// GroupVersionResource returns the collection r addresses.
func (r *Resource[T]) GroupVersionResource() meta.GroupVersionResource { return r.gvr }

// Client returns the client r sends requests through.
func (r *Resource[T]) Client() *Client { return r.c }

func (r *Resource[T]) path(namespace, name string, sub ...string) string {
	return resourcePath(r.gvr, namespace, name, sub...)
}

// objectNamespace is r's namespace, or obj's when r is not bound to one.
func (r *Resource[T]) objectNamespace(obj T) string {
	if r.namespace != "" {
		return r.namespace
	}
	if any(obj) == nil {
		return ""
	}
	return obj.GetNamespace()
}

// GetOptions are the query parameters of GET.
type GetOptions struct {
	// ResourceVersion "" reads the latest state from storage; "0" lets the server answer
	// from its watch cache.
	ResourceVersion string
	// DisableRetries sends the request once (see Request.DisableRetries); client-side, not
	// sent to the server. Default: retried up to Config.MaxRetries times.
	DisableRetries bool
}

// CreateOptions are the query parameters of POST.
type CreateOptions struct {
	// DryRun []string{"All"} validates without persisting.
	DryRun []string
	// FieldManager names the actor for managedFields.
	FieldManager string
	// FieldValidation is "Ignore", "Warn" or "Strict".
	FieldValidation string
}

// UpdateOptions are the query parameters of PUT.
type UpdateOptions = CreateOptions

// PatchOptions are the query parameters of PATCH.
type PatchOptions struct {
	DryRun       []string
	FieldManager string
	// Force takes ownership of conflicting fields; only for server-side apply.
	Force           *bool
	FieldValidation string
}

// ApplyOptions configure a server-side apply.
type ApplyOptions struct {
	// FieldManager is required: it names the owner of the applied fields.
	FieldManager string
	// Force takes ownership of fields that other managers own instead of failing with a
	// conflict.
	Force  bool
	DryRun []string
}

// PatchType is the Content-Type of a PATCH body.
type PatchType string

// The patch types the API server accepts.
const (
	JSONPatchType           PatchType = "application/json-patch+json"
	MergePatchType          PatchType = "application/merge-patch+json"
	StrategicMergePatchType PatchType = "application/strategic-merge-patch+json"
	ApplyPatchType          PatchType = "application/apply-patch+yaml"
)

// DeletionPropagation says what happens to an object's dependents.
type DeletionPropagation string

// The propagation policies.
const (
	DeletePropagationOrphan     DeletionPropagation = "Orphan"
	DeletePropagationBackground DeletionPropagation = "Background"
	DeletePropagationForeground DeletionPropagation = "Foreground"
)

// Preconditions must hold for a delete to proceed; otherwise the server answers 409.
type Preconditions struct {
	UID             *string `json:"uid,omitempty"`
	ResourceVersion *string `json:"resourceVersion,omitempty"`
}

// DeleteOptions is the body of DELETE.
type DeleteOptions struct {
	// GracePeriodSeconds overrides the object's grace period (0 deletes at once).
	GracePeriodSeconds *int64               `json:"gracePeriodSeconds,omitempty"`
	Preconditions      *Preconditions       `json:"preconditions,omitempty"`
	PropagationPolicy  *DeletionPropagation `json:"propagationPolicy,omitempty"`
	DryRun             []string             `json:"dryRun,omitempty"`
}

func writeQuery(dryRun []string, fieldManager, fieldValidation string) url.Values {
	q := url.Values{}
	for _, d := range dryRun {
		q.Add("dryRun", d)
	}
	if fieldManager != "" {
		q.Set("fieldManager", fieldManager)
	}
	if fieldValidation != "" {
		q.Set("fieldValidation", fieldValidation)
	}
	return q
}

// decodeObject decodes a response in the media type its Content-Type names: protobuf, or
// JSON otherwise.
func decodeObject[T any](dc decoding, resp response) (T, error) {
	d := newObjectDecoder(dc)
	defer d.release()
	var out T
	var err error
	if isProtobuf(resp.contentType) {
		out, err = decodeProto[T](d, dc.pk, resp.body, dc.list)
	} else {
		err = decodeInto(d, resp.body, &out)
	}
	if err != nil {
		var zero T
		return zero, fmt.Errorf("apiclient: decoding response: %w", err)
	}
	return out, nil
}

// Get returns the named object.
func (r *Resource[T]) Get(ctx context.Context, name string, opts GetOptions) (T, error) {
	var zero T
	if name == "" {
		return zero, errors.New("apiclient: Get: empty name")
	}
	q := url.Values{}
	if opts.ResourceVersion != "" {
		q.Set("resourceVersion", opts.ResourceVersion)
	}
	resp, err := r.read(ctx, Request{Method: http.MethodGet, Path: r.path(r.namespace, name), Query: q, DisableRetries: opts.DisableRetries})
	if err != nil {
		return zero, err
	}
	return decodeObject[T](r.decoding(), resp)
}

// List returns one page of the collection (opts.Limit and opts.Continue page it; the last
// page has an empty Continue). An expired continue token is a 410 (IsResourceExpired).
func (r *Resource[T]) List(ctx context.Context, opts ListOptions) (*meta.List[T], error) {
	resp, err := r.read(ctx, Request{Method: http.MethodGet, Path: r.path(r.namespace, ""), Query: opts.Query(false), DisableRetries: opts.DisableRetries})
	if err != nil {
		return nil, err
	}
	dc := r.decoding()
	dc.list = true
	l, err := decodeObject[*meta.List[T]](dc, resp)
	if err != nil {
		return nil, err
	}
	kc := kindCheck{want: dc.kind}
	if err := kc.listKind(l.Kind, 0); err != nil {
		return nil, fmt.Errorf("apiclient: GET %s: %w", r.path(r.namespace, ""), err)
	}
	if dc.kind == "" {
		r.c.learnKind(r.gvr, l.Kind)
	}
	return l, nil
}

// ListEach lists one page of the collection exactly like List, but decodes the response's
// items one at a time, as the body arrives, and hands each to fn instead of returning them
// in a slice. Memory stays bounded by one item plus the read buffer, whatever the size of
// the page: an unpaged list of a large collection is never held whole. "metadata" may come
// before or after "items" in the response; the returned ListMeta carries the page's
// resourceVersion and continue token.
//
// If fn returns an error, ListEach stops reading and returns that error as is. A body that
// is not a well-formed list, or an item that does not decode into T, gives a *DecodeError
// wrapping ErrMalformedList (with the byte offset and, for an item, its index: "items[3]");
// an item larger than Config.MaxEventSize gives ErrListItemTooLarge; a connection that
// breaks mid-body gives the transport's error. In every case fn has already seen the items
// before the failure. A request refused before the body starts (429, 5xx, connection
// refused) is retried like List's, unless opts.DisableRetries; nothing is
// retried once fn has been called.
//
// It implements the reflector's StreamingLister: with an incremental store, a relist never
// holds the whole list in memory.
func (r *Resource[T]) ListEach(ctx context.Context, opts ListOptions, fn func(T) error) (meta.ListMeta, error) {
	return listEach(ctx, r.c, r.decoding(), r.gvr, r.path(r.namespace, ""), opts, fn)
}

// DefaultPageSize is the page size All uses when opts.Limit is 0.
const DefaultPageSize = 500

// All iterates over every item of the collection, fetching pages of opts.Limit items
// (DefaultPageSize if 0) as it goes. An error ends the iteration with (zero, err); an
// expired continue token yields an error for which IsResourceExpired is true.
func (r *Resource[T]) All(ctx context.Context, opts ListOptions) iter.Seq2[T, error] {
	return func(yield func(T, error) bool) {
		if opts.Limit <= 0 {
			opts.Limit = DefaultPageSize
		}
		for {
			page, err := r.List(ctx, opts)
			if err != nil {
				var zero T
				yield(zero, err)
				return
			}
			for _, it := range page.Items {
				if !yield(it, nil) {
					return
				}
			}
			if page.Continue == "" {
				return
			}
			opts.Continue = page.Continue
			// The continue token carries the snapshot; the first page's
			// resourceVersion options must not be repeated.
			opts.ResourceVersion, opts.ResourceVersionMatch = "", ""
		}
	}
}

// Create creates obj in r's namespace (or obj's, if r has none) and returns the server's
// version of it.
func (r *Resource[T]) Create(ctx context.Context, obj T, opts CreateOptions) (T, error) {
	var zero T
	data, err := json.Marshal(obj)
	if err != nil {
		return zero, fmt.Errorf("apiclient: Create: encoding object: %w", err)
	}
	resp, err := r.read(ctx, Request{Method: http.MethodPost, Path: r.path(r.objectNamespace(obj), ""),
		Query: writeQuery(opts.DryRun, opts.FieldManager, opts.FieldValidation), Body: data})
	if err != nil {
		return zero, err
	}
	return decodeObject[T](r.decoding(), resp)
}

// Update replaces obj (addressed by its name and namespace). A stale
// metadata.resourceVersion gives a 409 Conflict (IsConflict).
func (r *Resource[T]) Update(ctx context.Context, obj T, opts UpdateOptions) (T, error) {
	return r.update(ctx, obj, opts, "")
}

// UpdateStatus replaces the status subresource of obj.
func (r *Resource[T]) UpdateStatus(ctx context.Context, obj T, opts UpdateOptions) (T, error) {
	return r.update(ctx, obj, opts, "status")
}

func (r *Resource[T]) update(ctx context.Context, obj T, opts UpdateOptions, sub string) (T, error) {
	var zero T
	if any(obj) == nil || obj.GetName() == "" {
		return zero, errors.New("apiclient: Update: object has no name")
	}
	data, err := json.Marshal(obj)
	if err != nil {
		return zero, fmt.Errorf("apiclient: Update: encoding object: %w", err)
	}
	resp, err := r.read(ctx, Request{Method: http.MethodPut, Path: r.path(r.objectNamespace(obj), obj.GetName(), sub),
		Query: writeQuery(opts.DryRun, opts.FieldManager, opts.FieldValidation), Body: data})
	if err != nil {
		return zero, err
	}
	return decodeObject[T](r.decoding(), resp)
}

// Patch applies a patch of type pt to the named object (or to one of its subresources,
// e.g. "status") and returns the result.
func (r *Resource[T]) Patch(ctx context.Context, name string, pt PatchType, data []byte, opts PatchOptions, subresources ...string) (T, error) {
	var zero T
	if name == "" {
		return zero, errors.New("apiclient: Patch: empty name")
	}
	q := writeQuery(opts.DryRun, opts.FieldManager, opts.FieldValidation)
	if opts.Force != nil {
		q.Set("force", strconv.FormatBool(*opts.Force))
	}
	resp, err := r.read(ctx, Request{Method: http.MethodPatch, Path: r.path(r.namespace, name, subresources...),
		Query: q, Body: data, ContentType: string(pt)})
	if err != nil {
		return zero, err
	}
	return decodeObject[T](r.decoding(), resp)
}

// Apply is a server-side apply of obj (a struct, a map, or JSON/YAML bytes) to the named
// object, creating it if needed. obj should carry apiVersion and kind and only the fields
// the manager owns. A field owned by another manager is a 409 Conflict unless opts.Force.
func (r *Resource[T]) Apply(ctx context.Context, name string, obj any, opts ApplyOptions, subresources ...string) (T, error) {
	var zero T
	if opts.FieldManager == "" {
		return zero, errors.New("apiclient: Apply: FieldManager is required")
	}
	var data []byte
	switch v := obj.(type) {
	case []byte:
		data = v
	case json.RawMessage:
		data = v
	default:
		var err error
		if data, err = json.Marshal(obj); err != nil {
			return zero, fmt.Errorf("apiclient: Apply: encoding object: %w", err)
		}
	}
	force := opts.Force
	return r.Patch(ctx, name, ApplyPatchType, data, PatchOptions{DryRun: opts.DryRun, FieldManager: opts.FieldManager, Force: &force}, subresources...)
}

// Delete deletes the named object. Preconditions, propagation policy and grace period
// travel in the DeleteOptions body.
func (r *Resource[T]) Delete(ctx context.Context, name string, opts DeleteOptions) error {
	if name == "" {
		return errors.New("apiclient: Delete: empty name")
	}
	body := struct {
		meta.TypeMeta
		DeleteOptions
	}{meta.TypeMeta{APIVersion: "v1", Kind: "DeleteOptions"}, opts}
	data, err := json.Marshal(body)
	if err != nil {
		return err
	}
	_, err = r.c.do(ctx, Request{Method: http.MethodDelete, Path: r.path(r.namespace, name), Body: data})
	return err
}

// DeleteCollection deletes every object matching opts' selectors in r's namespace.
func (r *Resource[T]) DeleteCollection(ctx context.Context, del DeleteOptions, opts ListOptions) error {
	body := struct {
		meta.TypeMeta
		DeleteOptions
	}{meta.TypeMeta{APIVersion: "v1", Kind: "DeleteOptions"}, del}
	data, err := json.Marshal(body)
	if err != nil {
		return err
	}
	_, err = r.c.do(ctx, Request{Method: http.MethodDelete, Path: r.path(r.namespace, ""), Query: opts.Query(false), Body: data})
	return err
}

// Watch opens a watch of the collection with opts (resourceVersion, bookmarks,
// sendInitialEvents, selectors, timeoutSeconds), over WebSocket or a chunked HTTP stream as
// Config.WatchProtocol says. The watch ends when ctx is done or Stop is called. A refusal
// before the stream starts (410, 429, 5xx, 400/422) is returned as a *Status error; the
// caller (the reflector) owns back-off, so watch requests are not retried.
func (r *Resource[T]) Watch(ctx context.Context, opts ListOptions) (Watcher[T], error) {
	return openWatch[T](ctx, r.c, r.decoding(), r.gvr, r.path(r.namespace, ""), opts.Query(true), r.expectedKind())
}
