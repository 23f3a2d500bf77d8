// Package widgets is the controller docs/getting-started.md builds from nothing: a Widget
// custom resource that keeps one Pod running its image and reports when it is Ready. Its
// CRD is generated from the type's markers (crd.yaml, go generate), its roles from what
// the controller declares (go run ./cmd/widgets -rbac), and its test runs on the workbench
// (controller/controllertest) with simulated nodes in a synctest bubble.
package widgets
