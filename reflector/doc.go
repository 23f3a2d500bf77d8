// Package reflector is client-go's Reflector, typed: it keeps a Store in step with one
// collection on a Kubernetes API server by listing it (LIST or a streaming list), then
// watching it from the list's resourceVersion and applying every event, re-watching or
// relisting as the server requires. In an informer the Store is the DeltaFIFO.
//
//	pods := apiclient.NewResource[*Pod](client, podsGVR) // an apiclient.ListerWatcher[*Pod]
//	r := reflector.New(pods, store, reflector.Options[*Pod]{})
//	go r.Run(ctx) // until ctx is done
//
// As in client-go, the first LIST is at resourceVersion "0", paged by 500; the WATCH goes on
// from the last synced resourceVersion, with bookmarks; a clean close re-watches, a 410
// relists, and failures back off (from 800 ms, ×2, jitter 1.0, capped at 30 s: the zero
// Backoff). WatchList streams the initial state over a WATCH with sendInitialEvents.
//
// Where it differs from client-go, in short (docs/reflector.md lists every rule):
//
//   - A watch that cannot be opened (reset, EOF, timeout, 5xx) is opened again from the last
//     resourceVersion after the backoff instead of relisting; a broken connection is
//     reported as ErrConnectionLost, not taken for a clean close.
//   - A watch without event or bookmark for StallTimeout (3 min) is re-opened from the last
//     resourceVersion without a relist (Stats().Stalls, Staleness).
//   - A Store that implements IncrementalReplacer gets a relist item by item, so a relist
//     never holds the whole list next to the whole cache.
//   - Retry-After is honoured on any answer; WatchErrorHandler sees every error as *Error;
//     Stats counts lists, watches, events, stalls and times.
//
// The relist memory figures are in bench/README.md, "Relist memory".
package reflector
