// Package apiclient is informerkit's hand-written Kubernetes API client: the object model
// (TypeMeta, ObjectMeta, List, Status, Unstructured), configuration (kubeconfig and
// in-cluster), transport and authentication, the REST verbs, List and Watch (chunked HTTP and
// WebSocket), and discovery.
//
// Objects are user-declared structs that embed TypeMeta and ObjectMeta and declare only the
// fields a controller reads; decoding skips everything else, which is how informerkit's caches
// stay small. It plays the role of client-go's rest, kubernetes, dynamic, discovery and
// tools/clientcmd packages and apimachinery's meta/v1 types.
//
// # Correspondence with client-go
//
//	client-go / apimachinery                     apiclient
//	clientcmd.BuildConfigFromFlags, rest.InClusterConfig
//	                                             LoadConfig, LoadConfigWithOptions, InClusterConfig
//	rest.Config                                  Config (String/LogValue redact secrets)
//	kubernetes.NewForConfig / rest.RESTClientFor New(*Config) *Client
//	clientset.CoreV1().Pods(ns)                  NewResource[*Pod](c, gvr).Namespace(ns)
//	dynamic.NewForConfig(...).Resource(gvr)      NewResource[*Unstructured](c, gvr)
//	Get/List/Watch/Create/Update/UpdateStatus/Patch/Delete
//	                                             the same verbs on *Resource[T]; Apply for server-side apply
//	pager.ListPager                              Resource.All (an iter.Seq2 over every item)
//	(none)                                       Resource.ListEach (one page, item by item)
//	cache.ListerWatcher                          *Resource[T] is a ListerWatcher[T]
//	watch.Interface, watch.Event                 Watcher[T], Event[T] (typed: no type assertions)
//	apierrors.IsNotFound, IsConflict, ...        IsNotFound, IsConflict, IsResourceExpired, ... on *Status
//	discovery + restmapper (kubectl names)       Client.ResolveResource ("cm", "deployments.apps"), ResolveKind, ResourceFor
//	unstructured.Unstructured, NestedString      Unstructured, NestedString, SetNestedField, ...
//
// # Transport
//
// TLS is verified unless TLSConfig.Insecure is set. HTTP/2 is used when the server offers
// it, with ping health checks (a connection silent for 10 s is pinged and closed if the
// ping is not answered within 5 s), so a watch on a dead connection ends within seconds
// instead of minutes. Non-watch requests pass a client-side token bucket (DefaultQPS 50,
// DefaultBurst 100; client-go's 5/10 predates API Priority and Fairness). GET requests are
// retried on 429, 5xx (except 501) and connection errors up to Config.MaxRetries times,
// waiting for the server's Retry-After when it names one (capped at a minute) and for an
// exponential back-off from 250 ms otherwise; writes and watches are never retried. A
// caller with its own backoff (the reflector) sets ListOptions.DisableRetries to see the
// first failure at once. The *Status of a refused request carries
// Retry-After in Details.RetryAfterSeconds.
//
// # Lists
//
// List decodes a whole page into a slice. ListEach decodes the same response item by item
// as it arrives and hands each to a callback, so that an unpaged list of a large collection
// is never held whole (the reflector uses it for relists into an incremental store).
//
// Credentials: a static bearer token, a token file re-read whenever it changes (and after a
// 401), basic authentication, client certificates, or a client.authentication.k8s.io/v1 exec
// plugin whose token or certificate is cached until its expirationTimestamp and renewed
// after a 401. Tokens never appear in errors or logs.
//
// # Watch
//
// Config.WatchProtocol selects chunked HTTP (HTTP/1.1 or HTTP/2), WebSocket (one event per
// message; the bearer token also travels as the base64url.bearer.authorization.k8s.io
// subprotocol), or WatchAuto: WebSocket first, falling back to chunked when the server
// answers the upgrade with an ordinary response, which the client then remembers so that
// later watches do not pay for a refused upgrade.
//
// The stream decoder holds one event at a time. A stream that cannot be decoded ends the
// watch with one Error event whose Err is a *DecodeError wrapping ErrEventTooLarge (an
// event over Config.MaxEventSize), ErrMalformedEvent, ErrUnknownEventType or ErrWrongKind
// (with Resource.WithKind). A server ERROR event is an Error event whose Err is the
// server's *Status (IsResourceExpired for a compacted resourceVersion). The end of the
// stream, and a connection cut mid-stream, close the channel without an Error event (as in
// client-go, so a reflector re-watches from its last resourceVersion); the concrete
// watcher has an Err() error method that tells why it ended. Stop and the cancellation of
// the watch's context return only when the watch's goroutine has exited and its connection
// is closed.
package apiclient
