package multicluster

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"

	"github.com/informerkit/informerkit/apiclient"
	"github.com/informerkit/informerkit/informer"
	"github.com/informerkit/informerkit/labels"
	"github.com/informerkit/informerkit/meta"
)

// The names cluster-inventory-api (sigs.k8s.io/cluster-inventory-api) gives its labels,
// conditions and extensions.
const (
	// ClusterManagerLabel names the cluster manager that published a ClusterProfile
	// (ClusterProfilesOptions.ClusterManager selects on it).
	ClusterManagerLabel = "x-k8s.io/cluster-manager"
	// ControlPlaneHealthy is the condition of a ClusterProfile whose cluster's control plane
	// is healthy.
	ControlPlaneHealthy = "ControlPlaneHealthy"
	// ExecExtension is the cluster extension passed to an exec plugin as
	// KUBERNETES_EXEC_INFO's spec.cluster.config (apiclient.ExecConfig.ClusterConfig).
	ExecExtension = "client.authentication.k8s.io/exec"
	// ExecArgsExtension holds further arguments of the exec plugin (a JSON list of
	// strings), used as AccessProvider.ProfileArgs says (KEP-5339).
	ExecArgsExtension = "clusterprofiles.multicluster.x-k8s.io/exec/additional-args"
	// ExecEnvExtension holds further environment variables of the exec plugin (a JSON
	// object of strings), used as AccessProvider.ProfileEnv says (KEP-5339).
	ExecEnvExtension = "clusterprofiles.multicluster.x-k8s.io/exec/additional-envs"
)

// ClusterProfilesResource is the resource of cluster-inventory-api's ClusterProfiles.
var ClusterProfilesResource = meta.GroupVersionResource{Group: "multicluster.x-k8s.io", Version: "v1alpha1", Resource: "clusterprofiles"}

// ClusterProfile declares the fields of a cluster-inventory-api ClusterProfile
// (multicluster.x-k8s.io/v1alpha1) that a ClusterProfiles provider reads.
type ClusterProfile struct {
	meta.TypeMeta
	meta.ObjectMeta `json:"metadata"`
	Spec            ClusterProfileSpec   `json:"spec"`
	Status          ClusterProfileStatus `json:"status,omitempty"`
}

// ClusterProfileSpec is a ClusterProfile's spec.
type ClusterProfileSpec struct {
	DisplayName    string `json:"displayName,omitempty"`
	ClusterManager struct {
		Name string `json:"name"`
	} `json:"clusterManager"`
}

// ClusterProfileStatus is a ClusterProfile's status: its conditions and the ways to reach
// its cluster. CredentialProviders is the deprecated name of AccessProviders; an access
// provider of AccessProviders wins over one of the same name there.
type ClusterProfileStatus struct {
	Conditions          []ProfileCondition `json:"conditions,omitempty"`
	AccessProviders     []ProfileAccess    `json:"accessProviders,omitempty"`
	CredentialProviders []ProfileAccess    `json:"credentialProviders,omitempty"`
}

// ProfileCondition is a condition of a ClusterProfile (the fields read).
type ProfileCondition struct {
	Type   string `json:"type"`
	Status string `json:"status"`
	Reason string `json:"reason,omitempty"`
}

// ProfileAccess is one way of reaching a profile's cluster: the name of an access provider
// the consumer knows, and the cluster's connection details.
type ProfileAccess struct {
	Name    string         `json:"name"`
	Cluster ProfileCluster `json:"cluster"`
}

// ProfileCluster is the connection information of a profile's cluster (a kubeconfig's
// cluster entry).
type ProfileCluster struct {
	Server                   string             `json:"server"`
	TLSServerName            string             `json:"tls-server-name,omitempty"`
	InsecureSkipTLSVerify    bool               `json:"insecure-skip-tls-verify,omitempty"`
	CertificateAuthorityData []byte             `json:"certificate-authority-data,omitempty"`
	ProxyURL                 string             `json:"proxy-url,omitempty"`
	DisableCompression       bool               `json:"disable-compression,omitempty"`
	Extensions               []ProfileExtension `json:"extensions,omitempty"`
}

// ProfileExtension is a named extension of a ProfileCluster.
type ProfileExtension struct {
	Name      string          `json:"name"`
	Extension json.RawMessage `json:"extension"`
}

// Healthy reports whether the profile's ControlPlaneHealthy condition is True.
func (p *ClusterProfile) Healthy() bool {
	for _, c := range p.Status.Conditions {
		if c.Type == ControlPlaneHealthy {
			return c.Status == "True"
		}
	}
	return false
}

// Access returns the profile's access provider called name: from AccessProviders, else
// from the deprecated CredentialProviders.
func (p *ClusterProfile) Access(name string) (ProfileAccess, bool) {
	for _, list := range [][]ProfileAccess{p.Status.AccessProviders, p.Status.CredentialProviders} {
		for _, a := range list {
			if a.Name == name {
				return a, true
			}
		}
	}
	return ProfileAccess{}, false
}

