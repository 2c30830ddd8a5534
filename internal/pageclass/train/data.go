package train

import (
	"context"
	"fmt"
	"math"
	"path/filepath"
	"runtime"
	"sync"

	"archivekit/bindings/torch"
	"archivekit/internal/pageclass/imageio"
	"archivekit/internal/pageclass/modelmeta"
	"archivekit/internal/pageclass/registry"
	"archivekit/internal/pageclass/splits"
)

// sample is one page resized once to the model's input size: 8-bit CHW
// pixels (the rounded output of the antialiased resize), so every epoch can
// augment and normalise without decoding again.
type sample struct {
	root  string // the pages folder path is relative to
	path  string
	label int64
	pix   []uint8 // 3 x size x size; nil when not kept in memory (Options.NoCache)
	// dec decodes the page when it is read again (pix nil); nil:
	// imageio.DefaultOptions.
	dec *imageio.Options
}

// pixels returns the page's resized pixels: the kept ones, else read again
// from disk.
func pixels(s *sample, size int) ([]uint8, error) {
	if s.pix != nil {
		return s.pix, nil
	}
	return resizedPixels(filepath.Join(s.root, filepath.FromSlash(s.path)), size, s.dec)
}

// identity normalisation: Preprocess then returns the resized pixels / 255.
var (
	zero3 = [3]float32{0, 0, 0}
	one3  = [3]float32{1, 1, 1}
)

// loadSamples decodes and resizes items in parallel. Pages that cannot be
// read are returned in bad (path -> reason) and left out; they never shift
// another page. Unless keep is set, each page's pixels are dropped as soon
// as it is known to be readable (Options.NoCache: pixels reads it again when
// a batch needs it), so memory never holds the whole set. dec
// decodes the pages (nil: imageio.DefaultOptions).
func loadSamples(ctx context.Context, root string, items []splits.Item, size, workers int, keep bool, dec *imageio.Options) ([]sample, map[string]string, error) {
	if dec == nil {
		dec = &imageio.DefaultOptions
	}
	if workers <= 0 {
		workers = runtime.NumCPU()
	}
	out := make([]sample, len(items))
	ok := make([]bool, len(items))
	bad := map[string]string{}
	var mu sync.Mutex
	jobs := make(chan int)
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range jobs {
				it := items[i]
				pix, err := resizedPixels(filepath.Join(root, filepath.FromSlash(it.Path)), size, dec)
				if err != nil {
					mu.Lock()
					bad[it.Path] = err.Error()
					mu.Unlock()
					continue
				}
				if !keep {
					pix = nil
				}
				out[i] = sample{root: root, path: it.Path, label: int64(modelmeta.CategoryIndex(it.Label)), pix: pix, dec: dec}
				ok[i] = true
			}
		}()
	}
	for i := range items {
		select {
		case jobs <- i:
		case <-ctx.Done():
			close(jobs)
			wg.Wait()
			return nil, nil, ctx.Err()
		}
	}
	close(jobs)
	wg.Wait()
	kept := out[:0]
	for i := range out {
		if ok[i] {
			kept = append(kept, out[i])
		}
	}
	return kept, bad, nil
}

// resizedPixels reads the one page of the file at path and resizes it. A
// file of several pages (a multi-page TIFF or a PDF) is refused with an
// error naming it and its page count: splits, folds CSVs and evaluation
// tables are keyed by file, so a file is one labelled sample; training on
// its first page alone would drop the others without a word.
func resizedPixels(path string, size int, dec *imageio.Options) ([]uint8, error) {
	if dec == nil {
		dec = &imageio.DefaultOptions
	}
	doc, err := dec.Open(path)
	if err != nil {
		return nil, err
	}
	if n := doc.Pages(); n > 1 {
		return nil, fmt.Errorf("%s: %d pages; training takes one page per file: save each page as a file of its own", path, n)
	}
	img, err := doc.Page(0)
	if err != nil {
		return nil, err
	}
	f, err := torch.Preprocess(img.Pix, img.H, img.W, 3, size, zero3, one3)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	pix := make([]uint8, len(f))
	for i, v := range f {
		pix[i] = uint8(math.Round(float64(v) * 255))
	}
	return pix, nil
}

// normalise turns 8-bit CHW pixels into the model's normalised floats,
// writing into dst.
func normalise(dst []float32, pix []uint8, p registry.Preprocess) {
	plane := len(pix) / 3
	for c := 0; c < 3; c++ {
		m, s := float32(p.Mean[c]), float32(p.Std[c])
		src := pix[c*plane : (c+1)*plane]
		d := dst[c*plane : (c+1)*plane]
		for i, v := range src {
			d[i] = (float32(v)/255 - m) / s
		}
	}
}
