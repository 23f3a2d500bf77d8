package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
)

// runInstall is `apitest install DIR`: DIR/apitest (a copy of this program), and
// DIR/kube-apiserver and DIR/etcd linking to it, for KUBEBUILDER_ASSETS=DIR.
func runInstall(args []string, stdout, stderr io.Writer) int {
	if len(args) != 1 {
		fmt.Fprintln(stderr, "usage: apitest install DIR")
		return 2
	}
	if err := install(args[0]); err != nil {
		fmt.Fprintln(stderr, "apitest install:", err)
		return 1
	}
	abs, _ := filepath.Abs(args[0])
	fmt.Fprintf(stdout, "installed kube-apiserver and etcd (apitest) in %s\nexport KUBEBUILDER_ASSETS=%s\n", abs, abs)
	return 0
}

// install copies the running executable to dir/apitest, so that the drop-in outlives a
// `go run` build, and makes kube-apiserver and etcd symbolic links to it (copies where the
// file system has no links).
func install(dir string) error {
	self, err := os.Executable()
	if err != nil {
		return err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	target := filepath.Join(dir, "apitest")
	if err := copyFile(self, target); err != nil {
		return err
	}
	for _, name := range []string{"kube-apiserver", "etcd"} {
		link := filepath.Join(dir, name)
		if err := os.Remove(link); err != nil && !os.IsNotExist(err) {
			return err
		}
		if err := os.Symlink("apitest", link); err != nil {
			if err := copyFile(self, link); err != nil {
				return err
			}
		}
	}
	return nil
}

// copyFile copies an executable through a temporary file (a running dst stays intact).
func copyFile(src, dst string) error {
	if same, err := sameFile(src, dst); err != nil || same {
		return err
	}
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	tmp, err := os.CreateTemp(filepath.Dir(dst), ".apitest-install-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if _, err := io.Copy(tmp, in); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Chmod(0o755); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), dst)
}

func sameFile(a, b string) (bool, error) {
	sa, err := os.Stat(a)
	if err != nil {
		return false, err
	}
	sb, err := os.Stat(b)
	if os.IsNotExist(err) {
		return false, nil
	} else if err != nil {
		return false, err
	}
	return os.SameFile(sa, sb), nil
}
