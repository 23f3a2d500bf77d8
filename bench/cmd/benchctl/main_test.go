package main

import (
	"bytes"
	"context"
	"encoding/xml"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestPercentileAndMedian(t *testing.T) {
	xs := []float64{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}
	if p := percentile(xs, 0.5); p != 5 {
		t.Errorf("p50 %v, want 5", p)
	}
	if p := percentile(xs, 0.99); p != 10 {
		t.Errorf("p99 %v, want 10", p)
	}
	if p := percentile(nil, 0.5); p != 0 {
		t.Errorf("p50 of nothing %v", p)
	}
	if m := median([]float64{3, 1, 2, 10}); m != 2.5 {
		t.Errorf("median %v, want 2.5", m)
	}
}

// TestProcReadsAProcess measures a real process from outside, as the driver measures the
// controllers: a shell that waits for its stdin to close.
func TestProcReadsAProcess(t *testing.T) {
	sh, err := exec.LookPath("sh")
	if err != nil {
		t.Skip("no sh")
	}
	p, err := startProc(context.Background(), sh, "/dev/null", "-c", `echo 'ready {"reconciles":3}'; cat >/dev/null`)
	if err != nil {
		t.Fatal(err)
	}
	var s struct{ Reconciles int }
	if err := p.await(context.Background(), "ready", time.Minute, &s); err != nil || s.Reconciles != 3 {
		t.Fatalf("ready: %+v, %v", s, err)
	}
	if _, err := p.cpu(); err != nil {
		t.Fatal(err)
	}
	hwm, rss, err := p.memory()
	if err != nil || hwm < rss || rss == 0 {
		t.Fatalf("VmHWM %v, VmRSS %v, %v", hwm, rss, err)
	}
	if err := p.stop(); err != nil {
		t.Fatal(err)
	}
}

func TestProcReportsAnExit(t *testing.T) {
	p, err := startProc(context.Background(), "/bin/sh", "/dev/null", "-c", "echo boom >&2; exit 3")
	if err != nil {
		t.Skip(err)
	}
	err = p.await(context.Background(), "ready", time.Minute, &struct{}{})
	if err == nil || !strings.Contains(err.Error(), "boom") {
		t.Fatalf("got %v, want the exit with its stderr", err)
	}
	p.stop()
}

func TestTableAndChart(t *testing.T) {
	results := map[string][]result{
		"informerkit":       {{ReadyCPUSeconds: 1, RSSRest: 40e6, BurstReconciles: 4000, BurstSeconds: 10, BurstCPUSeconds: 2}},
		"controllerruntime": {{ReadyCPUSeconds: 2, RSSRest: 100e6, BurstReconciles: 4000, BurstSeconds: 8, BurstCPUSeconds: 4}},
	}
	rows := tableRows(map[string]float64{"informerkit": 20e6, "controllerruntime": 50e6}, results)
	var b bytes.Buffer
	printTable(&b, rows)
	for _, want := range []string{"| binary size | 20.0 MB | 50.0 MB | 0.40× | ≤ 0.6× |", "| CPU from start to ready | 1.00 s | 2.00 s | 0.50× | ≤ 0.6× |",
		"| CPU per reconcile | 0.50 ms | 1.00 ms | 0.50× | ≤ 0.8× |", "| reconciles/s through the burst | 400/s | 500/s | 0.80× | – |"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("table lacks %q:\n%s", want, b.String())
		}
	}
	path := filepath.Join(t.TempDir(), "c.svg")
	if err := writeChartFile(path, "t & <title>", rows); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	d := xml.NewDecoder(bytes.NewReader(data))
	for {
		if _, err := d.Token(); err != nil {
			if err.Error() != "EOF" {
				t.Fatalf("the chart is not well-formed XML: %v", err)
			}
			break
		}
	}
	if !strings.Contains(string(data), "0.40×") {
		t.Error("the chart lacks the binary size's ratio")
	}
}
