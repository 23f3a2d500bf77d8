package main

import (
	"context"
	"fmt"
	"sync/atomic"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/informerkit/informerkit/bench/internal/fleet"
)

// clients returns the driver's clients: rate limits far above what the server takes, so
// that seeding and bursts measure the server, not a limiter.
func clients(kubeconfig string) (*kubernetes.Clientset, *dynamic.DynamicClient, error) {
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		return nil, nil, err
	}
	cfg.QPS, cfg.Burst = 5000, 10000
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, nil, err
	}
	dyn, err := dynamic.NewForConfig(cfg)
	return cs, dyn, err
}

// seed writes deployments Deployments of replicas Pods each (the fleet's, status included,
// the Pods controlled by their Deployment as the controllers expect them) and apps
// Applications (the fleet's custom resource). A Deployment that exists already is left as
// it is, with its Pods. The Applications' ConfigMaps are the controllers' to create.
func seed(ctx context.Context, cs kubernetes.Interface, dyn dynamic.Interface, deployments, replicas, apps, workers int, progress func(string)) error {
	for n := range fleet.Namespaces {
		ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: fleet.Namespace(n)}}
		if _, err := cs.CoreV1().Namespaces().Create(ctx, ns, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
			return err
		}
	}
	var pods atomic.Int64
	err := fleet.Parallel(ctx, workers, deployments, func(d int) error {
		created, err := fleet.CreateDeployment(ctx, cs, fleet.Deployment(d, replicas))
		if err != nil || created == nil {
			return err
		}
		yes := true
		owner := []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "Deployment", Name: created.Name, UID: created.UID,
			Controller: &yes, BlockOwnerDeletion: &yes}}
		for r := range replicas {
			p := fleet.Pod(d, r, "")
			p.OwnerReferences = owner
			cp, err := cs.CoreV1().Pods(p.Namespace).Create(ctx, p, metav1.CreateOptions{})
			if err != nil {
				return err
			}
			fleet.PodStatus(cp, d*replicas+r)
			if _, err := cs.CoreV1().Pods(p.Namespace).UpdateStatus(ctx, cp, metav1.UpdateOptions{}); err != nil {
				return err
			}
			if n := pods.Add(1); n%5000 == 0 {
				progress(fmt.Sprintf("pods %d/%d", n, deployments*replicas))
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("deployments: %w", err)
	}
	if err := fleet.SeedApplications(ctx, dyn, apps, workers, progress); err != nil {
		return fmt.Errorf("applications: %w", err)
	}
	return nil
}
