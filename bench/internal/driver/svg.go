package driver

import (
	"fmt"
	"html"
	"math"
	"strings"
)

// The scale report's plots: one SVG per recipe, a log-log panel per figure, a line
// per contender. Small enough to draw by hand, which keeps the bench module's
// dependencies as they are.

const (
	panelW, panelH = 300, 200
	marginL        = 48
	marginB        = 34
	marginT        = 30
	panelsPerRow   = 3
)

var lineColours = map[string]string{recipesName: "#1f77b4", oneShotName: "#ff7f0e", curatorName: "#d62728", kazooName: "#2ca02c"}

// svg draws recipe's figures.
func (r *ScaleReport) svg(recipe string) string {
	contenders, bySize := r.series(recipe)
	var figs []scaleFigure
	for _, f := range scaleFigures {
		if f.recipe == recipe {
			figs = append(figs, f)
		}
	}
	rows := (len(figs) + panelsPerRow - 1) / panelsPerRow
	w, h := panelsPerRow*(panelW+marginL), rows*(panelH+marginB+marginT)+24
	var b strings.Builder
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" font-family="sans-serif" font-size="11">`+"\n", w, h)
	fmt.Fprintf(&b, `<rect width="%d" height="%d" fill="white"/>`+"\n", w, h)
	// The legend.
	x := 10
	for _, c := range contenders {
		fmt.Fprintf(&b, `<line x1="%d" y1="14" x2="%d" y2="14" stroke="%s" stroke-width="2"/><text x="%d" y="18">%s</text>`+"\n",
			x, x+20, colour(c), x+24, html.EscapeString(c))
		x += 30 + 8*len(c)
	}
	fmt.Fprintf(&b, `<text x="%d" y="18" fill="#555">log-log; x: %s</text>`+"\n", x+10, html.EscapeString(scaleUnit[recipe]))
	for i, f := range figs {
		ox := (i%panelsPerRow)*(panelW+marginL) + marginL
		oy := (i/panelsPerRow)*(panelH+marginB+marginT) + marginT + 24
		panel(&b, ox, oy, f, contenders, bySize)
	}
	b.WriteString("</svg>\n")
	return b.String()
}

// panel draws one figure's curves with its axes at (ox, oy), the plot's top left.
func panel(b *strings.Builder, ox, oy int, f scaleFigure, contenders []string, bySize map[string][]ScalePoint) {
	xlo, xhi, ylo, yhi := math.Inf(1), math.Inf(-1), math.Inf(1), math.Inf(-1)
	for _, c := range contenders {
		for _, p := range bySize[c] {
			if v, ok := p.Figures[f.id]; ok && v > 0 {
				xlo, xhi = math.Min(xlo, float64(p.Size)), math.Max(xhi, float64(p.Size))
				ylo, yhi = math.Min(ylo, v), math.Max(yhi, v)
			}
		}
	}
	title := f.label
	if !f.count {
		title += " *"
	}
	fit := "" // a long title is squeezed into its panel's width rather than over the next
	if len(title) > 45 {
		fit = fmt.Sprintf(` textLength="%d" lengthAdjust="spacingAndGlyphs"`, panelW-10)
	}
	fmt.Fprintf(b, `<text x="%d" y="%d" font-weight="bold"%s>%s</text>`+"\n", ox, oy-8, fit, html.EscapeString(title))
	fmt.Fprintf(b, `<rect x="%d" y="%d" width="%d" height="%d" fill="none" stroke="#999"/>`+"\n", ox, oy, panelW-10, panelH)
	if math.IsInf(xlo, 1) {
		fmt.Fprintf(b, `<text x="%d" y="%d" fill="#999">no data</text>`+"\n", ox+10, oy+20)
		return
	}
	// Whole decades around the data, so that slopes read off the grid.
	x0, x1 := math.Floor(math.Log10(xlo)), math.Ceil(math.Log10(xhi))
	y0, y1 := math.Floor(math.Log10(ylo)), math.Ceil(math.Log10(yhi))
	if x1 == x0 {
		x1++
	}
	if y1 == y0 {
		y1++
	}
	px := func(v float64) float64 { return float64(ox) + (math.Log10(v)-x0)/(x1-x0)*float64(panelW-10) }
	py := func(v float64) float64 { return float64(oy+panelH) - (math.Log10(v)-y0)/(y1-y0)*float64(panelH) }
	for d := x0; d <= x1; d++ {
		x := px(math.Pow(10, d))
		fmt.Fprintf(b, `<line x1="%.1f" y1="%d" x2="%.1f" y2="%d" stroke="#eee"/><text x="%.1f" y="%d" text-anchor="middle">%s</text>`+"\n",
			x, oy, x, oy+panelH, x, oy+panelH+14, decade(d))
	}
	for d := y0; d <= y1; d++ {
		y := py(math.Pow(10, d))
		fmt.Fprintf(b, `<line x1="%d" y1="%.1f" x2="%d" y2="%.1f" stroke="#eee"/><text x="%d" y="%.1f" text-anchor="end">%s</text>`+"\n",
			ox, y, ox+panelW-10, y, ox-4, y+4, decade(d))
	}
	for _, c := range contenders {
		var pts []string
		for _, p := range bySize[c] {
			if v, ok := p.Figures[f.id]; ok && v > 0 {
				x, y := px(float64(p.Size)), py(v)
				pts = append(pts, fmt.Sprintf("%.1f,%.1f", x, y))
				fmt.Fprintf(b, `<circle cx="%.1f" cy="%.1f" r="3" fill="%s"><title>%s %s: %s</title></circle>`+"\n",
					x, y, colour(c), html.EscapeString(c), html.EscapeString(p.Label), formatScale(v))
			}
		}
		if len(pts) > 1 {
			fmt.Fprintf(b, `<polyline points="%s" fill="none" stroke="%s" stroke-width="2"/>`+"\n", strings.Join(pts, " "), colour(c))
		}
	}
}

func colour(contender string) string {
	if c, ok := lineColours[contender]; ok {
		return c
	}
	return "#555"
}

// decade labels 10^d.
func decade(d float64) string {
	switch {
	case d >= 0 && d <= 6:
		return fmt.Sprint(math.Pow(10, d))
	case d < 0 && d >= -3:
		return strings.TrimRight(fmt.Sprintf("%.3f", math.Pow(10, d)), "0")
	}
	return fmt.Sprintf("1e%d", int(d))
}
