package walkthrough

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// The diagram's geometry, in pixels. Text widths are estimated (charWidth per character),
// so that the drawing depends on nothing but the reports: no font is measured.
const (
	colGap    = 150
	colLeft   = 80
	headTop   = 10
	headH     = 28
	rowH      = 20
	bandH     = 26
	charWidth = 6
	fontSize  = 11
	margin    = 10
)

// SVG draws the run as a sequence diagram: a column per stage, an arrow per report that
// goes from one stage to another, a note per report that stays in one, a band per step.
func (res *Result) SVG() string {
	colX := func(a actor) int { return colLeft + int(a)*colGap }
	var body strings.Builder
	minX, maxX := 0, colX(numActors-1)+colLeft
	textAt := func(x, y int, anchor, class, text string) {
		w := utf8.RuneCountInString(text) * charWidth
		switch anchor {
		case "start":
			maxX = max(maxX, x+w)
		case "end":
			minX = min(minX, x-w)
		default:
			minX, maxX = min(minX, x-w/2), max(maxX, x+w/2)
		}
		fmt.Fprintf(&body, `<text x="%d" y="%d" text-anchor="%s" class="%s">%s</text>`+"\n", x, y, anchor, class, xmlEscape(text))
	}
	y := headTop + headH + 10
	for i, st := range res.Steps {
		fmt.Fprintf(&body, `<rect x="%d" y="%d" width="%d" height="%d" class="band"/>`+"\n", margin, y, colX(numActors-1)+colLeft-2*margin, bandH-4)
		textAt(margin+6, y+bandH-10, "start", "step", fmt.Sprintf("%d. %s", i+1, st.Title))
		y += bandH
		for _, r := range st.Reports {
			y += rowH
			from, to := colX(r.from), colX(r.to)
			switch {
			case r.from == r.to:
				// A note: its text runs away from the diagram's middle.
				w := utf8.RuneCountInString(r.text)*charWidth + 8
				class, anchor, x, bx := "note", "start", from+8, from+4
				if r.lane == laneScenario {
					class = "action"
				}
				if r.from >= numActors/2 {
					anchor, x, bx = "end", from-8, from-4-w
				}
				fmt.Fprintf(&body, `<rect x="%d" y="%d" width="%d" height="%d" class="%sbox"/>`+"\n", bx, y-rowH+5, w, rowH-4, class)
				textAt(x, y-4, anchor, class, r.text)
			default:
				fmt.Fprintf(&body, `<line x1="%d" y1="%d" x2="%d" y2="%d" class="arrow" marker-end="url(#head)"/>`+"\n", from, y, to, y)
				// The label starts over the arrow's left end, whichever way it points.
				textAt(min(from, to)+6, y-4, "start", "label", r.text)
			}
		}
		y += rowH
	}
	height := y + margin
	minX -= margin
	maxX += margin

	var b strings.Builder
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" viewBox="%d 0 %d %d" width="%d" height="%d" font-family="sans-serif" font-size="%d">`+"\n",
		minX, maxX-minX, height, maxX-minX, height, fontSize)
	b.WriteString(`<defs><marker id="head" viewBox="0 0 10 10" refX="10" refY="5" markerWidth="7" markerHeight="7" orient="auto-start-reverse"><path d="M0,0 L10,5 L0,10 z" fill="#333"/></marker>
<style>
.arrow{stroke:#333;stroke-width:1}
.life{stroke:#aaa;stroke-dasharray:4 4}
.head{fill:#eef2f7;stroke:#57708f}
.band{fill:#e9e9e9}
.notebox{fill:#fff8d6;stroke:#d8c36a}
.actionbox{fill:#dcecff;stroke:#7aa6d8}
.step{font-weight:bold}
.label,.note,.action{fill:#222}
.title{font-weight:bold;fill:#1f3350}
</style></defs>
`)
	fmt.Fprintf(&b, `<rect x="%d" y="0" width="%d" height="%d" fill="white"/>`+"\n", minX, maxX-minX, height)
	for a := range numActors {
		x := colX(a)
		fmt.Fprintf(&b, `<line x1="%d" y1="%d" x2="%d" y2="%d" class="life"/>`+"\n", x, headTop+headH, x, height-margin)
		fmt.Fprintf(&b, `<rect x="%d" y="%d" width="%d" height="%d" rx="4" class="head"/>`+"\n", x-colGap/2+6, headTop, colGap-12, headH)
		fmt.Fprintf(&b, `<text x="%d" y="%d" text-anchor="middle" class="title">%s</text>`+"\n", x, headTop+18, xmlEscape(actorNames[a]))
	}
	b.WriteString(body.String())
	b.WriteString("</svg>\n")
	return b.String()
}

func xmlEscape(s string) string {
	return strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;", `"`, "&quot;").Replace(s)
}
