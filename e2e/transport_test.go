package e2e

import (
	"bufio"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/informerkit/informerkit/apiclient"
	"github.com/informerkit/informerkit/e2e/cluster"
	"github.com/informerkit/informerkit/informer"
)

// Chunked watches (apiclient.WatchChunked) to kube-apiserver, which speaks HTTP/2: the watches
// of ten informers share one connection (bench/README.md, "Watch transport"); with
// WatchAuto, the default, and WatchWebSocket each takes its own.
func TestWatchChunkedSharesOneConnectionForManyInformers(t *testing.T) {
	c := cluster.ForTest(t)
	u, err := url.Parse(c.URL)
	if err != nil {
		t.Fatal(err)
	}
	port, _ := strconv.Atoi(u.Port())
	const n = 10
	for _, tc := range []struct {
		proto apiclient.WatchProtocol
		conns int
	}{{apiclient.WatchChunked, 1}, {apiclient.WatchAuto, n}, {apiclient.WatchWebSocket, n}} {
		ns := newNamespace(t, c)
		before := countConnsTo(t, port)
		ac := acClient(t, c, func(cfg *apiclient.Config) { cfg.WatchProtocol = tc.proto; cfg.QPS = -1 })
		for range n {
			inf := informer.New[*infConfigMap](apiclient.NewResource[*infConfigMap](ac, infConfigMaps).Namespace(ns),
				infOptions[*infConfigMap](t))
			runInformer(t, inf)
			select {
			case <-inf.Synced():
			case <-time.After(2 * time.Minute):
				t.Fatal("informer did not sync")
			}
		}
		// The streaming lists went over the watches themselves: every watch is open.
		if got := countConnsTo(t, port) - before; got != tc.conns {
			t.Errorf("protocol %d: %d informers hold %d connections, want %d", tc.proto, n, got, tc.conns)
		}
	}
}

// countConnsTo counts this process's established TCP connections to port (Linux /proc).
func countConnsTo(t *testing.T, port int) int {
	t.Helper()
	fds, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Skip("no /proc/self/fd:", err)
	}
	inodes := map[string]bool{}
	for _, fd := range fds {
		if link, err := os.Readlink(filepath.Join("/proc/self/fd", fd.Name())); err == nil {
			if rest, ok := strings.CutPrefix(link, "socket:["); ok {
				inodes[strings.TrimSuffix(rest, "]")] = true
			}
		}
	}
	n := 0
	for _, table := range []string{"/proc/net/tcp", "/proc/net/tcp6"} {
		f, err := os.Open(table)
		if err != nil {
			continue
		}
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			fields := strings.Fields(sc.Text())
			if len(fields) < 10 || fields[3] != "01" { // ESTABLISHED
				continue
			}
			remote := fields[2]
			p, err := strconv.ParseInt(remote[strings.LastIndexByte(remote, ':')+1:], 16, 32)
			if err == nil && int(p) == port && inodes[fields[9]] {
				n++
			}
		}
		f.Close()
	}
	return n
}
