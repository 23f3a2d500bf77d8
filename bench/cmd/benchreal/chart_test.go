package main

import (
	"bytes"
	"encoding/xml"
	"io"
	"strings"
	"testing"
)

// The chart is well-formed SVG with two bars per figure and the ratio coloured by whether
// informerkit is better.
func TestChart(t *testing.T) {
	var b bytes.Buffer
	rows := []chartRow{
		{label: "pods: process CPU to sync", clientGo: 2, ours: 1, unit: "s"},
		{label: "pods: events/s", clientGo: 1000, ours: 800, unit: "/s", higherIsBetter: true},
	}
	if err := writeChart(&b, "title & more", rows); err != nil {
		t.Fatal(err)
	}
	d := xml.NewDecoder(bytes.NewReader(b.Bytes()))
	rects := 0
	for {
		tok, err := d.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("not XML: %v\n%s", err, b.String())
		}
		if se, ok := tok.(xml.StartElement); ok && se.Name.Local == "rect" {
			rects++
		}
	}
	if rects != 1+2+2*len(rows) {
		t.Fatalf("%d rects", rects)
	}
	for _, want := range []string{`fill="#2e7d32">0.50×`, `fill="#c62828">0.80×`, "title &amp; more"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("missing %q", want)
		}
	}
}
