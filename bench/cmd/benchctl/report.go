package main

import (
	"fmt"
	"html"
	"io"
	"os"
	"slices"
)

// row is one figure: both implementations' medians, informerkit's ratio and the issue's
// target for it (0: none).
type row struct {
	name, unit string
	ik, cr     float64
	target     float64
	higherBest bool
}

func (r row) ratio() float64 {
	if r.cr == 0 {
		return 0
	}
	return r.ik / r.cr
}

// figure is how a row is read from the results.
type figure struct {
	name, unit string
	target     float64
	higherBest bool
	get        func(result) float64
}

var figures = []figure{
	{"time from start to ready", "s", 0, false, func(r result) float64 { return r.ReadySeconds }},
	{"CPU from start to ready", "s", 0.6, false, func(r result) float64 { return r.ReadyCPUSeconds }},
	{"peak RSS from start to ready (VmHWM)", "MB", 0.4, false, func(r result) float64 { return r.PeakRSSReady / 1e6 }},
	{"RSS at rest (VmRSS)", "MB", 0.35, false, func(r result) float64 { return r.RSSRest / 1e6 }},
	{"goroutines at rest", "", 0, false, func(r result) float64 { return float64(r.GoroutinesRest) }},
	{"reconciles through the burst", "", 0, false, func(r result) float64 { return float64(r.BurstReconciles) }},
	{"reconciles/s through the burst", "/s", 0, true, func(r result) float64 { return ratioOf(float64(r.BurstReconciles), r.BurstSeconds) }},
	{"CPU per reconcile", "ms", 0.8, false, func(r result) float64 { return 1000 * ratioOf(r.BurstCPUSeconds, float64(r.BurstReconciles)) }},
	{"change to reconcile p50", "ms", 0, false, func(r result) float64 { return r.LatencyP50 }},
	{"change to reconcile p99", "ms", 1, false, func(r result) float64 { return r.LatencyP99 }},
	{"peak RSS, whole run (VmHWM)", "MB", 0, false, func(r result) float64 { return r.PeakRSS / 1e6 }},
}

func ratioOf(a, b float64) float64 {
	if b == 0 {
		return 0
	}
	return a / b
}

func median(xs []float64) float64 {
	s := slices.Clone(xs)
	slices.Sort(s)
	switch {
	case len(s) == 0:
		return 0
	case len(s)%2 == 1:
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

// tableRows are the binary sizes and the medians of every figure over the rounds.
func tableRows(sizes map[string]float64, results map[string][]result) []row {
	rows := []row{{name: "binary size", unit: "MB", ik: sizes["informerkit"] / 1e6, cr: sizes["controllerruntime"] / 1e6, target: 0.6}}
	med := func(impl string, get func(result) float64) float64 {
		var xs []float64
		for _, r := range results[impl] {
			xs = append(xs, get(r))
		}
		return median(xs)
	}
	for _, f := range figures {
		rows = append(rows, row{name: f.name, unit: f.unit, target: f.target, higherBest: f.higherBest,
			ik: med("informerkit", f.get), cr: med("controllerruntime", f.get)})
	}
	load := func(r result) float64 { return (r.Load[0] + r.Load[1]) / 2 }
	rows = append(rows, row{name: machineLoad, ik: med("informerkit", load), cr: med("controllerruntime", load)})
	return rows
}

const machineLoad = "machine load (1-min average, during the run)"

func format(v float64, unit string) string {
	switch unit {
	case "s":
		return fmt.Sprintf("%.2f s", v)
	case "MB":
		return fmt.Sprintf("%.1f MB", v)
	case "ms":
		return fmt.Sprintf("%.2f ms", v)
	case "/s":
		return fmt.Sprintf("%.0f/s", v)
	}
	return fmt.Sprintf("%.1f", v)
}

// printTable prints the rows as a Markdown table.
func printTable(w io.Writer, rows []row) {
	fmt.Fprintln(w, "| figure | informerkit | controller-runtime | informerkit / controller-runtime | target |")
	fmt.Fprintln(w, "|---|---:|---:|---:|---:|")
	for _, r := range rows {
		target := "–"
		if r.target > 0 {
			op := "≤"
			if r.higherBest {
				op = "≥"
			}
			target = fmt.Sprintf("%s %.2g×", op, r.target)
		}
		fmt.Fprintf(w, "| %s | %s | %s | %.2f× | %s |\n", r.name, format(r.ik, r.unit), format(r.cr, r.unit), r.ratio(), target)
	}
}

// writeChartFile draws the ratios as an SVG: one bar per figure, from 0 to its ratio, a
// line at 1× (controller-runtime) and a mark at the target; green where informerkit does
// better, red where it does worse.
func writeChartFile(path, title string, rows []row) error {
	var charted []row
	for _, r := range rows {
		if r.cr > 0 && r.name != "reconciles through the burst" && r.name != machineLoad {
			charted = append(charted, r)
		}
	}
	const left, width, barH, rowH, top = 290, 420, 16, 26, 56
	scale := 1.5
	for _, r := range charted {
		scale = max(scale, r.ratio()*1.1)
	}
	x := func(v float64) float64 { return left + width*v/scale }
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	h := top + len(charted)*rowH + 30
	w := max(left+width+80, 20+len([]rune(title))*7) // the title's 13 px letters are about 7 px wide
	fmt.Fprintf(f, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" font-family="sans-serif" font-size="12">`+"\n", w, h)
	fmt.Fprintf(f, `<rect width="100%%" height="100%%" fill="white"/>`+"\n")
	fmt.Fprintf(f, `<text x="10" y="20" font-size="13" font-weight="bold">%s</text>`+"\n", html.EscapeString(title))
	fmt.Fprintf(f, `<text x="10" y="40" font-size="11">ratio informerkit / controller-runtime (line: 1×, controller-runtime; mark: the target)</text>`+"\n")
	for i, r := range charted {
		y := top + i*rowH
		better := r.ratio() < 1 != r.higherBest
		color := "#c62828"
		if better || r.ratio() == 1 {
			color = "#2e7d32"
		}
		fmt.Fprintf(f, `<text x="10" y="%d">%s</text>`+"\n", y+barH-3, html.EscapeString(r.name))
		fmt.Fprintf(f, `<rect x="%d" y="%d" width="%.1f" height="%d" fill="%s"/>`+"\n", left, y, x(r.ratio())-left, barH, color)
		fmt.Fprintf(f, `<text x="%.1f" y="%d" font-size="11">%.2f×</text>`+"\n", x(r.ratio())+4, y+barH-3, r.ratio())
		if r.target > 0 {
			fmt.Fprintf(f, `<line x1="%.1f" x2="%.1f" y1="%d" y2="%d" stroke="black" stroke-width="2" stroke-dasharray="3,2"/>`+"\n",
				x(r.target), x(r.target), y-2, y+barH+2)
		}
	}
	fmt.Fprintf(f, `<line x1="%.1f" x2="%.1f" y1="%d" y2="%d" stroke="#555"/>`+"\n", x(1), x(1), top-6, top+len(charted)*rowH)
	fmt.Fprintf(f, `<text x="%.1f" y="%d" font-size="10" text-anchor="middle">1×</text>`+"\n", x(1), top+len(charted)*rowH+14)
	fmt.Fprintln(f, `</svg>`)
	return f.Close()
}
