package admission

import (
	"github.com/informerkit/informerkit/apitest/internal/jsonobj"
	"github.com/informerkit/informerkit/meta"
)

// PrepareForStatusUpdate is what the status strategy of kind gvk keeps of the stored
// object old in obj, the object an update of /status stores: a pod's QoS class, immutable
// once set.
func PrepareForStatusUpdate(gvk meta.GroupVersionKind, obj, old map[string]any) {
	if groupKind(gvk) != "/Pod" {
		return
	}
	if st := jsonobj.Map(obj["status"]); st != nil && jsonobj.Str(st, "qosClass") == "" {
		if q := jsonobj.StrAt(old, "status", "qosClass"); q != "" {
			st["qosClass"] = q
		}
	}
}

// userMetadata are the metadata fields an update may change (the system ones, uid,
// creationTimestamp, generation..., stay as stored whatever the client sends).
var userMetadata = []string{"labels", "annotations", "finalizers", "ownerReferences"}

// statusKeepsNoMetadata are the kinds whose status strategy resets every metadata field
// (metav1.ResetObjectMetaForStatus, or the whole ObjectMeta copied back).
var statusKeepsNoMetadata = map[string]bool{
	"admissionregistration.k8s.io/ValidatingAdmissionPolicy":  true,
	"apiregistration.k8s.io/APIService":                       true,
	"certificates.k8s.io/PodCertificateRequest":               true,
	"flowcontrol.apiserver.k8s.io/FlowSchema":                 true,
	"flowcontrol.apiserver.k8s.io/PriorityLevelConfiguration": true,
	"internal.apiserver.k8s.io/StorageVersion":                true,
	"networking.k8s.io/ServiceCIDR":                           true,
	"resource.k8s.io/DeviceTaintRule":                         true,
	"resource.k8s.io/ResourceClaim":                           true,
	"resource.k8s.io/ResourcePoolStatusRequest":               true,
	"scheduling.k8s.io/PodGroup":                              true,
	"storage.k8s.io/VolumeAttachment":                         true,
	"storagemigration.k8s.io/StorageVersionMigration":         true,
}

// StatusMetadata returns the metadata fields an update of the /status of kind gvk takes
// from the client's object, as the kind's status strategy in the kube-apiserver: most
// built-in kinds keep labels, annotations, finalizers and owner references changed
// with the status (their strategies reset only the spec), a Deployment's labels and a
// Pod's owner references are reset, the kinds of statusKeepsNoMetadata and custom
// resources keep none of them (the CustomResourceDefinition strategy means to reset
// them too but resets the new metadata from itself, so a CRD keeps them all).
func StatusMetadata(gvk meta.GroupVersionKind, custom bool) []string {
	gk := groupKind(gvk)
	switch {
	case custom || statusKeepsNoMetadata[gk]:
		return nil
	case gk == "apps/Deployment":
		return []string{"annotations", "finalizers", "ownerReferences"}
	case gk == "/Pod":
		return []string{"labels", "annotations", "finalizers"}
	}
	return userMetadata
}
