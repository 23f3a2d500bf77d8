// Package apitest is an in-process Kubernetes API server for tests and demos, in the
// spirit of net/http/httptest: NewServer starts a real HTTP server on loopback that speaks
// the Kubernetes API faithfully enough for informerkit's reflector, informer and controller
// tests, its demo, and kubectl.
//
// Known differences from the real apiserver are listed at the end of this comment.
package apitest
