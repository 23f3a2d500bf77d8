// Command gzipcost measures what gzip costs and saves when apiclient reads from the real
// kube-apiserver (1.37 gzips a streaming list when the client asks, and a response over
// 128 KiB as before): a streaming list (WatchList, to its end bookmark) and an unpaged LIST of
// -pods pods, read with Accept-Encoding: gzip and without, over chunked HTTP/2 (and, for the
// streaming list, over WebSocket, which is never compressed), on loopback and through a TCP
// proxy that holds each direction of each connection to -mbit megabits a second. For each
// it records the time, the client's CPU (this process), kube-apiserver's CPU (/proc) and the
// bytes the server sent. The cases are interleaved and rotated over -rounds; medians are
// printed. The pods decode into a type with metadata and spec.nodeName only, managedFields
// skipped as informers skip them, so that the transport's share of the cost is as large as
// it gets.
//
//	cd e2e && go run ./cmd/gzipcost -pods 5000 -rounds 5 -mbit 100
//
// The proxy runs as a child process (`gzipcost proxy`), so that its CPU is not the client's.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"os/signal"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"golang.org/x/time/rate"

	"github.com/informerkit/informerkit/apiclient"
	"github.com/informerkit/informerkit/e2e/cluster"
	"github.com/informerkit/informerkit/meta"
)

// Pod is the part of a pod the reads decode.
type Pod struct {
	meta.TypeMeta
	meta.ObjectMeta `json:"metadata"`
	Spec            PodSpec `json:"spec"`
}

// PodSpec is the part of a pod's spec the reads decode.
type PodSpec struct {
	NodeName string `json:"nodeName,omitempty"`
}

var pods = meta.GroupVersionResource{Version: "v1", Resource: "pods"}

const namespace = "gzipcost"

// kase is one way of reading.
type kase struct {
	op    string // "watchlist" or "list"
	proto apiclient.WatchProtocol
	gzip  bool
	json  bool
	slow  bool // through the proxy
}

func (k kase) String() string {
	t := "http2"
	if k.proto == apiclient.WatchWebSocket {
		t = "websocket"
	}
	f := "protobuf"
	if k.json {
		f = "json"
	}
	link := "loopback"
	if k.slow {
		link = "limited"
	}
	return fmt.Sprintf("%-9s %-8s %-9s %-8s gzip=%v", k.op, link, t, f, k.gzip)
}

type sample struct{ wall, client, server, bytes float64 }

func main() {
	if len(os.Args) > 1 && os.Args[1] == "proxy" {
		proxyMain(os.Args[2:])
		return
	}
	n := flag.Int("pods", 5000, "pods to seed")
	rounds := flag.Int("rounds", 5, "rounds (cases interleaved, medians printed)")
	mbit := flag.Float64("mbit", 100, "bandwidth of the limited link, each direction of each connection")
	podFile := flag.String("pod", "../internal/jsondec/testdata/real/pod.json", "a pod recorded from kube-apiserver, the template of the seeded ones")
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, *n, *rounds, *mbit, *podFile); err != nil {
		fatal(err)
	}
}

func run(ctx context.Context, n, rounds int, mbit float64, podFile string) error {
	c, err := cluster.Start(ctx, cluster.Options{})
	if err != nil {
		return err
	}
	defer c.Cleanup()
	defer c.Stop()
	fmt.Printf("kube-apiserver %s, %d pods, %d rounds, limited link %.0f Mbit/s\n", c.Version, n, rounds, mbit)
	if err := seed(ctx, c, podFile, n); err != nil {
		return err
	}
	proxyAddr, stopProxy, err := startProxy(strings.TrimPrefix(c.URL, "https://"), mbit)
	if err != nil {
		return err
	}
	defer stopProxy()
	var cases []kase
	for _, slow := range []bool{false, true} {
		for _, js := range []bool{false, true} {
			for _, gz := range []bool{false, true} {
				cases = append(cases, kase{op: "watchlist", proto: apiclient.WatchChunked, gzip: gz, json: js, slow: slow},
					kase{op: "list", proto: apiclient.WatchChunked, gzip: gz, json: js, slow: slow})
			}
			cases = append(cases, kase{op: "watchlist", proto: apiclient.WatchWebSocket, json: js, slow: slow})
		}
	}
	results := map[string][]sample{}
	for r := range rounds {
		for i := range cases {
			k := cases[(i+r*3)%len(cases)]
			s, err := measure(ctx, c, proxyAddr, k, n)
			if err != nil {
				return fmt.Errorf("%s: %w", k, err)
			}
			results[k.String()] = append(results[k.String()], s)
		}
		fmt.Printf("round %d done\n", r+1)
	}
	fmt.Printf("\n%-48s %9s %11s %11s %10s\n", "case", "time", "client CPU", "server CPU", "server sent")
	for _, k := range cases {
		ss := results[k.String()]
		fmt.Printf("%-48s %8.2fs %10.2fs %10.2fs %8.1f MB\n", k, med(ss, func(s sample) float64 { return s.wall }),
			med(ss, func(s sample) float64 { return s.client }), med(ss, func(s sample) float64 { return s.server }),
			med(ss, func(s sample) float64 { return s.bytes })/1e6)
	}
	return nil
}

