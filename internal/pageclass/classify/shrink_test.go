package classify_test

import (
	"bytes"
	"image"
	"image/png"
	"math"
	"os"
	"testing"

	"archivekit/internal/pageclass/classify"
	"archivekit/internal/pageclass/classify/classifytest"
	"archivekit/internal/pageclass/imageio"
)

// TestShrinkOnLoadKeepsPredictions: a page decoded through the decode
// budget (shrunk while decoding, then resized by the model) gives the same
// predictions as the page decoded at full size and resized in one step,
// within the 0.02 probability limit of the equivalence test against the
// original pipeline. The page is a sample page enlarged 4× (2,084×2,944
// pixels) and the budget 1 MP (about 860×1,220), so the shrink is harsher
// than the default budget's (16 MP, ten times the largest model input)
// ever is. Five pages over the budget, one per category from the first. Models: the shipped demo ensemble (real trained weights).
func TestShrinkOnLoadKeepsPredictions(t *testing.T) {
	folders, err := classify.DemoEnsemble("../../../weights/demo")
	if err != nil {
		t.Skip("no demo ensemble: ", err)
	}
	ms, err := classify.LoadAll(folders, "cpu")
	if err != nil {
		t.Fatal(err)
	}
	defer classify.CloseAll(ms)
	const scale, budget = 4, 1 << 20
	var worstProb, worstInput float64
	pages := classifytest.Pages(t, 1)
	compared := 0
	for _, path := range pages {
		if compared == 5 {
			break
		}
		big := enlarge(t, path, scale)
		full, err := imageio.Options{MaxDecodePixels: -1}.Decode(big, path)
		if err != nil {
			t.Fatal(err)
		}
		shrunk, err := imageio.Options{MaxDecodePixels: budget}.Decode(big, path)
		if err != nil {
			t.Fatal(err)
		}
		a, err := full.Page(0)
		if err != nil {
			t.Fatal(err)
		}
		b, err := shrunk.Page(0)
		if err != nil {
			t.Fatal(err)
		}
		if a.W*a.H <= budget {
			continue // small page: decoded at full size either way
		}
		compared++
		if b.W*b.H > budget || b.W >= a.W {
			t.Fatalf("%s: shrunk page %d×%d (full %d×%d), budget %d", path, b.W, b.H, a.W, a.H, budget)
		}
		for _, m := range ms {
			ta, err := m.Preprocess(a)
			if err != nil {
				t.Fatal(err)
			}
			tb, err := m.Preprocess(b)
			if err != nil {
				t.Fatal(err)
			}
			for i := range ta {
				worstInput = max(worstInput, math.Abs(float64(ta[i]-tb[i])))
			}
			s := m.Size()
			pa, err := m.Probabilities(ta, 1, 3, s, s)
			if err != nil {
				t.Fatal(err)
			}
			pb, err := m.Probabilities(tb, 1, 3, s, s)
			if err != nil {
				t.Fatal(err)
			}
			for c := range pa[0] {
				worstProb = max(worstProb, math.Abs(float64(pa[0][c]-pb[0][c])))
			}
		}
	}
	t.Logf("%d pages enlarged %d× and shrunk to %d pixels while decoding, %d models: max probability difference %.4f, max input difference %.3f (normalised units)",
		compared, scale, budget, len(ms), worstProb, worstInput)
	if worstProb > 0.02 {
		t.Errorf("probabilities differ by %.4f, limit 0.02", worstProb)
	}
}

// enlarge returns the page at path enlarged scale× by pixel repetition, as
// a PNG.
func enlarge(t *testing.T, path string, scale int) []byte {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	src, err := png.Decode(f)
	if err != nil {
		t.Fatal(err)
	}
	b := src.Bounds()
	dst := image.NewNRGBA(image.Rect(0, 0, b.Dx()*scale, b.Dy()*scale))
	for y := 0; y < dst.Bounds().Dy(); y++ {
		for x := 0; x < dst.Bounds().Dx(); x++ {
			dst.Set(x, y, src.At(b.Min.X+x/scale, b.Min.Y+y/scale))
		}
	}
	var out bytes.Buffer
	enc := png.Encoder{CompressionLevel: png.BestSpeed}
	if err := enc.Encode(&out, dst); err != nil {
		t.Fatal(err)
	}
	return out.Bytes()
}
