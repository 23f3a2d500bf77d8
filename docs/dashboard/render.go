package main

import (
	"fmt"
	"image"
	"image/color"
	"image/draw"
	"math"
	"strings"
	"time"

	"golang.org/x/image/font"
	"golang.org/x/image/font/gofont/gobold"
	"golang.org/x/image/font/gofont/goregular"
	"golang.org/x/image/font/opentype"
	"golang.org/x/image/math/fixed"
	"golang.org/x/image/vector"
)

// Grafana's dark theme and its classic palette.
var (
	background = color.RGBA{0x11, 0x12, 0x17, 0xff}
	panelFill  = color.RGBA{0x18, 0x1b, 0x1f, 0xff}
	border     = color.RGBA{0x2c, 0x30, 0x35, 0xff}
	gridLine   = color.RGBA{0x25, 0x28, 0x2d, 0xff}
	textColor  = color.RGBA{0xcc, 0xcc, 0xdc, 0xff}
	dimText    = color.RGBA{0x8e, 0x8e, 0x9e, 0xff}
	palette    = []color.RGBA{{0x73, 0xbf, 0x69, 0xff}, {0xf2, 0xcc, 0x0c, 0xff}, {0x8a, 0xb8, 0xff, 0xff}, {0xff, 0x78, 0x0a, 0xff},
		{0xf2, 0x49, 0x5c, 0xff}, {0x57, 0x94, 0xf2, 0xff}, {0xb8, 0x77, 0xd9, 0xff}, {0x70, 0xdb, 0xed, 0xff}}
)

// Layout: Grafana's grid of 24 columns and 30-pixel rows.
const (
	width   = 1800
	unitH   = 30
	headerH = 48
	pad     = 6
)

// line is one drawn series: its legend and a value per scrape (NaN: none).
type line struct {
	legend string
	values []float64
}

type canvas struct {
	img          *image.RGBA
	small, title font.Face
}

func newCanvas(rows int) (*canvas, error) {
	face := func(ttf []byte, size float64) (font.Face, error) {
		f, err := opentype.Parse(ttf)
		if err != nil {
			return nil, err
		}
		return opentype.NewFace(f, &opentype.FaceOptions{Size: size, DPI: 72, Hinting: font.HintingFull})
	}
	small, err := face(goregular.TTF, 12)
	if err != nil {
		return nil, err
	}
	title, err := face(gobold.TTF, 14)
	if err != nil {
		return nil, err
	}
	img := image.NewRGBA(image.Rect(0, 0, width, headerH+rows*unitH+pad))
	draw.Draw(img, img.Bounds(), image.NewUniform(background), image.Point{}, draw.Src)
	return &canvas{img: img, small: small, title: title}, nil
}

func (c *canvas) text(x, y int, s string, face font.Face, col color.Color) int {
	d := &font.Drawer{Dst: c.img, Src: image.NewUniform(col), Face: face, Dot: fixed.P(x, y)}
	d.DrawString(s)
	return d.Dot.X.Round()
}

func (c *canvas) textWidth(s string, face font.Face) int { return font.MeasureString(face, s).Round() }

func (c *canvas) rect(r image.Rectangle, col color.Color) {
	draw.Draw(c.img, r, image.NewUniform(col), image.Point{}, draw.Over)
}

// polyline strokes points with an anti-aliased line of width w, and fills the area under it
// down to baseY with the same color at a low opacity, as Grafana's fillOpacity does.
func (c *canvas) polyline(pts []image.Point, w float32, baseY int, col color.RGBA) {
	if len(pts) == 0 {
		return
	}
	b := c.img.Bounds()
	fill := vector.NewRasterizer(b.Dx(), b.Dy())
	fill.MoveTo(float32(pts[0].X), float32(baseY))
	for _, p := range pts {
		fill.LineTo(float32(p.X), float32(p.Y))
	}
	fill.LineTo(float32(pts[len(pts)-1].X), float32(baseY))
	fill.ClosePath()
	fill.Draw(c.img, b, image.NewUniform(color.RGBA{col.R / 8, col.G / 8, col.B / 8, 0x20}), image.Point{})
	stroke := vector.NewRasterizer(b.Dx(), b.Dy())
	for i := 1; i < len(pts); i++ {
		ax, ay, bx, by := float32(pts[i-1].X), float32(pts[i-1].Y), float32(pts[i].X), float32(pts[i].Y)
		dx, dy := bx-ax, by-ay
		l := float32(math.Hypot(float64(dx), float64(dy)))
		if l == 0 {
			continue
		}
		nx, ny := -dy/l*w/2, dx/l*w/2
		stroke.MoveTo(ax+nx, ay+ny)
		stroke.LineTo(bx+nx, by+ny)
		stroke.LineTo(bx-nx, by-ny)
		stroke.LineTo(ax-nx, ay-ny)
		stroke.ClosePath()
	}
	stroke.Draw(c.img, b, image.NewUniform(col), image.Point{})
}

