package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/informerkit/informerkit/bench/internal/fleet"
)

// widgetCRD is the custom resource the recorded bodies include.
var widgetCRD = map[string]any{
	"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
	"metadata": map[string]any{"name": "widgets.bench.informerkit.dev"},
	"spec": map[string]any{
		"group": "bench.informerkit.dev", "scope": "Namespaced",
		"names": map[string]any{"plural": "widgets", "singular": "widget", "kind": "Widget", "listKind": "WidgetList"},
		"versions": []any{map[string]any{
			"name": "v1", "served": true, "storage": true,
			"subresources": map[string]any{"status": map[string]any{}},
			"schema": map[string]any{"openAPIV3Schema": map[string]any{
				"type": "object", "x-kubernetes-preserve-unknown-fields": true,
			}},
		}},
	},
}

var widgetGVR = schema.GroupVersionResource{Group: "bench.informerkit.dev", Version: "v1", Resource: "widgets"}

// record seeds a small fleet and writes the JSON bodies the server serves for one object of
// each kind (and a list of pods) into dir, byte for byte, and the protobuf bodies of the same
// pod, list and Deployment (".pb").
func record(ctx context.Context, cfg *rest.Config, dir string) error {
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return err
	}
	if _, err := fleet.Seed(ctx, cs, 40, 10, 4, nil); err != nil {
		return fmt.Errorf("seed: %w", err)
	}
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return err
	}
	crds := schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}
	if _, err := dyn.Resource(crds).Create(ctx, &unstructured.Unstructured{Object: widgetCRD}, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return err
	}
	widget := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "bench.informerkit.dev/v1", "kind": "Widget",
		"metadata": map[string]any{"name": "w1", "namespace": fleet.Namespace(0), "labels": map[string]any{"tier": "gold"}},
		"spec": map[string]any{"size": 3, "ratio": 0.25, "enabled": true, "tags": []any{"a", "b\u00e9"},
			"nested": map[string]any{"deep": map[string]any{"list": []any{1, map[string]any{"x": nil}}}}},
	}}
	// The CRD takes a moment to be served.
	for {
		created, err := dyn.Resource(widgetGVR).Namespace(fleet.Namespace(0)).Create(ctx, widget, metav1.CreateOptions{})
		if err == nil {
			created.Object["status"] = map[string]any{"phase": "Ready", "observedGeneration": 1,
				"conditions": []any{map[string]any{"type": "Ready", "status": "True", "lastTransitionTime": "2026-03-01T10:00:00Z"}}}
			_, err = dyn.Resource(widgetGVR).Namespace(fleet.Namespace(0)).UpdateStatus(ctx, created, metav1.UpdateOptions{})
		}
		if err == nil || apierrors.IsAlreadyExists(err) {
			break
		}
		if !apierrors.IsNotFound(err) {
			return err
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(200 * time.Millisecond):
		}
	}
	ns := fleet.Namespace(0)
	pods, err := cs.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{Limit: 1})
	if err != nil || len(pods.Items) == 0 {
		return fmt.Errorf("no pod to record: %v", err)
	}
	deps, err := cs.AppsV1().Deployments(ns).List(ctx, metav1.ListOptions{Limit: 1})
	if err != nil || len(deps.Items) == 0 {
		return fmt.Errorf("no deployment to record: %v", err)
	}
	cms, err := cs.CoreV1().ConfigMaps(ns).List(ctx, metav1.ListOptions{Limit: 1, LabelSelector: "app.kubernetes.io/managed-by=bench"})
	if err != nil || len(cms.Items) == 0 {
		return fmt.Errorf("no configmap to record: %v", err)
	}
	bodies := map[string]string{
		"pod.json":        "/api/v1/namespaces/" + ns + "/pods/" + pods.Items[0].Name,
		"deployment.json": "/apis/apps/v1/namespaces/" + ns + "/deployments/" + deps.Items[0].Name,
		"configmap.json":  "/api/v1/namespaces/" + ns + "/configmaps/" + cms.Items[0].Name,
		"widget.json":     "/apis/bench.informerkit.dev/v1/namespaces/" + ns + "/widgets/w1",
		"podlist.json":    "/api/v1/pods?limit=20",
		"pod.pb":          "/api/v1/namespaces/" + ns + "/pods/" + pods.Items[0].Name,
		"podlist.pb":      "/api/v1/pods?limit=20",
		"deployment.pb":   "/apis/apps/v1/namespaces/" + ns + "/deployments/" + deps.Items[0].Name,
	}
	client, err := rest.HTTPClientFor(cfg)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	for file, path := range bodies {
		req, err := http.NewRequestWithContext(ctx, "GET", cfg.Host+path, nil)
		if err != nil {
			return err
		}
		req.Header.Set("Accept", "application/json")
		if filepath.Ext(file) == ".pb" {
			req.Header.Set("Accept", "application/vnd.kubernetes.protobuf")
		}
		resp, err := client.Do(req)
		if err != nil {
			return err
		}
		body, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil {
			return err
		}
		if resp.StatusCode != http.StatusOK {
			return fmt.Errorf("GET %s: %s: %s", path, resp.Status, body)
		}
		if err := os.WriteFile(filepath.Join(dir, file), body, 0o644); err != nil {
			return err
		}
		fmt.Printf("recorded %s (%d bytes) from %s\n", file, len(body), path)
	}
	return nil
}
