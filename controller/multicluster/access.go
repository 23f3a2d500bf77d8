package multicluster

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os"
	"slices"

	"github.com/informerkit/informerkit/apiclient"
)

// How an AccessProvider uses the arguments and environment variables a profile adds
// (ExecArgsExtension, ExecEnvExtension), as cluster-inventory-api's provider file names
// them.
const (
	// ProfileArgsIgnore (or "") ignores the profile's arguments.
	ProfileArgsIgnore = "Ignore"
	// ProfileArgsAppend appends them to the plugin's.
	ProfileArgsAppend = "Append"
	// ProfileEnvIgnore (or "") ignores the profile's environment variables.
	ProfileEnvIgnore = "Ignore"
	// ProfileEnvAppendIfNotExists adds those the plugin's configuration does not set.
	ProfileEnvAppendIfNotExists = "AppendIfNotExists"
	// ProfileEnvReplace adds them all, replacing the configuration's of the same name.
	ProfileEnvReplace = "Replace"
)

// AccessConfig is the consumer's side of cluster-inventory-api's access providers: the
// exec plugins it can run, by name (the JSON file multicluster-runtime and Kueue take as
// --clusterprofile-provider-file). A profile's cluster is reached through the first of
// Providers that the profile names in its status: its server, CA, TLS server name and
// proxy from the profile, its credentials from the plugin.
type AccessConfig struct {
	Providers []AccessProvider `json:"providers"`
}

// AccessProvider is one exec plugin of an AccessConfig.
type AccessProvider struct {
	// Name is the access provider's name in the profiles' status.accessProviders.
	Name string `json:"name"`
	// ExecConfig runs the plugin (a kubeconfig's user.exec).
	ExecConfig AccessExec `json:"execConfig"`
	// ProfileArgs says what to do with the profile's ExecArgsExtension (ProfileArgsIgnore,
	// ProfileArgsAppend).
	ProfileArgs string `json:"profileSourcedCLIArgsPolicy,omitempty"`
	// ProfileEnv says what to do with the profile's ExecEnvExtension (ProfileEnvIgnore,
	// ProfileEnvAppendIfNotExists, ProfileEnvReplace).
	ProfileEnv string `json:"profileSourcedEnvVarsPolicy,omitempty"`
}

// AccessExec is an exec plugin's configuration in an access provider file.
type AccessExec struct {
	APIVersion         string                 `json:"apiVersion,omitempty"`
	Command            string                 `json:"command"`
	Args               []string               `json:"args,omitempty"`
	Env                []apiclient.ExecEnvVar `json:"env,omitempty"`
	ProvideClusterInfo bool                   `json:"provideClusterInfo,omitempty"`
	InteractiveMode    string                 `json:"interactiveMode,omitempty"`
}

// LoadAccessConfig reads an access provider file (JSON).
func LoadAccessConfig(path string) (*AccessConfig, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("multicluster: access provider file: %w", err)
	}
	var c AccessConfig
	if err := json.Unmarshal(data, &c); err != nil {
		return nil, fmt.Errorf("multicluster: access provider file %s: %w", path, err)
	}
	for i, p := range c.Providers {
		if p.Name == "" || p.ExecConfig.Command == "" {
			return nil, fmt.Errorf("multicluster: access provider file %s: provider %d has no name or no command", path, i)
		}
	}
	return &c, nil
}

// ClusterConfig is a ProfileConfigFunc: the configuration of profile p's cluster through the
// first of the config's providers that p names. The plugin's environment lists its
// variables sorted by name after the profile's are merged, so that the same profile gives an
// equal Config (and the Fleet does not engage its cluster again).
func (a *AccessConfig) ClusterConfig(_ context.Context, p *ClusterProfile) (*apiclient.Config, error) {
	for _, prov := range a.Providers {
		acc, ok := p.Access(prov.Name)
		if !ok {
			continue
		}
		return prov.config(acc.Cluster)
	}
	return nil, fmt.Errorf("%w (%d configured)", ErrNoAccessProvider, len(a.Providers))
}

// ErrNoAccessProvider: the profile names none of the AccessConfig's providers in its status.
var ErrNoAccessProvider = errors.New("multicluster: no access provider of the profile is configured")

// config is the configuration of cluster cl through the provider's plugin.
func (prov *AccessProvider) config(cl ProfileCluster) (*apiclient.Config, error) {
	e := prov.ExecConfig
	exec := &apiclient.ExecConfig{
		Command: e.Command, Args: slices.Clone(e.Args), APIVersion: e.APIVersion,
		InteractiveMode: e.InteractiveMode, ProvideClusterInfo: e.ProvideClusterInfo,
	}
	env := map[string]string{}
	for _, v := range e.Env {
		env[v.Name] = v.Value
	}
	for _, ext := range cl.Extensions {
		switch ext.Name {
		case ExecExtension:
			exec.ClusterConfig = slices.Clone(ext.Extension)
		case ExecArgsExtension:
			switch prov.ProfileArgs {
			case "", ProfileArgsIgnore:
			case ProfileArgsAppend:
				var args []string
				if err := json.Unmarshal(ext.Extension, &args); err != nil {
					return nil, fmt.Errorf("extension %s: %w", ext.Name, err)
				}
				exec.Args = append(exec.Args, args...)
			default:
				return nil, fmt.Errorf("access provider %s: unknown profileSourcedCLIArgsPolicy %q", prov.Name, prov.ProfileArgs)
			}
		case ExecEnvExtension:
			if prov.ProfileEnv == "" || prov.ProfileEnv == ProfileEnvIgnore {
				continue
			}
			if prov.ProfileEnv != ProfileEnvAppendIfNotExists && prov.ProfileEnv != ProfileEnvReplace {
				return nil, fmt.Errorf("access provider %s: unknown profileSourcedEnvVarsPolicy %q", prov.Name, prov.ProfileEnv)
			}
			var vars map[string]string
			if err := json.Unmarshal(ext.Extension, &vars); err != nil {
				return nil, fmt.Errorf("extension %s: %w", ext.Name, err)
			}
			for k, v := range vars {
				if _, set := env[k]; !set || prov.ProfileEnv == ProfileEnvReplace {
					env[k] = v
				}
			}
		}
	}
	for _, k := range slices.Sorted(maps.Keys(env)) {
		exec.Env = append(exec.Env, apiclient.ExecEnvVar{Name: k, Value: env[k]})
	}
	cfg := &apiclient.Config{
		Host:     cl.Server,
		TLS:      apiclient.TLSConfig{CAData: slices.Clone(cl.CertificateAuthorityData), ServerName: cl.TLSServerName, Insecure: cl.InsecureSkipTLSVerify},
		ProxyURL: cl.ProxyURL,
		Exec:     exec,
	}
	if cl.DisableCompression {
		cfg.Compression = apiclient.CompressionNone
	}
	return cfg, nil
}
