package classify

import (
	"bytes"
	"context"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"sync"

	"archivekit/internal/pageclass/pipeline"
)

// WarmUp runs one batch of o.Batch synthetic pages (at least one) through
// the ensemble, exactly as Predict runs a run's pages (decoding, the
// upload, the device's resize and normalisation, every member, the
// orientation model), and throws the predictions away. It returns the
// run's Stats (Rows o.Batch, Batches 1, Elapsed how long it took).
//
// On a GPU the first call of each model pays the device's one-time set-up
// (CUDA's lazily loaded kernels, cuBLAS and cuDNN handles and workspaces,
// the caching allocator's first blocks), seconds for five full-size models;
// a run that warms its models while it does other start-up work (hashing
// the model files, reading its ledger) takes that off its classification.
// On the CPU there is little to warm and the batch costs real compute, so
// callers warm up on GPUs only.
func (e *Ensemble) WarmUp(ctx context.Context, o Options) (pipeline.Stats, error) {
	page, err := warmPage()
	if err != nil {
		return pipeline.Stats{}, err
	}
	n := max(1, o.Batch)
	inputs := make([]pipeline.Input, n)
	for i := range inputs {
		inputs[i] = pipeline.Input{Name: fmt.Sprintf("warm-up page %d", i+1), Data: page}
	}
	o.OnOpen = nil
	return e.Predict(ctx, inputs, o, func(p Page) error {
		if p.Err != nil {
			return fmt.Errorf("synthetic page: %w", p.Err)
		}
		return nil
	})
}

// warmPage is the PNG of the synthetic page WarmUp classifies: an A4 page
// at 100 dpi, paper grey with dark lines of "text", so the ink measure and
// every preprocessing see an ordinary page. It is made once.
var warmPage = sync.OnceValues(func() ([]byte, error) {
	const w, h = 827, 1169
	img := image.NewGray(image.Rect(0, 0, w, h))
	for y := 0; y < h; y++ {
		line := y > 100 && y < h-100 && y%24 < 10
		for x := 0; x < w; x++ {
			v := uint8(235)
			if line && x > 90 && x < w-90 && (x/37)%5 != 4 {
				v = 40
			}
			img.SetGray(x, y, color.Gray{Y: v})
		}
	}
	var buf bytes.Buffer
	if err := png.Encode(&buf, img); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
})