// panel draws one timeseries panel in r: title, y axis in the panel's unit, a time axis,
// the lines and the legend.
func (c *canvas) panel(r image.Rectangle, title, unit string, lines []line, times []time.Time) {
	c.rect(r, border)
	c.rect(r.Inset(1), panelFill)
	c.text(r.Min.X+10, r.Min.Y+20, title, c.title, textColor)
	legendRows := c.legendRows(lines, r.Dx()-20)
	plot := image.Rect(r.Min.X+62, r.Min.Y+32, r.Max.X-12, r.Max.Y-22-16*legendRows)
	top := 0.0
	for _, l := range lines {
		for _, v := range l.values {
			if !math.IsNaN(v) && !math.IsInf(v, 0) {
				top = math.Max(top, v)
			}
		}
	}
	top = niceCeil(top)
	for i := 0; i <= 4; i++ {
		y := plot.Max.Y - i*plot.Dy()/4
		c.rect(image.Rect(plot.Min.X, y, plot.Max.X, y+1), gridLine)
		lbl := format(top*float64(i)/4, unit)
		c.text(plot.Min.X-8-c.textWidth(lbl, c.small), y+4, lbl, c.small, dimText)
	}
	n := len(times)
	xOf := func(i int) int { return plot.Min.X + i*plot.Dx()/max(n-1, 1) }
	for i := max(n/12, 1); i < n; i += max(n/6, 1) {
		lbl := times[i].Format("15:04:05")
		c.text(xOf(i)-c.textWidth(lbl, c.small)/2, plot.Max.Y+15, lbl, c.small, dimText)
	}
	for li, l := range lines {
		var pts []image.Point
		flush := func() {
			c.polyline(pts, 2, plot.Max.Y, palette[li%len(palette)])
			pts = nil
		}
		for i, v := range l.values {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				flush()
				continue
			}
			pts = append(pts, image.Pt(xOf(i), plot.Max.Y-int(v/top*float64(plot.Dy()))))
		}
		flush()
	}
	c.legend(r.Min.X+10, plot.Max.Y+24, r.Dx()-20, lines)
}

func (c *canvas) legendRows(lines []line, w int) int {
	rows, x := 1, 0
	for _, l := range lines {
		lw := 22 + c.textWidth(l.legend, c.small)
		if x > 0 && x+lw > w {
			rows, x = rows+1, 0
		}
		x += lw
	}
	return min(rows, 3)
}

func (c *canvas) legend(x0, y0, w int, lines []line) {
	x, y := x0, y0
	for i, l := range lines {
		lw := 22 + c.textWidth(l.legend, c.small)
		if x > x0 && x+lw > x0+w {
			x, y = x0, y+16
			if y >= y0+48 {
				return
			}
		}
		c.rect(image.Rect(x, y-4, x+12, y-1), palette[i%len(palette)])
		c.text(x+16, y+1, l.legend, c.small, textColor)
		x += lw
	}
}

// niceCeil rounds v up to 1, 2, 2.5 or 5 times a power of ten.
func niceCeil(v float64) float64 {
	if v <= 0 {
		return 1
	}
	p := math.Pow(10, math.Floor(math.Log10(v)))
	for _, m := range []float64{1, 2, 2.5, 5, 10} {
		if v <= m*p {
			return m * p
		}
	}
	return 10 * p
}

// format prints v in Grafana's unit: s (durations), ops, reqps, short.
func format(v float64, unit string) string {
	num := func(v float64) string {
		switch {
		case v == 0:
			return "0"
		case v >= 1e6:
			return trim(v/1e6) + " M"
		case v >= 1e3:
			return trim(v/1e3) + " K"
		}
		return trim(v)
	}
	switch unit {
	case "s":
		switch {
		case v == 0:
			return "0 s"
		case v < 1e-3:
			return trim(v*1e6) + " µs"
		case v < 1:
			return trim(v*1e3) + " ms"
		}
		return trim(v) + " s"
	case "ops":
		return num(v) + " ops/s"
	case "reqps":
		return num(v) + " req/s"
	}
	return num(v)
}

func trim(v float64) string {
	s := fmt.Sprintf("%.2f", v)
	s = strings.TrimRight(strings.TrimRight(s, "0"), ".")
	return s
}
