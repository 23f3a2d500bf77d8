// Package multicluster runs one controller over a fleet of clusters that come and go while
// it runs. A Provider says which clusters exist (Manual: the program's own list;
// KubeconfigDir: a directory of kubeconfig files; HubSecrets: Secrets holding them;
// ClusterProfiles: a cluster inventory's ClusterProfiles); the
// Fleet engages each one as it appears (an API client, an informer factory, a controller
// client and event recorders of its own, the informers its controllers watch acquired)
// and disengages it when it goes (every informer released, every goroutine ended). A
// Controller's Requests name their cluster:
//
//	mgr, _ := controller.NewManager(hubConfig, controller.ManagerOptions{})
//	fleet, _ := multicluster.New(mgr, provider, multicluster.Options{})
//	c, _ := multicluster.NewController(fleet, "copy", reconciler, multicluster.ControllerOptions{})
//	_ = multicluster.Watch(c, controller.EnqueueRequestForObject[*ConfigMap]())    // each cluster's
//	_ = multicluster.WatchHub(c, controller.EnqueueRequestForObject[*ConfigMap]()) // the hub's, for all
//	mgr.Start(ctx)
//
// The Manager is the hub's (the cluster the controller runs in): it runs the Fleet and the
// controllers, elects a leader and serves /metrics, whose cluster labels are bounded
// (Options.MetricsClusters). One cluster never delays another: the queue is fair across
// clusters, a cluster holds at most ControllerOptions.MaxConcurrentReconcilesPerCluster
// workers, backoff is per cluster, and the Requests of a cluster that does not answer wait
// aside (parked) until it does, holding no worker. With Options.Spread the clusters are
// spread over the replicas of the Manager's sharding ring, each placed by rendezvous
// hashing and handed over without a double reconcile, with warm standbys (Options.Standby).
// An idle engaged cluster costs its informers' goroutines and caches, and no goroutine per
// cluster or per source of the controllers'.
package multicluster
