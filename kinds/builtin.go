// This table was taken from the discovery documents of kube-apiserver v1.37.2: the preferred
// version of every built-in resource that can be watched. e2e's
// TestBuiltinKindsMatchDiscovery fails if it drifts from what the server serves (on v1.36.3
// it expects the four kinds new in 1.37 to be missing and CSINode without status).

package kinds

// The built-in kinds of Kubernetes v1.37, at their preferred versions. Register a Go type
// with one of them (Register[*MyPod](kinds.Pod)) so that no group, version, kind or resource
// string appears at a call site.
var (
	ConfigMap                        = Info{Version: "v1", Kind: "ConfigMap", Resource: "configmaps", Namespaced: true}
	Endpoints                        = Info{Version: "v1", Kind: "Endpoints", Resource: "endpoints", Namespaced: true}
	Event                            = Info{Version: "v1", Kind: "Event", Resource: "events", Namespaced: true}
	LimitRange                       = Info{Version: "v1", Kind: "LimitRange", Resource: "limitranges", Namespaced: true}
	Namespace                        = Info{Version: "v1", Kind: "Namespace", Resource: "namespaces", StatusSubresource: true}
	Node                             = Info{Version: "v1", Kind: "Node", Resource: "nodes", StatusSubresource: true}
	PersistentVolume                 = Info{Version: "v1", Kind: "PersistentVolume", Resource: "persistentvolumes", StatusSubresource: true}
	PersistentVolumeClaim            = Info{Version: "v1", Kind: "PersistentVolumeClaim", Resource: "persistentvolumeclaims", Namespaced: true, StatusSubresource: true}
	Pod                              = Info{Version: "v1", Kind: "Pod", Resource: "pods", Namespaced: true, StatusSubresource: true}
	PodTemplate                      = Info{Version: "v1", Kind: "PodTemplate", Resource: "podtemplates", Namespaced: true}
	ReplicationController            = Info{Version: "v1", Kind: "ReplicationController", Resource: "replicationcontrollers", Namespaced: true, StatusSubresource: true}
	ResourceQuota                    = Info{Version: "v1", Kind: "ResourceQuota", Resource: "resourcequotas", Namespaced: true, StatusSubresource: true}
	Secret                           = Info{Version: "v1", Kind: "Secret", Resource: "secrets", Namespaced: true}
	Service                          = Info{Version: "v1", Kind: "Service", Resource: "services", Namespaced: true, StatusSubresource: true}
	ServiceAccount                   = Info{Version: "v1", Kind: "ServiceAccount", Resource: "serviceaccounts", Namespaced: true}
	MutatingAdmissionPolicy          = Info{Group: "admissionregistration.k8s.io", Version: "v1", Kind: "MutatingAdmissionPolicy", Resource: "mutatingadmissionpolicies"}
	MutatingAdmissionPolicyBinding   = Info{Group: "admissionregistration.k8s.io", Version: "v1", Kind: "MutatingAdmissionPolicyBinding", Resource: "mutatingadmissionpolicybindings"}
	MutatingWebhookConfiguration     = Info{Group: "admissionregistration.k8s.io", Version: "v1", Kind: "MutatingWebhookConfiguration", Resource: "mutatingwebhookconfigurations"}
	ValidatingAdmissionPolicy        = Info{Group: "admissionregistration.k8s.io", Version: "v1", Kind: "ValidatingAdmissionPolicy", Resource: "validatingadmissionpolicies", StatusSubresource: true}
	ValidatingAdmissionPolicyBinding = Info{Group: "admissionregistration.k8s.io", Version: "v1", Kind: "ValidatingAdmissionPolicyBinding", Resource: "validatingadmissionpolicybindings"}
	ValidatingWebhookConfiguration   = Info{Group: "admissionregistration.k8s.io", Version: "v1", Kind: "ValidatingWebhookConfiguration", Resource: "validatingwebhookconfigurations"}
	CustomResourceDefinition         = Info{Group: "apiextensions.k8s.io", Version: "v1", Kind: "CustomResourceDefinition", Resource: "customresourcedefinitions", StatusSubresource: true}
	APIService                       = Info{Group: "apiregistration.k8s.io", Version: "v1", Kind: "APIService", Resource: "apiservices", StatusSubresource: true}
	ControllerRevision               = Info{Group: "apps", Version: "v1", Kind: "ControllerRevision", Resource: "controllerrevisions", Namespaced: true}
	DaemonSet                        = Info{Group: "apps", Version: "v1", Kind: "DaemonSet", Resource: "daemonsets", Namespaced: true, StatusSubresource: true}
	Deployment                       = Info{Group: "apps", Version: "v1", Kind: "Deployment", Resource: "deployments", Namespaced: true, StatusSubresource: true}
	ReplicaSet                       = Info{Group: "apps", Version: "v1", Kind: "ReplicaSet", Resource: "replicasets", Namespaced: true, StatusSubresource: true}
	StatefulSet                      = Info{Group: "apps", Version: "v1", Kind: "StatefulSet", Resource: "statefulsets", Namespaced: true, StatusSubresource: true}
	HorizontalPodAutoscaler          = Info{Group: "autoscaling", Version: "v2", Kind: "HorizontalPodAutoscaler", Resource: "horizontalpodautoscalers", Namespaced: true, StatusSubresource: true}
	CronJob                          = Info{Group: "batch", Version: "v1", Kind: "CronJob", Resource: "cronjobs", Namespaced: true, StatusSubresource: true}
	Job                              = Info{Group: "batch", Version: "v1", Kind: "Job", Resource: "jobs", Namespaced: true, StatusSubresource: true}
	CertificateSigningRequest        = Info{Group: "certificates.k8s.io", Version: "v1", Kind: "CertificateSigningRequest", Resource: "certificatesigningrequests", StatusSubresource: true}
	ClusterTrustBundle               = Info{Group: "certificates.k8s.io", Version: "v1", Kind: "ClusterTrustBundle", Resource: "clustertrustbundles"}
	PodCertificateRequest            = Info{Group: "certificates.k8s.io", Version: "v1", Kind: "PodCertificateRequest", Resource: "podcertificaterequests", Namespaced: true, StatusSubresource: true}
	Lease                            = Info{Group: "coordination.k8s.io", Version: "v1", Kind: "Lease", Resource: "leases", Namespaced: true}
	EndpointSlice                    = Info{Group: "discovery.k8s.io", Version: "v1", Kind: "EndpointSlice", Resource: "endpointslices", Namespaced: true}
	EventsV1Event                    = Info{Group: "events.k8s.io", Version: "v1", Kind: "Event", Resource: "events", Namespaced: true}
	FlowSchema                       = Info{Group: "flowcontrol.apiserver.k8s.io", Version: "v1", Kind: "FlowSchema", Resource: "flowschemas", StatusSubresource: true}
	PriorityLevelConfiguration       = Info{Group: "flowcontrol.apiserver.k8s.io", Version: "v1", Kind: "PriorityLevelConfiguration", Resource: "prioritylevelconfigurations", StatusSubresource: true}
	IPAddress                        = Info{Group: "networking.k8s.io", Version: "v1", Kind: "IPAddress", Resource: "ipaddresses"}
	Ingress                          = Info{Group: "networking.k8s.io", Version: "v1", Kind: "Ingress", Resource: "ingresses", Namespaced: true, StatusSubresource: true}
	IngressClass                     = Info{Group: "networking.k8s.io", Version: "v1", Kind: "IngressClass", Resource: "ingressclasses"}
	NetworkPolicy                    = Info{Group: "networking.k8s.io", Version: "v1", Kind: "NetworkPolicy", Resource: "networkpolicies", Namespaced: true}
	ServiceCIDR                      = Info{Group: "networking.k8s.io", Version: "v1", Kind: "ServiceCIDR", Resource: "servicecidrs", StatusSubresource: true}
	RuntimeClass                     = Info{Group: "node.k8s.io", Version: "v1", Kind: "RuntimeClass", Resource: "runtimeclasses"}
	PodDisruptionBudget              = Info{Group: "policy", Version: "v1", Kind: "PodDisruptionBudget", Resource: "poddisruptionbudgets", Namespaced: true, StatusSubresource: true}
	ClusterRole                      = Info{Group: "rbac.authorization.k8s.io", Version: "v1", Kind: "ClusterRole", Resource: "clusterroles"}
	ClusterRoleBinding               = Info{Group: "rbac.authorization.k8s.io", Version: "v1", Kind: "ClusterRoleBinding", Resource: "clusterrolebindings"}
	Role                             = Info{Group: "rbac.authorization.k8s.io", Version: "v1", Kind: "Role", Resource: "roles", Namespaced: true}
	RoleBinding                      = Info{Group: "rbac.authorization.k8s.io", Version: "v1", Kind: "RoleBinding", Resource: "rolebindings", Namespaced: true}
	DeviceClass                      = Info{Group: "resource.k8s.io", Version: "v1", Kind: "DeviceClass", Resource: "deviceclasses"}
	DeviceTaintRule                  = Info{Group: "resource.k8s.io", Version: "v1", Kind: "DeviceTaintRule", Resource: "devicetaintrules", StatusSubresource: true}
	ResourceClaim                    = Info{Group: "resource.k8s.io", Version: "v1", Kind: "ResourceClaim", Resource: "resourceclaims", Namespaced: true, StatusSubresource: true}
	ResourceClaimTemplate            = Info{Group: "resource.k8s.io", Version: "v1", Kind: "ResourceClaimTemplate", Resource: "resourceclaimtemplates", Namespaced: true}
	ResourceSlice                    = Info{Group: "resource.k8s.io", Version: "v1", Kind: "ResourceSlice", Resource: "resourceslices"}
	PriorityClass                    = Info{Group: "scheduling.k8s.io", Version: "v1", Kind: "PriorityClass", Resource: "priorityclasses"}
	CSIDriver                        = Info{Group: "storage.k8s.io", Version: "v1", Kind: "CSIDriver", Resource: "csidrivers"}
	CSINode                          = Info{Group: "storage.k8s.io", Version: "v1", Kind: "CSINode", Resource: "csinodes", StatusSubresource: true}
	CSIStorageCapacity               = Info{Group: "storage.k8s.io", Version: "v1", Kind: "CSIStorageCapacity", Resource: "csistoragecapacities", Namespaced: true}
	StorageClass                     = Info{Group: "storage.k8s.io", Version: "v1", Kind: "StorageClass", Resource: "storageclasses"}
	VolumeAttachment                 = Info{Group: "storage.k8s.io", Version: "v1", Kind: "VolumeAttachment", Resource: "volumeattachments", StatusSubresource: true}
	VolumeAttributesClass            = Info{Group: "storage.k8s.io", Version: "v1", Kind: "VolumeAttributesClass", Resource: "volumeattributesclasses"}
	StorageVersionMigration          = Info{Group: "storagemigration.k8s.io", Version: "v1", Kind: "StorageVersionMigration", Resource: "storageversionmigrations", StatusSubresource: true}
)

