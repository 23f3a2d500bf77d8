// Package apiclient is informerkit's hand-written Kubernetes API client: configuration
// (kubeconfig, in-cluster, exec plugins), transport and authentication, the REST verbs, LIST
// and WATCH (chunked HTTP/2 and WebSocket), discovery and response decoding. The objects it
// reads and writes are package meta's: user-declared structs embedding meta.TypeMeta and
// meta.ObjectMeta, decoded field by field so that undeclared fields cost nothing.
// It plays the role of client-go's rest, kubernetes, dynamic, discovery and clientcmd.
//
//	c, _ := apiclient.New(cfg) // cfg from LoadConfig
//	pods := apiclient.NewResource[*Pod](c, podsGVR).Namespace("default")
//	pod, err := pods.Get(ctx, "web-1", apiclient.GetOptions{})
//
// A *Resource[T] has client-go's verbs (Get, List, Watch, Create, Update, UpdateStatus,
// Patch, Apply, Delete, DeleteCollection) and is a ListerWatcher[T]. Errors from the server
// are *meta.Status values (meta.IsNotFound, meta.IsConflict, ...); a stream that cannot be
// decoded is a *DecodeError.
//
// Where it differs from client-go (docs/apiclient.md has the details):
//
//   - Watches go over WebSocket (one connection each, with pings), which costs
//     kube-apiserver less per event; WatchChunked shares the HTTP/2 connection as
//     client-go does. A dead connection ends its watches within seconds, with a timeout in
//     the watcher's Err.
//   - ListEach decodes a LIST item by item, so an unpaged list is never held whole.
//   - The client-side limiter defaults to 50 QPS, burst 100; DisableRetries sends a GET once
//     for callers with a backoff of their own. Errors and logs never contain credentials.
//   - Against a hostile server (docs/hostile-servers.md): no credentials over plain HTTP or
//     to another host, a deadline on every wait, objects of another kind skipped.
//   - Built-in kinds are read as protobuf (client-go's Accept header), decoded straight into
//     the caller's struct by a plan compiled per type; custom resources, Unstructured and
//     DisableProtobuf read JSON. The response's Content-Type decides; request bodies are JSON.
package apiclient
