package configmapreplicator

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/informerkit/informerkit/apiclient"
	"github.com/informerkit/informerkit/apitest"
	"github.com/informerkit/informerkit/meta"
)

// APITestResource is the ConfigMapReplication resource for apitest.Server.AddResource (the
// in-process API server's equivalent of installing the CRD).
var APITestResource = apitest.ResourceType{
	Group: Group, Version: Version, Kind: Kind, Plural: Plural,
	ShortNames: []string{"cmr"}, StatusSubresource: true,
}

// crdGVR is the resource of CustomResourceDefinitions.
var crdGVR = meta.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}

// CRDName is the name of the example's CustomResourceDefinition.
const CRDName = Plural + "." + Group

// CRD returns the CustomResourceDefinition of ConfigMapReplication, for a real cluster.
func CRD() map[string]any {
	str := map[string]any{"type": "string"}
	strMap := map[string]any{"type": "object", "additionalProperties": str}
	schema := map[string]any{
		"type": "object",
		"properties": map[string]any{
			"spec": map[string]any{
				"type":     "object",
				"required": []any{"source"},
				"properties": map[string]any{
					"source": map[string]any{"type": "object", "required": []any{"namespace", "name"},
						"properties": map[string]any{"namespace": str, "name": str}},
					"namespaceSelector": map[string]any{"type": "object",
						"properties": map[string]any{"matchLabels": strMap}},
				},
			},
			"status": map[string]any{
				"type": "object",
				"properties": map[string]any{
					"observedGeneration": map[string]any{"type": "integer", "format": "int64"},
					"copies":             map[string]any{"type": "integer"},
					"namespaces":         map[string]any{"type": "array", "items": str},
					"message":            str,
					"conditions": map[string]any{"type": "array", "items": map[string]any{
						"type":     "object",
						"required": []any{"type", "status", "lastTransitionTime", "reason", "message"},
						"properties": map[string]any{
							"type": str, "status": str, "reason": str, "message": str,
							"observedGeneration": map[string]any{"type": "integer", "format": "int64"},
							"lastTransitionTime": map[string]any{"type": "string", "format": "date-time"},
						},
					}},
				},
			},
		},
	}
	return map[string]any{
		"apiVersion": "apiextensions.k8s.io/v1",
		"kind":       "CustomResourceDefinition",
		"metadata":   map[string]any{"name": CRDName},
		"spec": map[string]any{
			"group": Group,
			"scope": "Cluster",
			"names": map[string]any{"kind": Kind, "listKind": Kind + "List", "plural": Plural,
				"singular": "configmapreplication", "shortNames": []any{"cmr"}},
			"versions": []any{map[string]any{
				"name": Version, "served": true, "storage": true,
				"subresources": map[string]any{"status": map[string]any{}},
				"schema":       map[string]any{"openAPIV3Schema": schema},
				"additionalPrinterColumns": []any{
					map[string]any{"name": "Source", "type": "string", "jsonPath": ".spec.source.name"},
					map[string]any{"name": "Copies", "type": "integer", "jsonPath": ".status.copies"},
				},
			}},
		},
	}
}

// InstallCRD creates the CustomResourceDefinition on a real cluster if it does not exist and
// waits until it is established (served). It reports whether it created it, so that the
// caller removes only what it created.
func InstallCRD(ctx context.Context, c *apiclient.Client) (created bool, err error) {
	crds := apiclient.NewResource[*meta.Unstructured](c, crdGVR)
	if _, err := crds.Get(ctx, CRDName, apiclient.GetOptions{}); err == nil {
		return false, waitEstablished(ctx, crds)
	} else if !meta.IsNotFound(err) {
		return false, fmt.Errorf("reading CRD %s: %w", CRDName, err)
	}
	raw, _ := json.Marshal(CRD())
	u := &meta.Unstructured{}
	if err := u.UnmarshalJSON(raw); err != nil {
		return false, err
	}
	if _, err := crds.Create(ctx, u, apiclient.CreateOptions{}); err != nil && !meta.IsAlreadyExists(err) {
		return false, fmt.Errorf("creating CRD %s: %w", CRDName, err)
	}
	return true, waitEstablished(ctx, crds)
}

// waitEstablished polls the CRD's Established condition every 100 ms.
func waitEstablished(ctx context.Context, crds *apiclient.Resource[*meta.Unstructured]) error {
	for {
		u, err := crds.Get(ctx, CRDName, apiclient.GetOptions{})
		if err != nil {
			return fmt.Errorf("reading CRD %s: %w", CRDName, err)
		}
		conds, _, _ := meta.NestedSlice(u.Object, "status", "conditions")
		for _, c := range conds {
			if m, ok := c.(map[string]any); ok && m["type"] == "Established" && m["status"] == "True" {
				return nil
			}
		}
		t := time.NewTimer(100 * time.Millisecond)
		select {
		case <-ctx.Done():
			t.Stop()
			return fmt.Errorf("CRD %s not established: %w", CRDName, ctx.Err())
		case <-t.C:
		}
	}
}

// DeleteCRD deletes the CustomResourceDefinition (and with it every ConfigMapReplication).
func DeleteCRD(ctx context.Context, c *apiclient.Client) error {
	err := apiclient.NewResource[*meta.Unstructured](c, crdGVR).Delete(ctx, CRDName, apiclient.DeleteOptions{})
	if meta.IsNotFound(err) {
		return nil
	}
	return err
}
