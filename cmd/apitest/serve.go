package main

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/informerkit/informerkit/apitest"
)

// runServe is `apitest serve`: a server for any client, its kubeconfig written to a file,
// until a signal arrives.
func runServe(args []string, stdout, stderr io.Writer, stop <-chan os.Signal) int {
	fs := flag.NewFlagSet("apitest serve", flag.ContinueOnError)
	fs.SetOutput(stderr)
	addr := fs.String("addr", "127.0.0.1:0", "listen address (port 0: a free one)")
	kubeconfig := fs.String("kubeconfig", "apitest.kubeconfig", "write the kubeconfig of the server to this file")
	crds := fs.String("crds", "", "install the CustomResourceDefinitions of every .yaml, .yml and .json file of these directories (comma-separated) or files")
	nodes := fs.Int("nodes", 0, "simulated Nodes and their kubelets: scheduled Pods run (0: none)")
	useTLS := fs.Bool("tls", true, "serve HTTPS with a CA of its own (in the kubeconfig); false: plain HTTP")
	token := fs.String("token", "", "the bearer token clients must send (default: a random one, in the kubeconfig; \"none\": no authentication)")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "apitest serve: unexpected arguments %q\n", fs.Args())
		return 2
	}
	opts := apitest.Options{Addr: *addr, TLS: *useTLS, Token: *token}
	switch opts.Token {
	case "":
		opts.Token = randomToken()
	case "none":
		opts.Token = ""
	}
	s, err := apitest.Start(opts)
	if err != nil {
		fmt.Fprintln(stderr, "apitest serve:", err)
		return 1
	}
	defer s.Close()
	if err := installCRDs(s, *crds); err != nil {
		fmt.Fprintln(stderr, "apitest serve:", err)
		return 1
	}
	if *nodes > 0 {
		n, err := s.StartNodes(apitest.NodesOptions{Count: *nodes})
		if err != nil {
			fmt.Fprintln(stderr, "apitest serve:", err)
			return 1
		}
		defer n.Stop()
	}
	if err := writeFileAtomic(*kubeconfig, s.Kubeconfig()); err != nil {
		fmt.Fprintln(stderr, "apitest serve:", err)
		return 1
	}
	abs, _ := filepath.Abs(*kubeconfig)
	fmt.Fprintf(stdout, "apitest serving %s\nexport KUBECONFIG=%s\n", s.URL, abs)
	<-stop
	return 0
}

// installCRDs installs the CustomResourceDefinitions of the files in list (directories:
// their .yaml, .yml and .json files, as envtest's CRDDirectoryPaths). Files without one are
// skipped.
func installCRDs(s *apitest.Server, list string) error {
	if list == "" {
		return nil
	}
	var files []string
	for p := range strings.SplitSeq(list, ",") {
		st, err := os.Stat(p)
		if err != nil {
			return err
		}
		if !st.IsDir() {
			files = append(files, p)
			continue
		}
		entries, err := os.ReadDir(p)
		if err != nil {
			return err
		}
		for _, e := range entries {
			if !e.IsDir() && slices.Contains([]string{".yaml", ".yml", ".json"}, filepath.Ext(e.Name())) {
				files = append(files, filepath.Join(p, e.Name()))
			}
		}
	}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			return err
		}
		if err := s.AddCRD(b); err != nil && !errors.Is(err, apitest.ErrNoCRD) {
			return fmt.Errorf("%s: %w", f, err)
		}
	}
	return nil
}

// writeFileAtomic writes data to path through a temporary file and a rename, so that a
// program polling for path never reads half of it.
func writeFileAtomic(path string, data []byte) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), ".apitest-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Chmod(0o600); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}

func randomToken() string {
	b := make([]byte, 24)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}
