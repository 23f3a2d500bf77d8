package configmapreplicator

import (
	"context"
	"fmt"
	"time"

	"github.com/informerkit/informerkit/apiclient"
	"github.com/informerkit/informerkit/meta"

	"go.yaml.in/yaml/v3"
)

// crdGVR is the resource of CustomResourceDefinitions.
var crdGVR = meta.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}

// CRDName is the name of the example's CustomResourceDefinition.
var CRDName = ReplicationKind.Resource + "." + ReplicationKind.Group

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
	var obj map[string]any
	if err := yaml.Unmarshal(CRDYAML, &obj); err != nil {
		return false, err
	}
	u := &meta.Unstructured{Object: obj}
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