// builtin lists every value above, in the order of the table.
var builtin = []Info{
	ConfigMap,
	Endpoints,
	Event,
	LimitRange,
	Namespace,
	Node,
	PersistentVolume,
	PersistentVolumeClaim,
	Pod,
	PodTemplate,
	ReplicationController,
	ResourceQuota,
	Secret,
	Service,
	ServiceAccount,
	MutatingAdmissionPolicy,
	MutatingAdmissionPolicyBinding,
	MutatingWebhookConfiguration,
	ValidatingAdmissionPolicy,
	ValidatingAdmissionPolicyBinding,
	ValidatingWebhookConfiguration,
	CustomResourceDefinition,
	APIService,
	ControllerRevision,
	DaemonSet,
	Deployment,
	ReplicaSet,
	StatefulSet,
	HorizontalPodAutoscaler,
	CronJob,
	Job,
	CertificateSigningRequest,
	ClusterTrustBundle,
	PodCertificateRequest,
	Lease,
	EndpointSlice,
	EventsV1Event,
	FlowSchema,
	PriorityLevelConfiguration,
	IPAddress,
	Ingress,
	IngressClass,
	NetworkPolicy,
	ServiceCIDR,
	RuntimeClass,
	PodDisruptionBudget,
	ClusterRole,
	ClusterRoleBinding,
	Role,
	RoleBinding,
	DeviceClass,
	DeviceTaintRule,
	ResourceClaim,
	ResourceClaimTemplate,
	ResourceSlice,
	PriorityClass,
	CSIDriver,
	CSINode,
	CSIStorageCapacity,
	StorageClass,
	VolumeAttachment,
	VolumeAttributesClass,
	StorageVersionMigration,
}