func fatal(err error) {
	fmt.Fprintln(os.Stderr, "gzipcost:", err)
	os.Exit(1)
}

func med(ss []sample, f func(sample) float64) float64 {
	v := make([]float64, len(ss))
	for i, s := range ss {
		v[i] = f(s)
	}
	slices.Sort(v)
	return v[len(v)/2]
}

func newClient(c *cluster.Cluster, host string, k kase) (*apiclient.Client, *atomic.Int64, error) {
	cfg := &apiclient.Config{Host: "https://" + host, BearerToken: c.Token, QPS: -1, WatchProtocol: k.proto,
		DisableProtobuf: k.json, Compression: apiclient.CompressionNone}
	cfg.TLS.CAData = c.CAPEM
	if k.gzip {
		cfg.Compression = apiclient.CompressionGzip
	}
	var read atomic.Int64
	cfg.Dial = func(ctx context.Context, network, addr string) (net.Conn, error) {
		conn, err := (&net.Dialer{}).DialContext(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		return &countingConn{Conn: conn, read: &read}, nil
	}
	cl, err := apiclient.New(cfg)
	return cl, &read, err
}

// countingConn counts the bytes read from the server (TLS records included).
type countingConn struct {
	net.Conn
	read *atomic.Int64
}

func (c *countingConn) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	c.read.Add(int64(n))
	return n, err
}

func measure(ctx context.Context, c *cluster.Cluster, proxyAddr string, k kase, n int) (sample, error) {
	host := strings.TrimPrefix(c.URL, "https://")
	if k.slow {
		host = proxyAddr
	}
	cl, read, err := newClient(c, host, k)
	if err != nil {
		return sample{}, err
	}
	defer cl.Close()
	// As an informer with its default transform reads: managedFields skipped, not decoded.
	res := apiclient.NewResource[*Pod](cl, pods).Namespace(namespace).WithDecodeOptions(apiclient.DecodeOptions{OmitManagedFields: true}).(*apiclient.Resource[*Pod])
	runtime.GC()
	pid := c.APIServerPID()
	s0, c0, t0 := procCPU(pid), selfCPU(), time.Now()
	got := 0
	switch k.op {
	case "list":
		_, err = res.ListEach(ctx, apiclient.ListOptions{}, func(*Pod) error { got++; return nil })
	default:
		got, err = watchList(ctx, res)
	}
	wall := time.Since(t0)
	s1, c1 := procCPU(pid), selfCPU()
	if err != nil {
		return sample{}, err
	}
	if got != n {
		return sample{}, fmt.Errorf("read %d pods, want %d", got, n)
	}
	return sample{wall: wall.Seconds(), client: (c1 - c0).Seconds(), server: (s1 - s0).Seconds(), bytes: float64(read.Load())}, nil
}

func watchList(ctx context.Context, res *apiclient.Resource[*Pod]) (int, error) {
	send := true
	w, err := res.Watch(ctx, apiclient.ListOptions{SendInitialEvents: &send, AllowWatchBookmarks: true,
		ResourceVersionMatch: apiclient.ResourceVersionMatchNotOlderThan})
	if err != nil {
		return 0, err
	}
	defer w.Stop()
	got := 0
	for ev := range w.ResultChan() {
		switch ev.Type {
		case apiclient.Added:
			got++
		case apiclient.Bookmark:
			if ev.Object.Annotations[apiclient.InitialEventsEndAnnotation] == "true" {
				return got, nil
			}
		default:
			return got, fmt.Errorf("event %s: %v", ev.Type, ev.Err)
		}
	}
	return got, fmt.Errorf("the watch ended after %d events", got)
}

