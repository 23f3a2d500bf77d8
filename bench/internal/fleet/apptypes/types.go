// Package apptypes holds the Go types of the benchmarks' custom resource, Application
// (shaped as Argo CD's), apart from package fleet so that a program can declare the
// resource without importing client-go: they depend only on informerkit's meta (for
// meta.Time). Package fleet re-exports them and writes the objects.
package apptypes

import "github.com/informerkit/informerkit/meta"

// ApplicationSpec is what an Application deploys.
type ApplicationSpec struct {
	Project              string                      `json:"project"`
	Source               AppSource                   `json:"source"`
	Destination          AppDestination              `json:"destination"`
	SyncPolicy           *SyncPolicy                 `json:"syncPolicy,omitempty"`
	IgnoreDifferences    []ResourceIgnoreDifferences `json:"ignoreDifferences,omitempty"`
	Info                 []Info                      `json:"info,omitempty"`
	RevisionHistoryLimit *int64                      `json:"revisionHistoryLimit,omitempty"`
}

// AppSource is a Git repository, a path in it and a revision, with Helm settings.
type AppSource struct {
	RepoURL        string      `json:"repoURL"`
	Path           string      `json:"path,omitempty"`
	TargetRevision string      `json:"targetRevision,omitempty"`
	Helm           *HelmSource `json:"helm,omitempty"`
}

// HelmSource holds Helm's values files and parameters.
type HelmSource struct {
	ReleaseName string          `json:"releaseName,omitempty"`
	ValueFiles  []string        `json:"valueFiles,omitempty"`
	Parameters  []HelmParameter `json:"parameters,omitempty"`
}

// HelmParameter is one --set.
type HelmParameter struct {
	Name        string `json:"name"`
	Value       string `json:"value"`
	ForceString bool   `json:"forceString,omitempty"`
}

// AppDestination is a cluster and a namespace.
type AppDestination struct {
	Server    string `json:"server"`
	Namespace string `json:"namespace"`
}

// SyncPolicy says when and how to sync.
type SyncPolicy struct {
	Automated   *SyncPolicyAutomated `json:"automated,omitempty"`
	SyncOptions []string             `json:"syncOptions,omitempty"`
	Retry       *RetryStrategy       `json:"retry,omitempty"`
}

// SyncPolicyAutomated are the automated sync's settings.
type SyncPolicyAutomated struct {
	Prune    bool `json:"prune"`
	SelfHeal bool `json:"selfHeal"`
}

// RetryStrategy is how failed syncs are retried.
type RetryStrategy struct {
	Limit   int64   `json:"limit"`
	Backoff Backoff `json:"backoff"`
}

// Backoff is a retry backoff.
type Backoff struct {
	Duration    string `json:"duration"`
	Factor      int64  `json:"factor"`
	MaxDuration string `json:"maxDuration"`
}

// ResourceIgnoreDifferences are parts of resources a diff ignores.
type ResourceIgnoreDifferences struct {
	Group        string   `json:"group"`
	Kind         string   `json:"kind"`
	JSONPointers []string `json:"jsonPointers"`
}

// Info is a name and a value shown to users.
type Info struct {
	Name  string `json:"name"`
	Value string `json:"value"`
}

// ApplicationStatus is what the controller observed.
type ApplicationStatus struct {
	Resources      []ResourceStatus   `json:"resources,omitempty"`
	Sync           SyncStatus         `json:"sync"`
	Health         HealthStatus       `json:"health"`
	History        []RevisionHistory  `json:"history,omitempty"`
	Conditions     []AppCondition     `json:"conditions,omitempty"`
	ReconciledAt   *meta.Time         `json:"reconciledAt,omitempty"`
	OperationState *OperationState    `json:"operationState,omitempty"`
	SourceType     string             `json:"sourceType,omitempty"`
	Summary        ApplicationSummary `json:"summary"`
}

// ResourceStatus is one resource the Application manages.
type ResourceStatus struct {
	Group     string        `json:"group,omitempty"`
	Version   string        `json:"version"`
	Kind      string        `json:"kind"`
	Namespace string        `json:"namespace"`
	Name      string        `json:"name"`
	Status    string        `json:"status"`
	Health    *HealthStatus `json:"health,omitempty"`
}

// SyncStatus compares the live state with the revision.
type SyncStatus struct {
	Status     string     `json:"status"`
	Revision   string     `json:"revision"`
	ComparedTo ComparedTo `json:"comparedTo"`
}

// ComparedTo is the source and destination a comparison used.
type ComparedTo struct {
	Source      AppSource      `json:"source"`
	Destination AppDestination `json:"destination"`
}

// HealthStatus is a health and why.
type HealthStatus struct {
	Status  string `json:"status"`
	Message string `json:"message,omitempty"`
}

// RevisionHistory is one deploy.
type RevisionHistory struct {
	ID              int64     `json:"id"`
	Revision        string    `json:"revision"`
	DeployedAt      meta.Time `json:"deployedAt"`
	DeployStartedAt meta.Time `json:"deployStartedAt"`
	Source          AppSource `json:"source"`
}

// AppCondition is a condition of the Application.
type AppCondition struct {
	Type               string     `json:"type"`
	Message            string     `json:"message"`
	LastTransitionTime *meta.Time `json:"lastTransitionTime,omitempty"`
}

// OperationState is the last operation.
type OperationState struct {
	Phase      string               `json:"phase"`
	Message    string               `json:"message"`
	SyncResult *SyncOperationResult `json:"syncResult,omitempty"`
	StartedAt  meta.Time            `json:"startedAt"`
	FinishedAt meta.Time            `json:"finishedAt"`
}

// SyncOperationResult is a sync's result per resource.
type SyncOperationResult struct {
	Revision  string           `json:"revision"`
	Resources []ResourceResult `json:"resources,omitempty"`
}

// ResourceResult is one resource's sync result.
type ResourceResult struct {
	Group     string `json:"group"`
	Version   string `json:"version"`
	Kind      string `json:"kind"`
	Namespace string `json:"namespace"`
	Name      string `json:"name"`
	Status    string `json:"status"`
	Message   string `json:"message"`
	SyncPhase string `json:"syncPhase"`
}

// ApplicationSummary lists what users look at.
type ApplicationSummary struct {
	ExternalURLs []string `json:"externalURLs,omitempty"`
	Images       []string `json:"images,omitempty"`
}