// ProfileConfigFunc turns a ClusterProfile into the configuration of its cluster's API
// client. It runs on the provider's goroutine: keep it quick (no request to the cluster).
// An error leaves the cluster with its last Config (none, for a new one).
type ProfileConfigFunc func(ctx context.Context, p *ClusterProfile) (*apiclient.Config, error)

// ClusterProfilesOptions are a ClusterProfiles provider's settings. Config or Access must
// say how a profile becomes a client configuration.
type ClusterProfilesOptions struct {
	// Namespace holds the ClusterProfiles (default "": every namespace).
	Namespace string
	// ClusterManager, if set, selects the profiles of that cluster manager only (label
	// ClusterManagerLabel).
	ClusterManager string
	// LabelSelector selects the profiles further (default: all).
	LabelSelector labels.Selector
	// Config turns a profile into its cluster's configuration. Default: Access's.
	Config ProfileConfigFunc
	// Access is cluster-inventory-api's consumer convention (an access provider file:
	// LoadAccessConfig), used when Config is nil.
	Access *AccessConfig
	// IgnoreHealth engages a profile whatever its ControlPlaneHealthy condition. Default
	// false: a profile is engaged once the condition is True; an engaged one that turns
	// unhealthy stays engaged (the Fleet's own outage handling parks its Requests).
	IgnoreHealth bool
	// Logger receives the profiles that could not be used (default slog.Default()).
	Logger *slog.Logger
}

// ClusterProfiles is a Provider of the clusters of a cluster inventory: the ClusterProfiles
// (multicluster.x-k8s.io/v1alpha1) of a hub, watched (an informer of them alone, on the
// given client). Each selected profile is a cluster named namespace/name (as
// multicluster-runtime names them), set once it is healthy and its Config is made, set
// again when its Config changes, removed when the profile is deleted or unselected.
type ClusterProfiles struct {
	api  *apiclient.Client
	opts ClusterProfilesOptions
	sel  labels.Selector
}

// NewClusterProfiles returns a ClusterProfiles provider of the profiles api reads. It fails
// for a nil client and for options with neither Config nor Access.
func NewClusterProfiles(api *apiclient.Client, opts ClusterProfilesOptions) (*ClusterProfiles, error) {
	if api == nil {
		return nil, errors.New("multicluster: NewClusterProfiles: nil client")
	}
	if opts.Config == nil {
		if opts.Access == nil {
			return nil, errors.New("multicluster: NewClusterProfiles: neither Config nor Access says how to reach a profile's cluster")
		}
		opts.Config = opts.Access.ClusterConfig
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	sel := opts.LabelSelector
	if opts.ClusterManager != "" {
		req, err := labels.NewRequirement(ClusterManagerLabel, labels.Equals, []string{opts.ClusterManager})
		if err != nil {
			return nil, fmt.Errorf("multicluster: NewClusterProfiles: ClusterManager: %w", err)
		}
		sel = labels.NewSelector(append(sel.Requirements(), req)...)
	}
	return &ClusterProfiles{api: api, opts: opts, sel: sel}, nil
}

// Run implements Provider: it watches the profiles until ctx is done.
func (p *ClusterProfiles) Run(ctx context.Context, set ClusterSet) error {
	f := informer.NewFactoryWithOptions(p.api, informer.FactoryOptions{Namespace: p.opts.Namespace, Logger: p.opts.Logger})
	ref := informer.AcquireWithOptions[*ClusterProfile](f, ClusterProfilesResource,
		informer.InformerForOptions{Namespace: p.opts.Namespace, LabelSelector: p.sel})
	defer f.Shutdown()
	defer ref.Release()
	engaged := map[string]bool{} // the clusters this run set (the handler's own: its events come one at a time)
	_, err := ref.Informer().AddEventHandler(informer.ResourceEventHandlerFuncs[*ClusterProfile]{
		AddFunc:    func(cp *ClusterProfile, _ bool) { p.apply(ctx, set, engaged, cp) },
		UpdateFunc: func(_, cp *ClusterProfile) { p.apply(ctx, set, engaged, cp) },
		DeleteFunc: func(cp *ClusterProfile, _ bool) {
			name := cp.Namespace + "/" + cp.Name
			delete(engaged, name)
			set.Remove(name)
		},
	})
	if err != nil {
		return fmt.Errorf("multicluster: ClusterProfiles: %w", err)
	}
	f.Start(ctx)
	<-ctx.Done()
	return nil
}

// apply sets the cluster of profile cp (engaged: those set so far).
func (p *ClusterProfiles) apply(ctx context.Context, set ClusterSet, engaged map[string]bool, cp *ClusterProfile) {
	name := cp.Namespace + "/" + cp.Name
	log := p.opts.Logger.With("clusterprofile", name)
	if !p.opts.IgnoreHealth && !engaged[name] && !cp.Healthy() {
		log.Debug("cluster profile not healthy yet; not engaged")
		return
	}
	cfg, err := p.opts.Config(ctx, cp)
	if err == nil && cfg == nil {
		err = errors.New("no Config")
	}
	if err != nil {
		log.Warn("cluster profile not used; its cluster keeps its last Config", "err", err)
		return
	}
	if err := set.Set(name, cfg); err != nil {
		log.Warn("cluster profile not used", "err", err)
		return
	}
	engaged[name] = true
}
