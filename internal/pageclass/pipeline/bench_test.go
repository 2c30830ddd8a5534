package pipeline

import (
	"context"
	"fmt"
	"testing"

	"archivekit/internal/pageclass/imageio"
)

// resize224 is a stand-in for the production preprocessing with a
// comparable cost: bilinear resize to 224×224 and per-channel
// normalisation, in CHW order.
func resize224(img imageio.Image) ([]float32, error) {
	const s = 224
	mean := [3]float32{0.485, 0.456, 0.406}
	std := [3]float32{0.229, 0.224, 0.225}
	out := make([]float32, 3*s*s)
	sx := float32(img.W) / s
	sy := float32(img.H) / s
	for y := 0; y < s; y++ {
		fy := (float32(y)+0.5)*sy - 0.5
		if fy < 0 {
			fy = 0
		}
		y0 := int(fy)
		y1 := min(y0+1, img.H-1)
		wy := fy - float32(y0)
		for x := 0; x < s; x++ {
			fx := (float32(x)+0.5)*sx - 0.5
			if fx < 0 {
				fx = 0
			}
			x0 := int(fx)
			x1 := min(x0+1, img.W-1)
			wx := fx - float32(x0)
			for c := 0; c < 3; c++ {
				p := func(xx, yy int) float32 { return float32(img.Pix[(yy*img.W+xx)*3+c]) }
				v := (p(x0, y0)*(1-wx)+p(x1, y0)*wx)*(1-wy) + (p(x0, y1)*(1-wx)+p(x1, y1)*wx)*wy
				out[c*s*s+y*s+x] = (v/255 - mean[c]) / std[c]
			}
		}
	}
	return out, nil
}

// nullModel returns a constant row; the benchmark measures the pipeline.
type nullModel struct{}

func (nullModel) Probabilities(data []float32, n, c, h, w int) ([][]float32, error) {
	out := make([][]float32, n)
	for i := range out {
		out[i] = make([]float32, 11)
	}
	return out, nil
}

// BenchmarkRun decodes and preprocesses the 184 test pages with 1, 2 and 4
// workers; pages/s is the figure to compare.
func BenchmarkRun(b *testing.B) {
	pages := realPages(b, 184)
	for _, workers := range []int{1, 2, 4} {
		b.Run(fmt.Sprintf("workers=%d", workers), func(b *testing.B) {
			c := Config{Workers: workers, Batch: 16, Channels: 3, Height: 224, Width: 224, Preprocess: resize224}
			rows := 0
			for i := 0; i < b.N; i++ {
				st, err := Run(context.Background(), Files(pages), nullModel{}, c, func(r Result) error {
					if r.Err != nil {
						return r.Err
					}
					return nil
				})
				if err != nil {
					b.Fatal(err)
				}
				rows += st.Rows
			}
			b.ReportMetric(float64(rows)/b.Elapsed().Seconds(), "pages/s")
		})
	}
}
