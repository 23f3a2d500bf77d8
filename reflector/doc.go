// Package reflector keeps a Store in step with one collection on a Kubernetes API server:
// it lists the collection into the store, then watches it from the list's resourceVersion and
// applies every event, re-watching or relisting as the server requires. It is the first stage
// of an informer (see package informer) and plays the role of client-go's
// tools/cache/reflector.go.
//
// # Wiring
//
// A reflector writes into anything that implements Store; in an informer that is a
// deltafifo.FIFO, whose consumer (the informer's handleDeltas) updates an indexer:
//
//	fifo := deltafifo.New(keyFunc, deltafifo.Options[*Pod]{KnownObjects: idx})
//	pods := apiclient.NewResource[*Pod](client, podsGVR) // an apiclient.ListerWatcher[*Pod]
//	r := reflector.New(pods, fifo, reflector.Options[*Pod]{ResyncPeriod: 10 * time.Minute})
//	go r.Run(ctx) // until ctx is done
//	// elsewhere: fifo.Pop(ctx, process) in a loop
//
// An indexer.Indexer can also be the Store directly when no per-event processing is needed.
//
// # Correspondence with client-go
//
//	client-go (tools/cache)                  informerkit (reflector)
//	Reflector, NewReflectorWithOptions       Reflector[T], New(lw, store, Options[T])
//	ReflectorStore                           Store[T]
//	ResourceVersionUpdater                   ResourceVersionUpdater
//	RunWithContext / ListAndWatchWithContext Run / ListAndWatch
//	LastSyncResourceVersion                  LastSyncResourceVersion
//	WatchListPageSize                        Options.PageSize
//	ShouldResync, resyncPeriod               Options.ShouldResync, Options.ResyncPeriod
//	WatchErrorHandlerWithContext             Options.WatchErrorHandler
//	VeryShortWatchError                      ErrVeryShortWatch
//	WatchListClient feature gate             Options.WatchList (auto/on/off)
//	(none)                                   IncrementalReplacer, StreamingLister, Stats,
//	                                         Staleness, Options.StallTimeout
//
// # Behaviour (as client-go)
//
//   - The first LIST is at resourceVersion "0" (the server may answer from its watch cache);
//     relists are at the last synced resourceVersion; "" (a consistent read) only after the
//     server answered 410 Expired/Gone or "too large resourceVersion", and then at once.
//   - LISTs at "" or "0" are paged with limit 500; a 410 on a continue page falls back to one
//     unpaged list. Lists at a specific resourceVersion are unpaged (see Options.PageSize),
//     unless the first list at "0" came back paged (a server without a watch cache): then
//     every later list is paged too.
//   - WATCH at the last synced resourceVersion with allowWatchBookmarks=true and a
//     timeoutSeconds random in [300, 600]. Every event, BOOKMARK included, advances the last
//     synced resourceVersion.
//   - A watch that closes cleanly is re-opened from the last synced resourceVersion, with no
//     relist. An ERROR 410 leads to a relist (at the last synced resourceVersion: a LIST at a
//     resourceVersion is "not older than", so it usually succeeds). 429 and connection refused
//     back off and re-watch. A watch closed within a second without any event
//     (ErrVeryShortWatch) and every other failure lead to a relist.
//   - Between attempts: exponential backoff from 800 ms, ×2, jitter 1.0, capped at 30 s,
//     reset after 2 minutes without failure (Options.Backoff). All timing uses the time
//     package, so tests can drive it with testing/synctest.
//   - Streaming lists (WatchList): a WATCH with sendInitialEvents=true,
//     resourceVersionMatch=NotOlderThan and the last synced resourceVersion ("" the first
//     time: a consistent read). The ADDED events are the list; the BOOKMARK annotated
//     k8s.io/initial-events-end ends it and gives its resourceVersion; the same stream then
//     continues as the watch.
//   - Resync: every ResyncPeriod, Store.Resync is called if ShouldResync agrees. It causes
//     no server traffic.
//
// # Where it does better than client-go
//
//   - Relist without doubling memory. client-go holds the whole new list next to the whole
//     old cache during a relist (and, for WatchList, in a temporary store). A Store that
//     implements IncrementalReplacer is handed the list item by item, page by page or event
//     by event, and computes deletions itself at the end; with an in-place store the extra
//     heap of a relist drops from the size of the whole list to one page (paged LIST) or to
//     almost nothing (WatchList). An unpaged LIST (client-go's choice for relists at a
//     resourceVersion, so that the watch cache serves them) is still decoded whole, unless
//     the ListerWatcher implements StreamingLister. See "Relist memory" below.
//   - Watch-stall detection: a watch that delivers no event and no bookmark for StallTimeout
//     (default 3 min) is re-opened from the last synced resourceVersion without a relist.
//     Stats().Stalls counts them and Staleness tells readiness checks how current the store
//     is. A server sends bookmarks only when it has something to confirm; on a resource that
//     stays quiet for longer than StallTimeout in a quiet cluster, the cost is one watch
//     re-opened from the watch cache per StallTimeout (client-go re-opens every 5-10 min
//     anyway). Raise StallTimeout, or set it negative, for many such informers.
//   - WatchList fallback is remembered (WatchListAuto): a server that refuses or ignores
//     sendInitialEvents costs one failed attempt per hour, not one per relist. A server that
//     ignores the parameter is detected by a non-initial event before the end bookmark or by
//     WatchListTimeout (default 30 s) without progress.
//   - Any answer carrying Retry-After (typically 503 during overload) is treated like 429:
//     back off at least that long and re-watch, instead of adding a relist to the load.
//   - Retry-After is honoured: a delay is never shorter than what the server asked for.
//   - WatchErrorHandler sees every error, including those recovered without a relist;
//     errors are *Error values that name the reflector (the resource) and the operation.
//   - Stats reports lists, relists, watches, events, bookmarks, stalls, resyncs and times.
//     Its Lists and Relists counters move after the store already has the new list (after
//     Replace or Replacement.Finish returned), so a consumer may see a relist's effects
//     before the counters do.
//   - The reflector's LISTs go out with apiclient.ListOptions.DisableRetries: the
//     client's own retries (5 attempts from 250 ms) would sit under the reflector's backoff,
//     hide 429 and Retry-After from it and delay a failing LIST by seconds.
//
// # Relist memory
//
// BenchmarkRelistPeakHeap relists 10,000 objects of about 1.3 KB into a full cache and
// measures the live heap above the steady state (after a forced GC at the store's fullest
// moments; apitest runs in the same process):
//
//	                  Replace              IncrementalReplacer
//	LIST, unpaged     2.1 KB/obj, 20 MiB   0.05 KB/obj, 0.5 MiB (the ListerWatcher's ListEach)
//	LIST, paged       2.1 KB/obj, 20 MiB   0.05 KB/obj, 0.5 MiB (the store's set of seen keys)
//	WatchList         2.1 KB/obj, 20 MiB   0.2-0.4 KB/obj, 2-4 MiB (transport buffers in flight)
//
// (medians of 6 runs; the WatchList figure is about 0.2 KB/obj over chunked HTTP and 0.4 over
// WebSocket.) Without a StreamingLister an unpaged LIST is decoded whole: 2.0 KB/obj even
// with an IncrementalReplacer.
//
// The same measurement on a whole informer (package informer, BenchmarkRelistPeakHeap: 20,000
// pod-sized objects, the DeltaFIFO and cache of an informer, relist forced by a 410):
//
//	                  Replace (relist extra / cache)   IncrementalReplacer (the default)
//	LIST, unpaged     133 MiB, 7.0 KB/obj (4.8x)       2.7 MiB, 0.14 KB/obj (0.10x)
//	LIST, paged        94 MiB, 4.9 KB/obj (3.4x)       2.8 MiB, 0.15 KB/obj (0.10x)
//	WatchList          91 MiB, 4.8 KB/obj (3.3x)       4.9 MiB, 0.26 KB/obj (0.18x)
//
// (medians of 5 runs; a cache of 27.8 MiB with structural sharing, 93.7 MiB without it: the
// extra memory is the same either way, because a whole-list Replace holds the decoded
// objects before the transform and sharing shrink them.)
package reflector
