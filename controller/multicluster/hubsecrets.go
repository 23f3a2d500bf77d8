package multicluster

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"

	"github.com/informerkit/informerkit/apiclient"
	"github.com/informerkit/informerkit/informer"
	"github.com/informerkit/informerkit/labels"
	"github.com/informerkit/informerkit/meta"
)

// Defaults of HubSecretsOptions.
const (
	// DefaultSecretLabel, "true" on a Secret, makes it a cluster of a HubSecrets provider.
	DefaultSecretLabel = "multicluster.informerkit.dev/kubeconfig"
	// DefaultSecretKey is the key of a Secret's data that holds the kubeconfig.
	DefaultSecretKey = "kubeconfig"
)

// HubSecretsOptions are a HubSecrets provider's optional settings.
type HubSecretsOptions struct {
	// Namespace holds the Secrets (default: the client's namespace, else "default").
	Namespace string
	// LabelSelector selects the Secrets (default, for an empty one: DefaultSecretLabel=true).
	LabelSelector labels.Selector
	// Key is the data key of the kubeconfig (default DefaultSecretKey).
	Key string
	// Logger receives the Secrets that could not be used (default slog.Default()).
	Logger *slog.Logger
}

// HubSecrets is a Provider of the clusters whose kubeconfigs are Secrets of a cluster (the
// hub, as a rule): one cluster per selected Secret of one namespace, named after the
// Secret, reached with the current context of the kubeconfig under its Key. The Secrets are
// watched (an informer of them alone, on the given client): a new or changed Secret sets
// its cluster, a deleted or unselected one removes it. A Secret without the key, or whose
// kubeconfig does not parse, is logged, and its cluster keeps its last Config. The
// kubeconfig must be self-contained (certificates and keys as data, not file paths); an
// exec plugin it names runs on the controller's host.
type HubSecrets struct {
	api  *apiclient.Client
	opts HubSecretsOptions
}

// NewHubSecrets returns a HubSecrets provider of the Secrets api reads. It fails for a nil
// client.
func NewHubSecrets(api *apiclient.Client, opts HubSecretsOptions) (*HubSecrets, error) {
	if api == nil {
		return nil, errors.New("multicluster: NewHubSecrets: nil client")
	}
	if opts.Namespace == "" {
		opts.Namespace = api.Namespace()
	}
	if opts.Namespace == "" {
		opts.Namespace = "default"
	}
	if opts.LabelSelector.Empty() {
		opts.LabelSelector = labels.SelectorFromSet(map[string]string{DefaultSecretLabel: "true"})
	}
	if opts.Key == "" {
		opts.Key = DefaultSecretKey
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	return &HubSecrets{api: api, opts: opts}, nil
}

// kubeconfigSecret declares the fields of a Secret a HubSecrets reads.
type kubeconfigSecret struct {
	meta.TypeMeta
	meta.ObjectMeta `json:"metadata"`
	Data            map[string][]byte `json:"data,omitempty"`
}

var secretsResource = meta.GroupVersionResource{Version: "v1", Resource: "secrets"}

// Run implements Provider: it watches the Secrets until ctx is done.
func (p *HubSecrets) Run(ctx context.Context, set ClusterSet) error {
	f := informer.NewFactoryWithOptions(p.api, informer.FactoryOptions{Namespace: p.opts.Namespace, Logger: p.opts.Logger})
	ref := informer.AcquireWithOptions[*kubeconfigSecret](f, secretsResource,
		informer.InformerForOptions{Namespace: p.opts.Namespace, LabelSelector: p.opts.LabelSelector})
	defer f.Shutdown()
	defer ref.Release()
	_, err := ref.Informer().AddEventHandler(informer.ResourceEventHandlerFuncs[*kubeconfigSecret]{
		AddFunc:    func(s *kubeconfigSecret, _ bool) { p.apply(set, s) },
		UpdateFunc: func(_, s *kubeconfigSecret) { p.apply(set, s) },
		DeleteFunc: func(s *kubeconfigSecret, _ bool) { set.Remove(s.Name) },
	})
	if err != nil {
		return fmt.Errorf("multicluster: HubSecrets: %w", err)
	}
	f.Start(ctx)
	<-ctx.Done()
	return nil
}

// apply sets the cluster of Secret s from its kubeconfig.
func (p *HubSecrets) apply(set ClusterSet, s *kubeconfigSecret) {
	log := p.opts.Logger.With("secret", s.Namespace+"/"+s.Name)
	data, ok := s.Data[p.opts.Key]
	if !ok {
		log.Warn("secret has no kubeconfig; its cluster keeps its last Config", "key", p.opts.Key)
		return
	}
	cfg, err := kubeconfigFromBytes(data)
	if err != nil {
		log.Warn("secret's kubeconfig not used; its cluster keeps its last Config", "err", err)
		return
	}
	if err := set.Set(s.Name, cfg); err != nil {
		log.Warn("secret's kubeconfig not used", "err", err)
	}
}

// kubeconfigFromBytes parses a kubeconfig held in memory: apiclient reads kubeconfigs from
// files only, so it is written to a private temporary directory (mode 0700, the file 0600)
// for the time of the reading, then removed.
func kubeconfigFromBytes(data []byte) (*apiclient.Config, error) {
	dir, err := os.MkdirTemp("", "multicluster-kubeconfig-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "kubeconfig")
	if err := os.WriteFile(path, data, 0o600); err != nil {
		return nil, err
	}
	cfg, err := apiclient.LoadConfigWithOptions(apiclient.LoadOptions{Kubeconfig: path})
	if err != nil {
		return nil, fmt.Errorf("the secret's kubeconfig: %w", err)
	}
	return cfg, nil
}
