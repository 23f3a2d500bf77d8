// Command dashboard draws the panels of the Grafana dashboard informerkit.json from real
// data: it runs a workload (an in-process API server, a controller Manager with two
// controllers, objects created, updated and deleted in four namespaces, a burst in one of
// them, a relist forced by a 410 and a stalled watch), scrapes the Manager's /metrics every
// second, evaluates each panel's PromQL queries over the scrapes (the subset promql.go
// knows) and draws the panels where the dashboard's grid puts them, in Grafana's dark
// theme, to a PNG. No Grafana or Prometheus is involved: it is a faithful rendering of the
// panels' queries, not a screenshot of Grafana.
//
//	cd docs/dashboard && go run . -out informerkit.png
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"image"
	"image/png"
	"math"
	"os"
	"sort"
	"strings"
	"time"
)

// dashboard is the part of a Grafana dashboard the renderer reads.
type dashboard struct {
	Title  string `json:"title"`
	Panels []struct {
		Type    string `json:"type"`
		Title   string `json:"title"`
		GridPos struct {
			H, W, X, Y int
		} `json:"gridPos"`
		FieldConfig struct {
			Defaults struct {
				Unit string `json:"unit"`
			} `json:"defaults"`
		} `json:"fieldConfig"`
		Targets []struct {
			Expr         string `json:"expr"`
			LegendFormat string `json:"legendFormat"`
		} `json:"targets"`
	} `json:"panels"`
}

func main() {
	in := flag.String("dashboard", "informerkit.json", "the Grafana dashboard")
	out := flag.String("out", "informerkit.png", "the PNG to write")
	duration := flag.Duration("duration", 90*time.Second, "how long the workload runs")
	rateInterval := flag.Duration("rate-interval", 10*time.Second, "what $__rate_interval stands for")
	flag.Parse()
	if err := run(*in, *out, *duration, *rateInterval); err != nil {
		fmt.Fprintln(os.Stderr, "dashboard:", err)
		os.Exit(1)
	}
}

func run(in, out string, duration, rateInterval time.Duration) error {
	d, err := loadDashboard(in)
	if err != nil {
		return err
	}
	ctx := context.Background()
	w, err := startWorkload(ctx)
	if err != nil {
		return err
	}
	st := &store{series: map[string]series{}}
	sctx, stopScrape := context.WithCancel(ctx)
	scraped := make(chan error, 1)
	go func() { scraped <- st.collect(sctx, w.metrics, time.Second) }()
	w.generate(ctx, duration)
	time.Sleep(5 * time.Second) // the tail: queues drain, the stalled watch resumes
	stopScrape()
	if err := <-scraped; err != nil {
		return err
	}
	if err := w.stop(); err != nil {
		return err
	}
	fmt.Printf("%d scrapes of %d series\n", len(st.scrapes), len(st.series))
	return drawDashboard(d, st, rateInterval, duration, out)
}

func loadDashboard(path string) (dashboard, error) {
	var d dashboard
	raw, err := os.ReadFile(path)
	if err == nil {
		err = json.Unmarshal(raw, &d)
	}
	return d, err
}

// substitute replaces the dashboard's variables: every controller and informer (All), and
// the rate interval.
func substitute(expr string, rateInterval time.Duration) string {
	return strings.NewReplacer("$__rate_interval", rateInterval.String(), "$controller", ".*", "$informer", ".*").Replace(expr)
}

// drawDashboard evaluates every panel and writes the PNG.
func drawDashboard(d dashboard, st *store, rateInterval, duration time.Duration, out string) error {
	rows := 0
	for _, p := range d.Panels {
		rows = max(rows, p.GridPos.Y+p.GridPos.H)
	}
	c, err := newCanvas(rows)
	if err != nil {
		return err
	}
	c.text(pad+4, 30, d.Title, c.title, textColor)
	c.text(pad+110, 30, fmt.Sprintf("Controller: All   Informer: All   Last %v   — drawn by docs/dashboard from the Manager's /metrics, scraped every 1 s ($__rate_interval = %v)",
		duration.Round(time.Second), rateInterval), c.small, dimText)
	times := make([]time.Time, len(st.scrapes))
	for i, s := range st.scrapes {
		times[i] = s.at
	}
	col := (width - 2*pad) / 24
	for _, p := range d.Panels {
		r := image.Rect(pad+p.GridPos.X*col, headerH+p.GridPos.Y*unitH, pad+(p.GridPos.X+p.GridPos.W)*col-pad, headerH+(p.GridPos.Y+p.GridPos.H)*unitH-pad)
		if p.Type == "row" {
			c.text(r.Min.X+4, r.Min.Y+20, p.Title, c.title, textColor)
			continue
		}
		var lines []line
		for _, t := range p.Targets {
			q, err := parseQuery(substitute(t.Expr, rateInterval))
			if err != nil {
				return fmt.Errorf("panel %q: %w", p.Title, err)
			}
			lines = append(lines, evalRange(q, st, t.LegendFormat)...)
		}
		c.panel(r, p.Title, p.FieldConfig.Defaults.Unit, lines, times)
	}
	f, err := os.Create(out)
	if err != nil {
		return err
	}
	if err := png.Encode(f, c.img); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// evalRange evaluates q at every scrape; each distinct legend is a line.
func evalRange(q node, st *store, legend string) []line {
	byLegend := map[string][]float64{}
	for i := range st.scrapes {
		for _, s := range q.eval(st, i) {
			name := legend
			for k, v := range s.labels {
				name = strings.ReplaceAll(name, "{{"+k+"}}", v)
			}
			vals, ok := byLegend[name]
			if !ok {
				vals = make([]float64, len(st.scrapes))
				for j := range vals {
					vals[j] = math.NaN()
				}
				byLegend[name] = vals
			}
			vals[i] = s.v
		}
	}
	var out []line
	for name, vals := range byLegend {
		out = append(out, line{name, vals})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].legend < out[j].legend })
	return out
}
