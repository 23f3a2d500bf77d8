package main

import (
	"fmt"
	"html"
	"io"
)

// chartRow is one figure of one workload: client-go's median and informerkit's.
type chartRow struct {
	label          string
	clientGo, ours float64
	unit           string
	higherIsBetter bool
}

// writeChart draws the figures as an SVG: per figure, client-go's bar at full length and
// informerkit's scaled to it, each labelled with its median; a row's ratio is on the
// right (below 1 is better for costs, above 1 for rates).
func writeChart(w io.Writer, title string, rows []chartRow) error {
	const (
		left, barMax, right = 330, 380, 90
		rowH, barH, top     = 46, 16, 50
	)
	width, height := left+barMax+right, top+len(rows)*rowH+40
	fmt.Fprintf(w, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" font-family="sans-serif" font-size="12">`+"\n", width, height)
	fmt.Fprintf(w, `<rect width="%d" height="%d" fill="white"/>`+"\n", width, height)
	fmt.Fprintf(w, `<text x="10" y="22" font-size="15" font-weight="bold">%s</text>`+"\n", html.EscapeString(title))
	fmt.Fprintf(w, `<rect x="%d" y="32" width="12" height="10" fill="#9e9e9e"/><text x="%d" y="41">client-go</text>`+"\n", left, left+16)
	fmt.Fprintf(w, `<rect x="%d" y="32" width="12" height="10" fill="#1f77b4"/><text x="%d" y="41">informerkit</text>`+"\n", left+90, left+106)
	for i, r := range rows {
		y := top + i*rowH
		scale := max(r.clientGo, r.ours)
		if scale <= 0 {
			continue
		}
		cg, ik := barMax*r.clientGo/scale, barMax*r.ours/scale
		fmt.Fprintf(w, `<text x="10" y="%d">%s</text>`+"\n", y+barH+4, html.EscapeString(r.label))
		fmt.Fprintf(w, `<rect x="%d" y="%d" width="%.1f" height="%d" fill="#9e9e9e"/>`+"\n", left, y, cg, barH)
		fmt.Fprintf(w, `<text x="%.1f" y="%d" font-size="10">%s</text>`+"\n", float64(left)+cg+4, y+12, html.EscapeString(format(r.clientGo, r.unit)))
		fmt.Fprintf(w, `<rect x="%d" y="%d" width="%.1f" height="%d" fill="#1f77b4"/>`+"\n", left, y+barH+2, ik, barH)
		fmt.Fprintf(w, `<text x="%.1f" y="%d" font-size="10">%s</text>`+"\n", float64(left)+ik+4, y+barH+14, html.EscapeString(format(r.ours, r.unit)))
		ratio := r.ours / r.clientGo
		color := "#2e7d32"
		if (ratio > 1) != r.higherIsBetter && ratio != 1 {
			color = "#c62828"
		}
		fmt.Fprintf(w, `<text x="%d" y="%d" font-weight="bold" fill="%s">%.2f×</text>`+"\n", left+barMax+right-50, y+barH+4, color, ratio)
	}
	fmt.Fprintln(w, `</svg>`)
	return nil
}
