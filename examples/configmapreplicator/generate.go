package configmapreplicator

// The generated manifests: the roles the controller needs, from what it declares.
//
//go:generate go run ../../cmd/controller-manager -controllers=configmap-replicator -rbac rbac.yaml -rbac-name configmap-replicator -service-account configmap-replicator
