// Package compat runs clients nobody in this project wrote (client-go, controller-runtime,
// kubectl) against apitest with their default settings, and checks kubeproto against
// k8s.io/apimachinery's protobuf serializer. It is a nested module so that the root module
// stays free of k8s.io imports.
package compat
