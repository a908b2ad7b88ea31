package sim

import (
	"fmt"
	"image"
	"image/color"
	"image/png"
	"math"
	"os"
)

// plotColors are the policies' line colours in the PNG, in PolicyNames
// order.
var plotColors = []color.RGBA{
	{0xd6, 0x27, 0x28, 0xff}, // borg: red
	{0x1f, 0x77, 0xb4, 0xff}, // relevance: blue
	{0x2c, 0xa0, 0x2c, 0xff}, // count: green
	{0xff, 0x7f, 0x0e, 0xff}, // recency: orange
	{0x94, 0x67, 0xbd, 0xff}, // random: purple
	{0x8c, 0x56, 0x4b, 0xff}, // last-use: brown
	{0xe3, 0x77, 0xc2, 0xff}, // borg-rerank: pink
	{0x7f, 0x7f, 0x7f, 0xff}, // oracle: grey
}

// PNG geometry: the plot area and its margin.
const (
	pngWidth, pngHeight = 800, 500
	pngMargin           = 40
	pngLegendSwatch     = 14
)

// WritePNG draws the cumulative regret curves to a PNG file at path
// (x: sessions, y: regret from 0 to the largest value), with axes and a
// legend of colour swatches in PolicyNames order (borg red, relevance blue,
// count green, recency orange, random purple, last-use brown, borg-rerank pink, oracle grey).
func (r Report) WritePNG(path string) error {
	img := r.renderPNG()
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("write plot: %w", err)
	}
	if err := png.Encode(f, img); err != nil {
		_ = f.Close()
		return fmt.Errorf("write plot %s: %w", path, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("write plot %s: %w", path, err)
	}
	return nil
}

func (r Report) renderPNG() *image.RGBA {
	img := image.NewRGBA(image.Rect(0, 0, pngWidth, pngHeight))
	white := color.RGBA{0xff, 0xff, 0xff, 0xff}
	black := color.RGBA{0, 0, 0, 0xff}
	for y := 0; y < pngHeight; y++ {
		for x := 0; x < pngWidth; x++ {
			img.SetRGBA(x, y, white)
		}
	}
	x0, y0 := pngMargin, pngHeight-pngMargin // origin
	x1, y1 := pngWidth-pngMargin, pngMargin
	line(img, x0, y0, x1, y0, black)
	line(img, x0, y0, x0, y1, black)

	var top float64
	n := 0
	for _, p := range r.Policies {
		for _, v := range p.RegretCurve {
			top = math.Max(top, v)
		}
		n = max(n, len(p.RegretCurve))
	}
	if top <= 0 {
		top = 1
	}
	px := func(s int) int { return x0 + int(math.Round(float64(s+1)/float64(max(n, 1))*float64(x1-x0))) }
	py := func(v float64) int { return y0 - int(math.Round(v/top*float64(y0-y1))) }
	for pi := len(r.Policies) - 1; pi >= 0; pi-- {
		c := plotColors[pi%len(plotColors)]
		curve := r.Policies[pi].RegretCurve
		lx, ly := x0, y0
		for s, v := range curve {
			x, y := px(s), py(v)
			line(img, lx, ly, x, y, c)
			line(img, lx, ly+1, x, y+1, c)
			lx, ly = x, y
		}
		// The legend: one swatch per policy along the top.
		sx := pngMargin + 10 + pi*(pngLegendSwatch+10)
		for y := 8; y < 8+pngLegendSwatch; y++ {
			for x := sx; x < sx+pngLegendSwatch; x++ {
				img.SetRGBA(x, y, c)
			}
		}
	}
	return img
}

// line draws a segment with Bresenham's algorithm.
func line(img *image.RGBA, x0, y0, x1, y1 int, c color.RGBA) {
	dx, dy := abs(x1-x0), -abs(y1-y0)
	sx, sy := 1, 1
	if x0 > x1 {
		sx = -1
	}
	if y0 > y1 {
		sy = -1
	}
	err := dx + dy
	for {
		img.SetRGBA(x0, y0, c)
		if x0 == x1 && y0 == y1 {
			return
		}
		e2 := 2 * err
		if e2 >= dy {
			err += dy
			x0 += sx
		}
		if e2 <= dx {
			err += dx
			y0 += sy
		}
	}
}

func abs(x int) int {
	if x < 0 {
		return -x
	}
	return x
}
