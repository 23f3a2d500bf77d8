package multicluster

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/informerkit/informerkit/apiclient"
)

// DefaultKubeconfigScanInterval is how often a KubeconfigDir reads its directory again.
const DefaultKubeconfigScanInterval = 10 * time.Second

// KubeconfigDirOptions are a KubeconfigDir's optional settings.
type KubeconfigDirOptions struct {
	// Interval is the time between two readings of the directory (default
	// DefaultKubeconfigScanInterval). A file written between two readings is seen at the
	// next one.
	Interval time.Duration
	// Logger receives the files that could not be used (default slog.Default()).
	Logger *slog.Logger
}

// KubeconfigDir is a Provider of the clusters of a directory of kubeconfig files, one
// cluster per file, as a Secret or ConfigMap volume mounts them: the cluster is named after
// the file (its name without the extension .yaml, .yml, .kubeconfig or .conf) and reached
// with the file's current context (apiclient.LoadConfigWithOptions; relative paths in it
// resolved against the directory). Files whose names start with a dot (a volume's
// ..data links and its temporary files) and subdirectories are skipped. A file that
// appears is a cluster set; a file whose content changes sets the cluster again (the
// Fleet engages it again if its Config changed); a file that goes removes the cluster. A
// file that cannot be read or parsed, or whose name is not a valid cluster name, is
// logged, and its cluster keeps the last Config read (a file being rewritten does not
// take the cluster away).
type KubeconfigDir struct {
	dir  string
	opts KubeconfigDirOptions
}

// NewKubeconfigDir returns a KubeconfigDir of directory dir. It fails for an empty dir or
// a negative Interval; the directory itself is read by Run.
func NewKubeconfigDir(dir string, opts KubeconfigDirOptions) (*KubeconfigDir, error) {
	if dir == "" {
		return nil, errors.New("multicluster: NewKubeconfigDir: empty directory")
	}
	if opts.Interval < 0 {
		return nil, fmt.Errorf("multicluster: NewKubeconfigDir: negative Interval %v", opts.Interval)
	}
	if opts.Interval == 0 {
		opts.Interval = DefaultKubeconfigScanInterval
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	return &KubeconfigDir{dir: dir, opts: opts}, nil
}

// kubeconfigFile is what a KubeconfigDir last read of one file.
type kubeconfigFile struct {
	data []byte
	set  bool // its Config was given to the ClusterSet
}

// Run implements Provider: it reads the directory now and at each Interval until ctx is
// done. A directory that cannot be read fails the first reading (Run returns the error);
// later, the clusters stay as they were until it can be read again.
func (p *KubeconfigDir) Run(ctx context.Context, set ClusterSet) error {
	files := map[string]*kubeconfigFile{} // cluster name -> file
	if err := p.scan(set, files); err != nil {
		return err
	}
	t := time.NewTicker(p.opts.Interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
			if err := p.scan(set, files); err != nil {
				p.opts.Logger.Warn("kubeconfig directory not read; its clusters stay as they were", "dir", p.dir, "err", err)
			}
		}
	}
}

// clusterName returns the cluster a file name stands for ("" for a file to skip).
func clusterName(file string) string {
	if strings.HasPrefix(file, ".") {
		return ""
	}
	for _, ext := range []string{".yaml", ".yml", ".kubeconfig", ".conf"} {
		if n, ok := strings.CutSuffix(file, ext); ok {
			return n
		}
	}
	return file
}

// scan reads the directory once and tells set what changed since the last scan.
func (p *KubeconfigDir) scan(set ClusterSet, files map[string]*kubeconfigFile) error {
	entries, err := os.ReadDir(p.dir)
	if err != nil {
		return fmt.Errorf("multicluster: kubeconfig directory: %w", err)
	}
	seen := map[string]bool{}
	for _, e := range entries {
		name := clusterName(e.Name())
		if name == "" {
			continue
		}
		path := filepath.Join(p.dir, e.Name())
		if fi, err := os.Stat(path); err != nil || !fi.Mode().IsRegular() {
			continue // a subdirectory, or a link to nothing
		}
		if err := ValidName(name); err != nil {
			p.opts.Logger.Warn("kubeconfig file skipped", "file", path, "err", err)
			continue
		}
		if seen[name] {
			p.opts.Logger.Warn("kubeconfig file skipped: another file names the same cluster", "file", path, "cluster", name)
			continue
		}
		seen[name] = true
		p.read(set, files, name, path)
	}
	for name := range files {
		if !seen[name] {
			delete(files, name)
			set.Remove(name)
		}
	}
	return nil
}

// read reads one file, and sets its cluster if the file changed.
func (p *KubeconfigDir) read(set ClusterSet, files map[string]*kubeconfigFile, name, path string) {
	data, err := os.ReadFile(path)
	if err != nil {
		p.opts.Logger.Warn("kubeconfig file not read; its cluster keeps its last Config", "file", path, "err", err)
		if _, ok := files[name]; !ok {
			files[name] = &kubeconfigFile{}
		}
		return
	}
	f := files[name]
	if f != nil && f.set && bytes.Equal(f.data, data) {
		return
	}
	if f == nil {
		f = &kubeconfigFile{}
		files[name] = f
	}
	f.data = data
	cfg, err := apiclient.LoadConfigWithOptions(apiclient.LoadOptions{Kubeconfig: path})
	if err != nil {
		p.opts.Logger.Warn("kubeconfig file not used; its cluster keeps its last Config", "file", path, "err", err)
		return
	}
	if err := set.Set(name, cfg); err != nil {
		p.opts.Logger.Warn("kubeconfig file not used", "file", path, "err", err)
		return
	}
	f.set = true
}
