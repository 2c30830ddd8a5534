package train

import (
	"math"

	"archivekit/internal/pageclass/splits"
)

// Augmentation of a training page, on 8-bit CHW pixels already resized to
// the model's input size. Pages have a direction, so nothing flips or
// rotates. Each page of each epoch draws its own parameters from a
// SplitMix64 seeded by (seed, epoch, page index), so runs are reproducible.
//
//   - colour jitter: brightness, contrast and saturation factors uniform in
//     [0.8, 1.2], applied in that order (torchvision's ColorJitter formulas);
//   - sharpness: with probability 0.5, a factor uniform in [0.5, 2]
//     (torchvision's adjust_sharpness: blend with a 3x3 smoothed copy);
//   - slight blur: with probability 0.3, a 3x3 Gaussian with sigma uniform
//     in [0.1, 1.0].
type augmenter struct {
	size int
	tmp  []float32
}

func newAugmenter(size int) *augmenter {
	return &augmenter{size: size, tmp: make([]float32, 3*size*size)}
}

func uniform(g *splits.SplitMix64, lo, hi float64) float32 {
	return float32(lo + (hi-lo)*float64(g.Uint64()>>11)/float64(1<<53))
}

func clamp255(v float32) float32 {
	if v < 0 {
		return 0
	}
	if v > 255 {
		return 255
	}
	return v
}

// apply returns augmented pixels (a new slice; src is not modified).
func (a *augmenter) apply(src []uint8, g *splits.SplitMix64) []uint8 {
	n := a.size * a.size
	x := a.tmp
	for i, v := range src {
		x[i] = float32(v)
	}
	// brightness
	b := uniform(g, 0.8, 1.2)
	for i := range x {
		x[i] = clamp255(x[i] * b)
	}
	// contrast: blend with the mean of the grey image
	c := uniform(g, 0.8, 1.2)
	var mean float64
	for i := 0; i < n; i++ {
		mean += float64(0.299*x[i] + 0.587*x[n+i] + 0.114*x[2*n+i])
	}
	m := float32(mean / float64(n))
	for i := range x {
		x[i] = clamp255(c*x[i] + (1-c)*m)
	}
	// saturation: blend with the grey image
	s := uniform(g, 0.8, 1.2)
	for i := 0; i < n; i++ {
		grey := 0.299*x[i] + 0.587*x[n+i] + 0.114*x[2*n+i]
		for ch := 0; ch < 3; ch++ {
			x[ch*n+i] = clamp255(s*x[ch*n+i] + (1-s)*grey)
		}
	}
	if uniform(g, 0, 1) < 0.5 {
		f := uniform(g, 0.5, 2)
		// torchvision's sharpness kernel: [[1,1,1],[1,5,1],[1,1,1]] / 13, borders kept
		a.convolve(x, [9]float32{1, 1, 1, 1, 5, 1, 1, 1, 1}, 13, f)
	}
	if uniform(g, 0, 1) < 0.3 {
		sigma := float64(uniform(g, 0.1, 1.0))
		w0 := float32(1)
		w1 := float32(math.Exp(-1 / (2 * sigma * sigma)))
		w2 := w1 * w1
		k := [9]float32{w2, w1, w2, w1, w0, w1, w2, w1, w2}
		var sum float32
		for _, v := range k {
			sum += v
		}
		a.convolve(x, k, sum, 0)
	}
	out := make([]uint8, len(x))
	for i, v := range x {
		out[i] = uint8(clamp255(v) + 0.5)
	}
	return out
}

// convolve smooths each channel with a 3x3 kernel (divided by div) and
// blends: result = factor*x + (1-factor)*smooth. factor 0 is plain smoothing.
// Border pixels are left as they are.
func (a *augmenter) convolve(x []float32, k [9]float32, div, factor float32) {
	s := a.size
	n := s * s
	sm := make([]float32, n)
	for ch := 0; ch < 3; ch++ {
		p := x[ch*n : (ch+1)*n]
		copy(sm, p)
		for y := 1; y < s-1; y++ {
			for xx := 1; xx < s-1; xx++ {
				var acc float32
				j := 0
				for dy := -1; dy <= 1; dy++ {
					row := (y + dy) * s
					for dx := -1; dx <= 1; dx++ {
						acc += k[j] * p[row+xx+dx]
						j++
					}
				}
				sm[y*s+xx] = acc / div
			}
		}
		for i := range p {
			p[i] = clamp255(factor*p[i] + (1-factor)*sm[i])
		}
	}
}
