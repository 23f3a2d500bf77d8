package printers

import (
	"fmt"
	"sort"
	"strings"
	"time"
)

// The formatting of cells, as kubectl's and the kube-apiserver's printers write them.

func orNone(s string) string {
	if s == "" {
		return "<none>"
	}
	return s
}

func firstNonEmpty(ss ...string) string {
	for _, s := range ss {
		if s != "" {
			return s
		}
	}
	return ""
}

// since formats the time since an RFC 3339 timestamp as kubectl does.
func since(ts string, now time.Time) string {
	t, err := time.Parse(time.RFC3339Nano, ts)
	if err != nil || ts == "" {
		return "<unknown>"
	}
	return humanDuration(now.Sub(t))
}

// humanDuration is the kube-apiserver's duration.HumanDuration.
func humanDuration(d time.Duration) string {
	if s := int(d.Seconds()); s < -1 {
		return "<invalid>"
	} else if s < 0 {
		return "0s"
	} else if s < 60*2 {
		return fmt.Sprintf("%ds", s)
	}
	minutes := int(d / time.Minute)
	if minutes < 10 {
		if s := int(d/time.Second) % 60; s != 0 {
			return fmt.Sprintf("%dm%ds", minutes, s)
		}
		return fmt.Sprintf("%dm", minutes)
	} else if minutes < 60*3 {
		return fmt.Sprintf("%dm", minutes)
	}
	hours := int(d / time.Hour)
	switch {
	case hours < 8:
		if m := int(d/time.Minute) % 60; m != 0 {
			return fmt.Sprintf("%dh%dm", hours, m)
		}
		return fmt.Sprintf("%dh", hours)
	case hours < 48:
		return fmt.Sprintf("%dh", hours)
	case hours < 24*8:
		if h := hours % 24; h != 0 {
			return fmt.Sprintf("%dd%dh", hours/24, h)
		}
		return fmt.Sprintf("%dd", hours/24)
	case hours < 24*365*2:
		return fmt.Sprintf("%dd", hours/24)
	case hours < 24*365*8:
		if dy := (hours / 24) % 365; dy != 0 {
			return fmt.Sprintf("%dy%dd", hours/24/365, dy)
		}
		return fmt.Sprintf("%dy", hours/24/365)
	}
	return fmt.Sprintf("%dy", hours/24/365)
}

func formatLabels(l map[string]any) string {
	if len(l) == 0 {
		return "<none>"
	}
	keys := make([]string, 0, len(l))
	for k := range l {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		v, _ := l[k].(string)
		parts[i] = k + "=" + v
	}
	return strings.Join(parts, ",")
}
