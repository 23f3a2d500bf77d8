package deployment

// The generated manifests: the roles the controller needs, from what it declares.
//
//go:generate go run ../../cmd/controller-manager -controllers=minideployment -rbac rbac.yaml -rbac-name minideployment -service-account minideployment
