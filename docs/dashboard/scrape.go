package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"time"
)

// series is one scraped time series: its name and labels.
type series struct {
	name   string
	labels map[string]string
}

// scrape is the value of every series at one moment.
type scrape struct {
	at     time.Time
	values map[string]float64 // by series key
}

// store holds every scrape of a run.
type store struct {
	series  map[string]series
	scrapes []scrape
}

// key is a series' identity: its name and sorted labels.
func key(name string, labels map[string]string) string {
	ks := make([]string, 0, len(labels))
	for k, v := range labels {
		ks = append(ks, k+"="+strconv.Quote(v))
	}
	sort.Strings(ks)
	return name + "{" + strings.Join(ks, ",") + "}"
}

// collect scrapes url every interval until ctx is done.
func (s *store) collect(ctx context.Context, url string, interval time.Duration) error {
	tick := time.NewTicker(interval)
	defer tick.Stop()
	for {
		if err := s.scrapeOnce(url); err != nil {
			return err
		}
		select {
		case <-ctx.Done():
			return nil
		case <-tick.C:
		}
	}
}

func (s *store) scrapeOnce(url string) error {
	resp, err := http.Get(url)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	sc := scrape{at: time.Now(), values: map[string]float64{}}
	if err := parseText(resp.Body, func(name string, labels map[string]string, v float64) {
		k := key(name, labels)
		if _, ok := s.series[k]; !ok {
			s.series[k] = series{name, labels}
		}
		sc.values[k] = v
	}); err != nil {
		return err
	}
	s.scrapes = append(s.scrapes, sc)
	return nil
}

// parseText reads the Prometheus text format: name{label="value",...} value.
func parseText(r io.Reader, sample func(name string, labels map[string]string, v float64)) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		l := sc.Text()
		if l == "" || l[0] == '#' {
			continue
		}
		name, rest, labels := l, "", map[string]string{}
		if i := strings.IndexByte(l, '{'); i >= 0 {
			name, rest = l[:i], l[i+1:]
			for !strings.HasPrefix(rest, "}") {
				eq := strings.Index(rest, `="`)
				if eq < 0 {
					return fmt.Errorf("bad labels in %q", l)
				}
				k := rest[:eq]
				v, tail, err := unquotePrefix(rest[eq+1:])
				if err != nil {
					return fmt.Errorf("%q: %w", l, err)
				}
				labels[k] = v
				rest = strings.TrimPrefix(tail, ",")
			}
			rest = strings.TrimSpace(rest[1:])
		} else if i := strings.IndexByte(l, ' '); i >= 0 {
			name, rest = l[:i], strings.TrimSpace(l[i+1:])
		}
		v, err := strconv.ParseFloat(strings.Fields(rest)[0], 64)
		if err != nil {
			return fmt.Errorf("%q: %w", l, err)
		}
		sample(name, labels, v)
	}
	return sc.Err()
}

// unquotePrefix reads the quoted label value at the start of s.
func unquotePrefix(s string) (string, string, error) {
	for i := 1; i < len(s); i++ {
		switch s[i] {
		case '\\':
			i++
		case '"':
			v, err := strconv.Unquote(s[:i+1])
			return v, s[i+1:], err
		}
	}
	return "", "", fmt.Errorf("unterminated label value")
}
