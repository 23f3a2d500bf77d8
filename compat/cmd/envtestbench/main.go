// Command envtestbench measures controller-runtime's envtest with the real kube-apiserver
// and etcd and with apitest's drop-in (cmd/apitest): the time from Environment.Start to a
// ready client, Stop, and the CPU the processes use, over interleaved rounds
// (docs/apitest.md, "envtest drop-in", quotes its medians).
//
//	cd compat && go run ./cmd/envtestbench -bin ../bin -rounds 7
package main

import (
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"syscall"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/envtest"
)

func main() {
	bin := flag.String("bin", "../bin", "the directory of the real kube-apiserver and etcd (make e2e-build)")
	rounds := flag.Int("rounds", 7, "rounds; each starts and stops both once, alternating which goes first")
	flag.Parse()
	if err := run(*bin, *rounds); err != nil {
		fmt.Fprintln(os.Stderr, "envtestbench:", err)
		os.Exit(1)
	}
}

type sample struct{ start, stop, cpu time.Duration }

func run(bin string, rounds int) error {
	realDir, err := filepath.Abs(bin)
	if err != nil {
		return err
	}
	tmp, err := os.MkdirTemp("", "envtestbench-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	dropIn := filepath.Join(tmp, "assets")
	build := exec.Command("go", "build", "-o", filepath.Join(tmp, "apitest"), "./cmd/apitest")
	build.Dir = ".."
	if out, err := build.CombinedOutput(); err != nil {
		return fmt.Errorf("build cmd/apitest: %v\n%s", err, out)
	}
	if out, err := exec.Command(filepath.Join(tmp, "apitest"), "install", dropIn).CombinedOutput(); err != nil {
		return fmt.Errorf("install: %v\n%s", err, out)
	}
	os.Unsetenv("USE_EXISTING_CLUSTER")
	servers := []struct{ name, dir string }{{"kube-apiserver + etcd", realDir}, {"apitest drop-in", dropIn}}
	samples := map[string][]sample{}
	for i := range rounds {
		order := []int{0, 1}
		if i%2 == 1 {
			order = []int{1, 0}
		}
		for _, j := range order {
			s, err := once(servers[j].dir)
			if err != nil {
				return fmt.Errorf("%s: %w", servers[j].name, err)
			}
			samples[servers[j].name] = append(samples[servers[j].name], s)
		}
	}
	fmt.Printf("envtest Environment{}.Start and Stop, %d rounds, medians:\n", rounds)
	fmt.Printf("| server | start to ready | stop | process CPU (start+run+stop) |\n|---|---:|---:|---:|\n")
	for _, s := range servers {
		xs := samples[s.name]
		fmt.Printf("| %s | %s | %s | %s |\n", s.name, median(xs, func(x sample) time.Duration { return x.start }),
			median(xs, func(x sample) time.Duration { return x.stop }), median(xs, func(x sample) time.Duration { return x.cpu }))
	}
	return nil
}

// once starts envtest with the binaries of dir and stops it, measuring both, and the CPU of
// the processes it ran (this process's reaped children).
func once(dir string) (sample, error) {
	os.Setenv("KUBEBUILDER_ASSETS", dir)
	before := childrenCPU()
	env := &envtest.Environment{}
	t0 := time.Now()
	if _, err := env.Start(); err != nil {
		return sample{}, err
	}
	t1 := time.Now()
	if err := env.Stop(); err != nil {
		return sample{}, err
	}
	t2 := time.Now()
	return sample{start: t1.Sub(t0), stop: t2.Sub(t1), cpu: childrenCPU() - before}, nil
}

func childrenCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_CHILDREN, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func median(xs []sample, f func(sample) time.Duration) time.Duration {
	v := make([]time.Duration, len(xs))
	for i, x := range xs {
		v[i] = f(x)
	}
	slices.Sort(v)
	return v[len(v)/2].Round(time.Millisecond)
}
