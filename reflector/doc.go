// Package reflector is client-go's Reflector, typed: it keeps a Store in step with one
// collection on a Kubernetes API server by listing it (LIST or a streaming list), then
// watching it from the list's resourceVersion and applying every event, re-watching or
// relisting as the server requires. In an informer the Store is the DeltaFIFO.
//
//	pods := apiclient.NewResource[*Pod](client, podsGVR) // an apiclient.ListerWatcher[*Pod]
//	r := reflector.New(pods, store, reflector.Options[*Pod]{})
//	go r.Run(ctx) // until ctx is done
//
// As in client-go:
//
//   - The first LIST is at resourceVersion "0", paged by 500; relists are at the last synced
//     resourceVersion, unpaged (unless the first list came back paged: no watch cache); ""
//     only after a 410 or a "too large resourceVersion".
//   - WATCH from the last synced resourceVersion with bookmarks and a timeoutSeconds in
//     [300, 600]; every event, bookmark included, advances that resourceVersion.
//   - A clean close re-watches without a relist; an ERROR 410, a watch closed within a
//     second without events (ErrVeryShortWatch) and other failures relist; 429 and
//     connection refused back off and re-watch.
//   - Backoff from 800 ms, ×2, jitter 1.0, capped at 30 s (the zero Backoff).
//   - "Too large resourceVersion" is recognised in the forms of every kube-apiserver
//     version (meta.IsTooLargeResourceVersion) and leads to a list at "".
//   - WatchList: a WATCH with sendInitialEvents ends its initial state with the bookmark
//     annotated k8s.io/initial-events-end, then goes on as the watch.
//   - Resync calls Store.Resync every ResyncPeriod (when ShouldResync agrees).
//
// Where it differs from client-go:
//
//   - A watch that cannot be opened is opened again from the last resourceVersion after the
//     backoff, unless the answer says the resourceVersion or the request is unusable (410,
//     too large, a 4xx other than 429): a connection reset, an EOF, a timeout or a 5xx too,
//     where client-go relists once its REST layer's retries (10, a second apart) run out.
//     Behind a proxy whose API server is down, client-go relists every informer.
//   - A watch whose connection breaks (reset, unexpected EOF, a dead connection found by the
//     WebSocket or HTTP/2 health check) is reported as ErrConnectionLost and counted
//     (Stats().ConnectionsLost) before the re-watch; client-go takes it for a clean close.
//   - The backoff restarts from Initial once the reflector has been healthy for as long as
//     the last delay, not only after 2 min without failure, so a second outage soon after a
//     first is not waited out at the first one's delays (see Backoff).
//   - A Backoff with any field set reads Jitter as wait.Backoff does (0: none); the zero
//     Backoff has client-go's jitter of 1.0.
//   - MaxInternalErrorRetryDuration re-opens a watch ended by a 500 after the backoff delay;
//     client-go re-opens it at once.
//   - A 410 on a continue page falls back to one unpaged list at the first page's
//     resourceVersion, where client-go lists at the resourceVersion it first asked for
//     (often "0", any age): items of the first pages may have reached the store already
//     (IncrementalReplacer), and it must not go back in time from them.
//   - ResourceVersionUpdater is told the resourceVersion of every list as well as of every
//     event and bookmark (client-go: events and bookmarks only), so a store following it
//     (the informer's freshness) sees a relist move it too.
//   - A Store that implements IncrementalReplacer gets a relist item by item (page by page,
//     event by event, or through the ListerWatcher's ListEach), so a relist never holds the
//     whole list next to the whole cache.
//   - A watch without event or bookmark for StallTimeout (3 min) is re-opened from the last
//     resourceVersion without a relist (Stats().Stalls, Staleness).
//   - WatchListAuto remembers a server that refuses or ignores streaming lists, for an hour.
//   - Any answer with Retry-After is treated as 429, and no delay is shorter than it.
//   - WatchErrorHandler sees every error, recovered ones included, as *Error naming the
//     reflector and the operation; Stats counts lists, watches, events, stalls and times.
//   - LISTs go out with apiclient.ListOptions.DisableRetries: the client's retries would
//     hide 429 and Retry-After from the reflector's backoff.
//
// The relist memory figures are in bench/README.md, "Relist memory".
package reflector
