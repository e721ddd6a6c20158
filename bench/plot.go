package main

import (
	"fmt"
	"image/color"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/zkrecipes/zkrecipes/bench/internal/driver"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
)

// colours gives each contender, in driver.AllContenders' order (limit, zk.Lock,
// zkrecipes, Curator), the same colour in every panel.
var colours = []color.Color{
	color.RGBA{R: 0x66, G: 0x66, B: 0x66, A: 0xff},
	color.RGBA{R: 0x1f, G: 0x77, B: 0xb4, A: 0xff},
	color.RGBA{R: 0xd6, G: 0x27, B: 0x28, A: 0xff},
	color.RGBA{R: 0x2c, G: 0xa0, B: 0x2c, A: 0xff},
}

// drawPlot writes a PNG of two panels: contended mutex throughput against sessions,
// one line per contender, and the distribution of leader hand-over latencies.
func drawPlot(r *driver.Report, file string) error {
	left, err := throughputPlot(r)
	if err != nil {
		return err
	}
	right, err := handoverPlot(r)
	if err != nil {
		return err
	}
	img := vgimg.NewWith(vgimg.UseWH(13*vg.Inch, 5*vg.Inch), vgimg.UseDPI(110))
	dc := draw.New(img)
	tiles := draw.Tiles{Rows: 1, Cols: 2, PadX: vg.Inch / 2, PadTop: vg.Inch / 8, PadBottom: vg.Inch / 8,
		PadLeft: vg.Inch / 8, PadRight: vg.Inch / 4}
	canvases := plot.Align([][]*plot.Plot{{left, right}}, tiles, dc)
	left.Draw(canvases[0][0])
	right.Draw(canvases[0][1])
	if err := os.MkdirAll(filepath.Dir(file), 0o755); err != nil {
		return err
	}
	f, err := os.Create(file)
	if err != nil {
		return err
	}
	if _, err := (vgimg.PngCanvas{Canvas: img}).WriteTo(f); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

func newPlot(title, x, y string) *plot.Plot {
	p := plot.New()
	p.Title.Text = title
	p.Title.TextStyle.Font.Size = vg.Points(14)
	p.X.Label.Text = x
	p.Y.Label.Text = y
	p.Add(plotter.NewGrid())
	return p
}

func throughputPlot(r *driver.Report) (*plot.Plot, error) {
	p := newPlot("Contended mutex: acquisitions per second", "sessions on one lock path", "acquisitions/s (median)")
	p.X.Scale = plot.LogScale{}
	p.X.Tick.Marker = plot.ConstantTicks([]plot.Tick{{Value: 2, Label: "2"}, {Value: 8, Label: "8"}, {Value: 32, Label: "32"}})
	p.X.Min, p.X.Max = 1.6, 40
	p.Y.Min = 0
	curves := r.ContendedCurves()
	for i, c := range driver.AllContenders {
		pts := curves[c]
		if len(pts) == 0 {
			continue
		}
		xys := make(plotter.XYs, len(pts))
		for j, pt := range pts {
			xys[j].X, xys[j].Y = pt[0], pt[1]
			p.Y.Max = max(p.Y.Max, pt[1]*1.15)
		}
		line, points, err := plotter.NewLinePoints(xys)
		if err != nil {
			return nil, err
		}
		line.Color, points.Color = colours[i%len(colours)], colours[i%len(colours)]
		line.Width = vg.Points(2)
		points.Shape = shapes[i%len(shapes)]
		points.Radius = vg.Points(4)
		p.Add(line, points)
		p.Legend.Add(c, line, points)
	}
	return p, nil
}

var shapes = []draw.GlyphDrawer{draw.CircleGlyph{}, draw.SquareGlyph{}, draw.TriangleGlyph{}, draw.PyramidGlyph{}}

// handoverPlot draws each contender's hand-over latencies as a cumulative
// distribution: the fraction of hand-overs done within x ms.
func handoverPlot(r *driver.Report) (*plot.Plot, error) {
	p := newPlot("Leader hand-over latency (all runs)", "ms from the leader's close to the next leader's listener (log scale)",
		"fraction of hand-overs")
	p.X.Scale = plot.LogScale{}
	p.Y.Min, p.Y.Max = 0, 1
	all := r.Handovers()
	lo, hi := 1e9, 0.0
	for _, lat := range all {
		if len(lat) > 0 {
			lo, hi = min(lo, millis(lat[0])), max(hi, millis(lat[len(lat)-1]))
		}
	}
	if hi == 0 {
		lo, hi = 0.1, 10
	}
	p.X.Min, p.X.Max = lo*0.8, hi*1.25
	p.X.Tick.Marker = logTicks(p.X.Min, p.X.Max)
	for i, c := range driver.AllContenders {
		lat := all[c]
		if len(lat) == 0 {
			continue
		}
		xys := make(plotter.XYs, 0, len(lat)+1)
		xys = append(xys, plotter.XY{X: millis(lat[0]), Y: 0})
		for i, d := range lat {
			xys = append(xys, plotter.XY{X: millis(d), Y: float64(i+1) / float64(len(lat))})
		}
		line, err := plotter.NewLine(xys)
		if err != nil {
			return nil, err
		}
		line.StepStyle = plotter.PostStep
		line.Color = colours[i%len(colours)]
		line.Width = vg.Points(2)
		p.Add(line)
		p.Legend.Add(fmt.Sprintf("%s (all runs pooled: p50 %.2f ms, p99 %.2f ms)", c, millis(driver.Percentile(lat, 50)), millis(driver.Percentile(lat, 99))), line)
	}
	p.Legend.Left = false
	p.Legend.Top = false
	return p, nil
}

func millis(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// logTicks labels 1, 2 and 5 times the powers of ten between lo and hi.
func logTicks(lo, hi float64) plot.ConstantTicks {
	var ticks []plot.Tick
	for decade := 0.001; decade < hi*10; decade *= 10 {
		for _, m := range []float64{1, 2, 5} {
			v := m * decade
			if v >= lo && v <= hi {
				ticks = append(ticks, plot.Tick{Value: v, Label: strconv.FormatFloat(v, 'g', -1, 64)})
			}
		}
	}
	return ticks
}
