// Package apitest is an in-process Kubernetes API server for tests and demos, in the spirit
// of net/http/httptest: NewServer starts a real HTTP server on a loopback port that speaks
// the Kubernetes API (JSON, YAML and, for the built-in kinds, protobuf) faithfully enough that informerkit's reflector, informer and
// controller tests, its demo, apiclient and kubectl all run against it. No test double in
// informerkit fakes the API at a lower level than this.
//
//	s := apitest.NewServerWithOptions(apitest.Options{TLS: true, Token: "t"})
//	defer s.Close()
//	c, _ := apiclient.New(s.Config())          // host, token and CA
//	s.WriteKubeconfig(path)                    // for kubectl and apiclient.LoadConfig
//
// What it serves, as the kube-apiserver does:
//
//   - Discovery with the kube-apiserver's verbs per resource, /openapi/v3, the core, apps,
//     coordination and events.k8s.io resources, the subresources status, scale
//     (deployments, replicasets), binding and eviction (pods), SelfSubjectAccessReview and
//     SelfSubjectRulesReview, and resources added at run time (AddResource, as a CRD would).
//   - get, list, watch, create, update, update of /status, patch (JSON patch, JSON merge
//     patch, strategic merge patch by the built-in kinds' merge keys and patch strategies,
//     and server-side apply with managedFields), delete (finalizers, preconditions,
//     dryRun) and deletecollection, with label and field selectors, paging, Tables and
//     PartialObjectMetadata, and the server's Status errors.
//   - One resourceVersion counter for every write; conflicts on stale resourceVersions;
//     generation bumped on spec changes; namespace lifecycle; deletion with finalizers.
//   - Watches from any resourceVersion the bounded history (Options.HistorySize) covers, 410
//     Expired beyond it, bookmarks as the watch cache sends them, sendInitialEvents with the
//     initial-events-end bookmark, timeoutSeconds, selectors turning objects in and out,
//     over chunked HTTP/1.1, HTTP/2 or WebSocket.
//
// Faults are injected from Go, deterministically, per resource or for all (""): CutWatches,
// AbortWatches, ExpireWatches, SendWatchError, StallWatches, PartitionWatches (a stall that
// also stops answering WebSocket pings), SendCorruptFrame, SendOversizedFrame, FailRequests
// (with Retry-After), FailRequestsWithStatus, ResetRequests (no answer: the connection or
// stream is reset, as behind a proxy whose backend is down), Compact and SetWriteDelay;
// Options select a server without WebSocket, without streaming lists or without a watch cache.
// Every fault and request is recorded (Faults, Requests, RequestsMatching, ...), and tests
// wait on state rather than sleep (WaitFor, WaitForRequest, WaitForWatches, NextWatch).
// Create, Get, List, Update, Mutate, Patch and Delete change state from Go through the same
// storage as HTTP requests. Close returns once every goroutine of the server has stopped.
//
// # Known differences from the kube-apiserver
//
//   - YAML bodies are read as YAML 1.2 (the kube-apiserver reads YAML 1.1, where y, n, on
//     and off are booleans).
//   - No CBOR. Protobuf carries quantities as the strings they were written as (the
//     kube-apiserver canonicalises them: "0.5" becomes "500m").
//   - Built-in kinds are decoded, defaulted and validated from kubeschema's table (wrong JSON
//     types 400, unknown fields dropped with a warning or, with fieldValidation=Strict, 400;
//     the server's defaults; required fields and the common rules of pods, workloads,
//     services, configmaps and secrets), but not every rule of the kube-apiserver's
//     validation is there, and updates of pods may change any field. Invalid causes are not
//     repeated (the kube-apiserver lists some twice). Custom resources are stored as sent.
//   - events.k8s.io/v1 and v1 events are stored apart (the kube-apiserver serves one store
//     in both versions). Evictions always succeed (no PodDisruptionBudgets); every access
//     review is allowed. Services get cluster IPs from 10.0.0.0/24 in order, not at random.
//   - Tables of custom resources have Name and Age columns only (no additionalPrinterColumns).
//   - Server-side apply and managedFields follow the kube-apiserver's field manager
//     (conflicts, force, removal of fields dropped from a configuration, list-map keys,
//     before-first-apply, kubectl's last-applied-configuration), but: the fieldsV1 keys of
//     stored objects come back sorted as text (the kube-apiserver orders list keys by
//     value; both describe the same set); the scale subresource takes no apply (its
//     updates and patches move spec.replicas to their manager as on the kube-apiserver);
//     bindings and evictions keep managedFields as they are; applies of CBOR are not
//     taken; managedFields entries of another API version are kept as written rather than
//     converted. The Go helpers write as the
//     field manager "apitest". Custom resources take apply by their OpenAPIV3Schema's list
//     and map types (deduced from the values without one) and, as on the kube-apiserver,
//     no strategic merge patch (415).
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
//   - Authentication is one bearer token; everything is authorized. Of admission, only the
//     namespace lifecycle, DefaultTolerationSeconds and Priority plugins' effects on pods are
//     there (as in a cluster without the ServiceAccount plugin, like e2e's); no audit,
//     priority and fairness, or aggregated discovery (clients fall back to the legacy form).
//   - Discovery lists only the subresources apitest serves (no pods/log, exec, proxy ...).
//   - The OpenAPI v3 documents carry schemas and the operations' query parameters, not the
//     full operation descriptions; there is no OpenAPI v2 (kubectl uses v3).
//   - Protobuf is served for the built-in kinds and for PartialObjectMetadata of any
//     resource, as by the kube-apiserver; YAML for everything but watches.
//   - Options.RefuseWebSocket answers upgrades with 501 (a real server always accepts them).
//
// The fidelity scenarios in e2e/ run the same requests against apitest and a real
// kube-apiserver and compare codes, reasons and event sequences.
package apitest
