// Package apitest is an in-process Kubernetes API server for tests and demos, in the spirit
// of net/http/httptest: NewServer starts a real HTTP server on a loopback port that speaks
// the Kubernetes API (JSON, YAML and, for the built-in kinds, protobuf) faithfully enough
// that informerkit's tests, apiclient, client-go, controller-runtime and kubectl run
// against it.
//
//	s := apitest.NewServerWithOptions(apitest.Options{TLS: true, Token: "t"})
//	defer s.Close()
//	c, _ := apiclient.New(s.Config())          // host, token and CA
//	s.WriteKubeconfig(path)                    // for kubectl and apiclient.LoadConfig
//
// It serves discovery (legacy and aggregated) and OpenAPI v3; every built-in resource of
// the pinned kube-apiserver, from a table generated from a recording of it, with a fresh
// cluster's namespaces and kubernetes Service; CustomResourceDefinitions with their
// lifecycle, and resources added at run time (AddResource); every verb with
// selectors, paging, Tables, patches, server-side apply and managedFields; and watches with
// bookmarks and sendInitialEvents over HTTP/1.1, HTTP/2 or WebSocket.
//
// Faults are injected from Go, deterministically, through Server.Faults
// (srv.Faults().CutWatches, StallWatches, FailRequests, ResetRequests, ...), and per client
// through Server.Clients (Kill, write hooks, held views). Every fault and request is
// recorded, and tests wait on state rather than sleep (WaitFor, WaitForRequest, WaitForWatches, NextWatch). Create,
// Get, List, Update, Mutate, Patch and Delete change state from Go through the same
// storage as HTTP requests. Close returns once every goroutine of the server has stopped.
//
// docs/apitest.md says what is served, lists the faults, shows how the package is laid
// out, and lists the known differences from the kube-apiserver.
package apitest
