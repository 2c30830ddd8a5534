package review

import (
	"archivekit/internal/testenv"
	"os"
	"path/filepath"
	"sort"
	"testing"

	"archivekit/internal/pageclass/imageio"
)

// samplePages are the labelled sample pages (shareddata: the shared data
// folder of its environment variable, or shared/data/pages above the
// working directory); the test is skipped when they are absent.
func samplePages(t *testing.T) []string {
	t.Helper()
	root := testenv.Data(t, "pages")
	files, _ := filepath.Glob(filepath.Join(root, "*", "*.png"))
	if len(files) == 0 {
		t.Fatalf("no sample pages under %s", root)
	}
	return files
}

func decode(t *testing.T, path string) imageio.Image {
	t.Helper()
	doc, err := imageio.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	img, err := doc.Page(0)
	if err != nil {
		t.Fatal(err)
	}
	return img
}

// Every sample page has content: none may be flagged near-blank.
func TestInkSamplePagesAreNotBlank(t *testing.T) {
	type cov struct {
		f string
		c float64
	}
	var all []cov
	for _, f := range samplePages(t) {
		img := decode(t, f)
		ink := MeasureInk(img.Pix, img.W, img.H)
		all = append(all, cov{f, ink.Coverage})
		if ink.NearBlank {
			t.Errorf("%s: near-blank (coverage %.5f)", f, ink.Coverage)
		}
	}
	sort.Slice(all, func(i, j int) bool { return all[i].c < all[j].c })
	for _, c := range all[:5] {
		t.Logf("lowest coverage: %.5f %s", c.c, filepath.Base(c.f))
	}
	if os.Getenv("INK_ALL") != "" {
		for _, k := range []float64{0.1, 0.15, 0.2, 0.25, 0.3} {
			lo := 1.0
			for _, f := range samplePages(t) {
				img := decode(t, f)
				lo = min(lo, coverage(img.Pix, img.W, img.H, k))
			}
			t.Logf("contrast %.2f: lowest coverage %.5f", k, lo)
		}
		for _, c := range all {
			t.Logf("%.5f %s", c.c, c.f)
		}
	}
}
