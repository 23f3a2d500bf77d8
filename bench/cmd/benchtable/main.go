// Command benchtable reads `go test -bench` output on stdin and prints, for every benchmark
// that was run for both implementations, the median of each unit and the ratio between them.
//
// A comparison benchmark names its implementation in the last-but-any sub-benchmark element
// "impl=informerkit" or "impl=client-go"; all other elements form the workload name, e.g.
// BenchmarkQueueAddGetDone/workers=4/impl=client-go. The ratio column is always "how many
// times better informerkit is": client-go ÷ informerkit for costs (ns/op, B/op, allocs/op, any
// unit not ending in "/s") and informerkit ÷ client-go for rates (units ending in "/s").
package main

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"regexp"
	"sort"
	"strconv"
	"strings"
)

const (
	ours   = "informerkit"
	theirs = "client-go"
)

var procSuffix = regexp.MustCompile(`-\d+$`)

type sampleKey struct{ workload, impl, unit string }

func main() {
	if err := run(os.Stdin, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "benchtable:", err)
		os.Exit(1)
	}
}

func run(in io.Reader, out io.Writer) error {
	samples := map[sampleKey][]float64{}
	var workloads []string
	seenWorkload := map[string]bool{}
	unitsOf := map[string][]string{}
	seenUnit := map[string]bool{}

	sc := bufio.NewScanner(in)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) < 4 || !strings.HasPrefix(fields[0], "Benchmark") {
			continue
		}
		workload, impl, ok := splitName(procSuffix.ReplaceAllString(fields[0], ""))
		if !ok {
			continue
		}
		if !seenWorkload[workload] {
			seenWorkload[workload] = true
			workloads = append(workloads, workload)
		}
		// fields[1] is the iteration count; then value/unit pairs.
		for i := 2; i+1 < len(fields); i += 2 {
			v, err := strconv.ParseFloat(fields[i], 64)
			if err != nil {
				break
			}
			unit := fields[i+1]
			k := sampleKey{workload, impl, unit}
			samples[k] = append(samples[k], v)
			if !seenUnit[workload+"\x00"+unit] {
				seenUnit[workload+"\x00"+unit] = true
				unitsOf[workload] = append(unitsOf[workload], unit)
			}
		}
	}
	if err := sc.Err(); err != nil {
		return err
	}

	fmt.Fprintf(out, "\n| workload | unit | %s (median) | %s (median) | informerkit better by |\n|---|---|---:|---:|---:|\n", ours, theirs)
	for _, w := range workloads {
		for _, u := range unitsOf[w] {
			a, aok := median(samples[sampleKey{w, ours, u}])
			b, bok := median(samples[sampleKey{w, theirs, u}])
			if !aok || !bok {
				continue
			}
			fmt.Fprintf(out, "| %s | %s | %s | %s | %s |\n", w, u, format(a), format(b), ratio(a, b, u))
		}
	}
	return nil
}

// splitName removes the impl=... element from a benchmark name.
func splitName(name string) (workload, impl string, ok bool) {
	parts := strings.Split(name, "/")
	rest := parts[:0:0]
	for _, p := range parts {
		if v, found := strings.CutPrefix(p, "impl="); found {
			impl = v
			continue
		}
		rest = append(rest, p)
	}
	if impl != ours && impl != theirs {
		return "", "", false
	}
	return strings.Join(rest, "/"), impl, true
}

func median(xs []float64) (float64, bool) {
	if len(xs) == 0 {
		return 0, false
	}
	s := append([]float64(nil), xs...)
	sort.Float64s(s)
	n := len(s)
	if n%2 == 1 {
		return s[n/2], true
	}
	return (s[n/2-1] + s[n/2]) / 2, true
}

func ratio(ourValue, theirValue float64, unit string) string {
	higherIsBetter := strings.HasSuffix(unit, "/s")
	num, den := theirValue, ourValue
	if higherIsBetter {
		num, den = ourValue, theirValue
	}
	switch {
	case den == 0 && num == 0:
		return "equal (both 0)"
	case den == 0:
		return "∞ (informerkit 0)"
	}
	return fmt.Sprintf("%.2f×", num/den)
}

func format(v float64) string {
	switch {
	case v == 0:
		return "0"
	case v >= 100:
		return strconv.FormatFloat(v, 'f', 0, 64)
	case v >= 1:
		return strconv.FormatFloat(v, 'f', 2, 64)
	default:
		return strconv.FormatFloat(v, 'g', 3, 64)
	}
}
