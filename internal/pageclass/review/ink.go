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
func MeasureInk(pix []uint8, w, h int) Ink { return SampleInk(pix, w, h).Ink() }

// InkSample is the count behind a page's ink measure: Dark of the Sampled
// pixels looked at are ink. For any page imageio decodes both counts are
// below 2^24 (about 250,000 samples for a page of ordinary shape), so they
// travel exactly in float32 (a row of the classifier's pipeline), and Ink
// gives the same coverage wherever it is computed.
type InkSample struct {
	Dark, Sampled int
}

// SampleInk counts the ink of a decoded page (see MeasureInk).
func SampleInk(pix []uint8, w, h int) InkSample { return sampleInk(pix, w, h, InkContrast) }

// Ink is the page's ink evidence: the coverage Dark/Sampled (0 when
// nothing was sampled) and whether it is under NearBlankCoverage.
func (s InkSample) Ink() Ink {
	c := 0.0
	if s.Sampled > 0 {
		c = float64(s.Dark) / float64(s.Sampled)
	}
	return Ink{Coverage: c, NearBlank: c < NearBlankCoverage}
}

// coverage is the share of ink pixels at a contrast.
func coverage(pix []uint8, w, h int, contrast float64) float64 {
	return sampleInk(pix, w, h, contrast).Ink().Coverage
}

// sampleInk counts the ink pixels at a contrast.
func sampleInk(pix []uint8, w, h int, contrast float64) InkSample {
	x0, x1 := int(float64(w)*InkMargin), w-int(float64(w)*InkMargin)
	y0, y1 := int(float64(h)*InkMargin), h-int(float64(h)*InkMargin)
	if x1 <= x0 || y1 <= y0 || len(pix) < w*h*3 {
		return InkSample{}
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
	return InkSample{Dark: ink, Sampled: n}
}
