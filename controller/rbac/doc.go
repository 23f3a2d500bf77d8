// Package rbac is the permissions a controller needs, declared rather than written by hand:
// a Rule is verbs on a resource (in a namespace, or all), Merge joins the rules of many
// declarations, Manifest writes the ClusterRole and Roles that grant them (with bindings to
// a service account), and Check asks the API server, one SelfSubjectAccessReview per verb,
// whether the client has them, returning one error that names every missing verb and
// resource.
//
// A controller.Manager collects the rules of its informers, of the controllers the Builder
// made (what they watch, own and write the status of), of its event recorders and of its
// leader election Lease (Manager.Permissions), and checks them at Start; a
// controller/runner.Runner gives the same list for a whole controller manager without a
// server (Runner.Permissions), which cmd/controller-manager -print-rbac prints.
package rbac
