package review

import "math"

// Ink is the near-blank evidence of a page.
type Ink struct {
	// Coverage is the share of the page (its outer margins left out) darker
	// than the paper by more than InkContrast.
	Coverage float64 `json:"coverage"`
	// NearBlank is Coverage < NearBlankCoverage.
	NearBlank bool `json:"near_blank"`
}

const (
	// InkMargin is the share of the width and height left out on each side:
	// scanner edges, shadows and punch holes are not ink.
	InkMargin = 0.05
	// InkContrast: a pixel is ink when its luminance is below
	// (1 − InkContrast) × the paper's (the 90th percentile of the page's
	// luminance), so paper texture and show-through are not counted.
	InkContrast = 0.25
	// NearBlankCoverage is the coverage under which a page is near-blank.
	NearBlankCoverage = 0.002
	// inkSamples is about how many pixels are looked at, whatever the
	// page's size.
	inkSamples = 250_000
)

// MeasureInk measures the ink of a decoded page: pix holds w×h RGB pixels,
// row by row. The page is sampled on a regular grid of about 250,000 points.
func MeasureInk(pix []uint8, w, h int) Ink {
	c := coverage(pix, w, h, InkContrast)
	return Ink{Coverage: c, NearBlank: c < NearBlankCoverage}
}

// coverage is the share of ink pixels at a contrast.
func coverage(pix []uint8, w, h int, contrast float64) float64 {
	x0, x1 := int(float64(w)*InkMargin), w-int(float64(w)*InkMargin)
	y0, y1 := int(float64(h)*InkMargin), h-int(float64(h)*InkMargin)
	if x1 <= x0 || y1 <= y0 || len(pix) < w*h*3 {
		return 0
	}
	step := int(math.Ceil(math.Sqrt(float64((x1-x0)*(y1-y0)) / inkSamples)))
	if step < 1 {
		step = 1
	}
	var hist [256]int
	n := 0
	for y := y0; y < y1; y += step {
		row := pix[y*w*3:]
		for x := x0; x < x1; x += step {
			i := x * 3
			l := (299*int(row[i]) + 587*int(row[i+1]) + 114*int(row[i+2]) + 500) / 1000
			hist[l]++
			n++
		}
	}
	// paper: the 90th percentile of the luminance
	paper, seen := 255, 0
	for l := 0; l < 256; l++ {
		seen += hist[l]
		if seen*10 >= n*9 {
			paper = l
			break
		}
	}
	limit := float64(paper) * (1 - contrast)
	ink := 0
	for l := 0; l < 256 && float64(l) < limit; l++ {
		ink += hist[l]
	}
	return float64(ink) / float64(n)
}
