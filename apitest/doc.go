// Package apitest is an in-process Kubernetes API server for tests and demos, in the spirit
// of net/http/httptest: NewServer starts a real HTTP server on a loopback port that speaks
// the Kubernetes API (JSON only) faithfully enough that informerkit's reflector, informer and
// controller tests, its demo, apiclient and kubectl all run against it. No test double in
// informerkit fakes the API at a lower level than this.
//
//	s := apitest.NewServerWithOptions(apitest.Options{TLS: true, Token: "t"})
//	defer s.Close()
//	c, _ := apiclient.New(s.Config())          // host, token and CA
//	s.WriteKubeconfig(path)                    // for kubectl and apiclient.LoadConfig
//
// # What it serves
//
// Discovery (/version, /api, /api/v1, /apis, /apis/<group>/<version>) and a minimal
// /openapi/v3 (enough for kubectl to use server-side field validation). Built-in resources:
// namespaces, configmaps, secrets, pods, podtemplates, services, events (core/v1), deployments and
// replicasets (apps/v1), leases (coordination.k8s.io/v1). AddResource registers more at run
// time, as a CustomResourceDefinition would.
//
// Verbs: get, list, watch, create (generateName too), update, update of /status, patch
// (JSON merge, JSON patch, strategic merge treated as JSON merge), delete (finalizers,
// preconditions, dryRun) and deletecollection. Lists and watches honour label selectors
// (=, ==, !=, in, notin, exists, !exists, gt, lt) and the field selectors metadata.name and
// metadata.namespace (plus a few per-resource fields such as pods' spec.nodeName), and lists
// page with limit/continue, except that resourceVersion=0 returns everything at once (the
// watch cache ignores limit; WithoutWatchCache makes it page too, as a server without a watch
// cache does), and deletecollection answers the list as it was before. Responses can be Tables (kubectl get) or PartialObjectMetadata.
//
// One global resourceVersion counter orders every write. Objects get uid and
// creationTimestamp from the server; an update with a stale resourceVersion is a 409
// Conflict; an update that changes nothing keeps the resourceVersion and emits no event;
// metadata.generation is set and bumped on changes outside metadata and status for
// deployments, replicasets, pods, podtemplates and every custom resource. Deleting an
// object with finalizers sets deletionTimestamp (200 with the object); the update that
// removes the last finalizer removes the object, and the DELETED event carries the last
// stored state at a new resourceVersion, as the kube-apiserver does. Errors are Status bodies with
// the kube-apiserver's codes, reasons and messages (AlreadyExists, NotFound, Conflict,
// Invalid with causes, BadRequest, Expired, Timeout with ResourceVersionTooLarge, ...).
// A namespaced object in a namespace that does not exist is refused with 404 NotFound
// for the namespace, as the kube-apiserver's namespace lifecycle admission does; the
// default, kube-system, kube-public and kube-node-lease namespaces exist from the start.
//
// Each resource keeps a bounded history of its events (Options.HistorySize). A watch may
// start at any resourceVersion the history still covers; an older one gets HTTP 200 and
// then an ERROR event with a 410 Expired Status, as from the kube-apiserver's watch cache.
// resourceVersion "" and "0" start with the current state as ADDED events.
// sendInitialEvents=true with resourceVersionMatch=NotOlderThan (and allowWatchBookmarks)
// streams the state and ends it with a BOOKMARK annotated k8s.io/initial-events-end at the
// state's resourceVersion. Watches with allowWatchBookmarks get a BOOKMARK every
// Options.BookmarkInterval and about 2 s before their timeout, but, as from the watch
// cache, only when the resource has progressed past what the watch delivered (events its
// selectors filtered out); Options.ProgressNotify makes bookmarks carry the global
// resourceVersion instead, as frequent etcd progress notifications would.
// timeoutSeconds ends a watch cleanly, and selectors turn an
// object that stops matching into DELETED (its previous state at the new resourceVersion)
// and one that starts matching into ADDED. Streams are chunked HTTP/1.1, HTTP/2 (with TLS)
// or WebSocket (one event per text message). As from the kube-apiserver, a WebSocket
// handshake needs an Origin header (403 otherwise), and the token may come as the
// base64url.bearer.authorization.k8s.io.<base64url token> subprotocol only next to another
// subprotocol, which the server echoes (401 otherwise). Continue tokens carry the
// resourceVersion of their snapshot; one the history no longer covers gets 410 Expired.
//
// # Fault injection and observation
//
// Faults are injected from Go, deterministically, per resource or for all (""):
// CutWatches and CutWatchesAfter (clean end of stream), AbortWatches (connection dropped),
// ExpireWatches and SendWatchError (ERROR event), StallWatches (hold the connection and send
// nothing, not even bookmarks, for a duration or until released), SendCorruptFrame,
// SendOversizedFrame, FailRequests (the next N requests of a verb and resource answered with
// 429/500/503/... and Retry-After), Compact (older resourceVersions give 410) and
// SetWriteDelay (slow writes). Options select a server that refuses WebSocket upgrades or
// refuses or ignores sendInitialEvents. Every fault is recorded (Faults, FaultsOf), and so
// is every request (Requests, RequestsFor, RequestsMatching, CountRequests: verb, resource,
// namespace, name, query parameters, status code, protocol). Tests wait on conditions
// without sleeping: WaitFor re-evaluates a condition at every change the server sees,
// WaitForRequest, WaitForWatches and NextWatch (a channel that receives the next opened
// watch) cover the common cases. Create, Get, List, Update, UpdateStatus, Mutate, Patch and
// Delete change state from Go through the same storage as HTTP requests, so watchers see
// the events.
//
// Close ends every watch, closes every connection and returns once every goroutine of the
// server has stopped.
//
// # Known differences from the kube-apiserver
//
//   - JSON only (no protobuf, no CBOR). List items carry apiVersion and kind (the real server
//     omits them in lists of built-in types).
//   - No schema: specs are neither defaulted nor validated (only metadata is: names, labels,
//     finalizer names). Invalid causes are not repeated (the kube-apiserver lists some twice). fieldValidation is accepted and ignored; unknown fields are kept. Tables
//     have only Name and Age columns.
//   - No server-side apply (application/apply-patch+yaml is 415) and no managedFields.
//     Strategic merge patches are applied as JSON merge patches (list merge keys and
//     directives are ignored).
//   - No garbage collector and no namespace controller: ownerReferences and
//     propagationPolicy are ignored; deleting a namespace deletes its objects and the
//     namespace at once (no Terminating phase). Pods are deleted at once (no grace period).
//   - An update of /status changes only .status (the real strategies differ per resource in
//     which metadata they keep).
//   - History is a fixed number of events per resource, not the watch cache's time window plus
//     etcd compaction; Compact stands in for compaction. A watcher that falls more than the
//     history behind is closed (the real server closes watchers whose buffer overflows).
//   - Bookmarks come every BookmarkInterval (default 1 minute) on a fixed timer; the
//     kube-apiserver batches them in one-second buckets and may also carry etcd progress.
//   - The 410 of a watch from a compacted resourceVersion always has the watch cache's
//     message ("too old resource version: X (Y)"); a resource served straight from etcd says
//     "The resourceVersion for the provided watch is too old.".
//   - A list with a selector and a limit returns a continue token only when more matching
//     objects remain (the real server may return one followed by an empty page).
//   - A request for a resourceVersion newer than the server's waits
//     TooLargeResourceVersionWait (default 3 s, as the watch cache) and then fails with 504
//     and the ResourceVersionTooLarge cause, for lists as for watches.
//   - Authentication is one bearer token; there is no authorization, admission, audit,
//     priority and fairness, or aggregated discovery (clients fall back to the legacy form).
//   - Options.RefuseWebSocket answers upgrades with 501 (a real server always accepts them).
//
// The fidelity scenarios in e2e/ run the same requests against apitest and a real
// kube-apiserver and compare codes, reasons and event sequences.
package apitest