// seed creates n pods like the recorded one, in namespace gzipcost (once: a second run on the
// same cluster finds them).
func seed(ctx context.Context, c *cluster.Cluster, podFile string, n int) error {
	raw, err := os.ReadFile(podFile)
	if err != nil {
		return err
	}
	var tmpl map[string]any
	if err := json.Unmarshal(raw, &tmpl); err != nil {
		return err
	}
	md := tmpl["metadata"].(map[string]any)
	for _, k := range []string{"uid", "resourceVersion", "creationTimestamp", "managedFields", "namespace", "ownerReferences", "generateName"} {
		delete(md, k)
	}
	delete(tmpl, "status")
	cfg := &apiclient.Config{Host: c.URL, BearerToken: c.Token, QPS: -1}
	cfg.TLS.CAData = c.CAPEM
	cl, err := apiclient.New(cfg)
	if err != nil {
		return err
	}
	defer cl.Close()
	nsr := apiclient.NewResource[*meta.Unstructured](cl, meta.GroupVersionResource{Version: "v1", Resource: "namespaces"})
	ns := &meta.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": namespace}}}
	if _, err := nsr.Create(ctx, ns, apiclient.CreateOptions{}); err != nil && !meta.IsAlreadyExists(err) {
		return err
	}
	pr := apiclient.NewResource[*meta.Unstructured](cl, pods).Namespace(namespace)
	start := time.Now()
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	next := atomic.Int64{}
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := int(next.Add(1)) - 1; i < n; i = int(next.Add(1)) - 1 {
				b, _ := json.Marshal(tmpl)
				var obj map[string]any
				json.Unmarshal(b, &obj)
				obj["metadata"].(map[string]any)["name"] = "pod-" + strconv.Itoa(i)
				if _, err := pr.Create(ctx, &meta.Unstructured{Object: obj}, apiclient.CreateOptions{}); err != nil && !meta.IsAlreadyExists(err) {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	if err := <-errs; err != nil {
		return err
	}
	fmt.Printf("seeded %d pods in %.1fs\n", n, time.Since(start).Seconds())
	return nil
}

// startProxy runs `gzipcost proxy` to target and returns its address.
func startProxy(target string, mbit float64) (string, func(), error) {
	cmd := exec.Command(os.Args[0], "proxy", target, strconv.FormatFloat(mbit, 'f', -1, 64))
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		return "", nil, err
	}
	if err := cmd.Start(); err != nil {
		return "", nil, err
	}
	buf := make([]byte, 64)
	k, err := out.Read(buf)
	if err != nil {
		cmd.Process.Kill()
		return "", nil, err
	}
	return strings.TrimSpace(string(buf[:k])), func() { cmd.Process.Kill(); cmd.Wait() }, nil
}

// proxyMain forwards TCP connections to target, each direction of each held to mbit.
func proxyMain(args []string) {
	target := args[0]
	mbit, _ := strconv.ParseFloat(args[1], 64)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fatal(err)
	}
	fmt.Println(ln.Addr().String())
	bps := mbit * 1e6 / 8
	for {
		conn, err := ln.Accept()
		if err != nil {
			fatal(err)
		}
		go func() {
			up, err := net.Dial("tcp", target)
			if err != nil {
				conn.Close()
				return
			}
			go pipe(up, conn, bps)
			pipe(conn, up, bps)
		}()
	}
}

// pipe copies src to dst at most bps bytes a second, then closes both.
func pipe(dst, src net.Conn, bps float64) {
	defer dst.Close()
	defer src.Close()
	lim := rate.NewLimiter(rate.Limit(bps), 64<<10)
	buf := make([]byte, 16<<10)
	for {
		n, err := src.Read(buf)
		if n > 0 {
			if lim.WaitN(context.Background(), n) != nil {
				return
			}
			if _, werr := dst.Write(buf[:n]); werr != nil {
				return
			}
		}
		if err != nil {
			if err != io.EOF {
				return
			}
			return
		}
	}
}

// procCPU returns the user+system CPU seconds of process pid (clock ticks of 10 ms).
func procCPU(pid int) time.Duration {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0
	}
	rest := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+2:]))
	utime, _ := strconv.ParseInt(rest[11], 10, 64)
	stime, _ := strconv.ParseInt(rest[12], 10, 64)
	return time.Duration(utime+stime) * 10 * time.Millisecond
}

func selfCPU() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
