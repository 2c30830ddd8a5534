package classify_test

import (
	"context"
	"fmt"
	"image"
	"image/jpeg"
	"image/png"
	"math"
	"os"
	"path/filepath"
	"testing"
	"time"

	"archivekit/bindings/torch"
	"archivekit/internal/ledger"
	"archivekit/internal/pageclass/classify"
	"archivekit/internal/pageclass/imageio"
	"archivekit/internal/pageclass/imageio/hostile"
	"archivekit/internal/testenv"
)

// hostPages is the sample pages these benchmarks use: every fourth, 46.
func hostPages(b *testing.B) []string {
	var out []string
	for i, p := range samplePages(b) {
		if i%4 == 0 {
			out = append(out, p)
		}
	}
	return out
}

// cpuPerPage runs f over pages and returns the process CPU time per page
// (user and system; one goroutine, so other load barely moves it).
func cpuPerPage(b *testing.B, pages []string, f func(path string)) time.Duration {
	t0 := testenv.CPUTime()
	for _, p := range pages {
		f(p)
	}
	return (testenv.CPUTime() - t0) / time.Duration(len(pages))
}

func ms(d time.Duration) float64 { return float64(d) / 1e6 }

// BenchmarkPageStages is the host's CPU time a page, stage by stage, one
// page after another on one goroutine, over every fourth sample page (0.26
// MP PNGs on average): reading the file, its digest, opening it (header),
// decoding it (libvips), resizing it to 384 and to 224 as the host does
// (torch.Preprocess, libtorch's antialiased resize on one thread, floats
// out), normalising a 384 page (torch.Batch.Page: scaling, mean and std,
// copied out), and the same two resizes done by torch.SetAll on CPU
// tensors (what a GPU does with UploadPage; here on the host's CPU).
//
//	go test -run '^$' -bench PageStages -benchtime 1x ./internal/pageclass/classify
func BenchmarkPageStages(b *testing.B) {
	pages := hostPages(b)
	dec := imageio.DefaultOptions
	b384, err := torch.NewBatch("cpu", 1, 384)
	if err != nil {
		b.Fatal(err)
	}
	defer b384.Close()
	b224, err := torch.NewBatch("cpu", 1, 224)
	if err != nil {
		b.Fatal(err)
	}
	defer b224.Close()
	mean, std := [3]float32{0.485, 0.456, 0.406}, [3]float32{0.229, 0.224, 0.225}
	zero, one := [3]float32{}, [3]float32{1, 1, 1}
	stages := []struct {
		name string
		f    func(data []byte, doc *imageio.Doc, img imageio.Image) error
	}{
		{"digest", func(data []byte, _ *imageio.Doc, _ imageio.Image) error { ledger.DigestBytes(data); return nil }},
		{"open", func(data []byte, _ *imageio.Doc, _ imageio.Image) error {
			_, err := dec.Decode(data, "p.png")
			return err
		}},
		{"decode", func(_ []byte, doc *imageio.Doc, _ imageio.Image) error {
			return doc.Use(context.Background(), 0, func(imageio.Image) error { return nil })
		}},
		{"resize384", func(_ []byte, _ *imageio.Doc, img imageio.Image) error {
			_, err := torch.Preprocess(img.Pix, img.H, img.W, 3, 384, zero, one)
			return err
		}},
		{"resize224", func(_ []byte, _ *imageio.Doc, img imageio.Image) error {
			_, err := torch.Preprocess(img.Pix, img.H, img.W, 3, 224, zero, one)
			return err
		}},
		{"normalise384", func(_ []byte, _ *imageio.Doc, img imageio.Image) error {
			_, err := b384.Page(0, mean, std)
			return err
		}},
		{"setall384+224", func(_ []byte, _ *imageio.Doc, img imageio.Image) error {
			return torch.SetAll([]*torch.Batch{b384, b224}, 0, img.Pix, img.H, img.W, 3)
		}},
	}
	for n := 0; n < b.N; n++ {
		var read time.Duration
		each := make([]time.Duration, len(stages))
		for _, p := range pages {
			t0 := testenv.CPUTime()
			data, err := imageio.ReadFile(p)
			if err != nil {
				b.Fatal(err)
			}
			read += testenv.CPUTime() - t0
			doc, err := dec.Decode(data, filepath.Base(p))
			if err != nil {
				b.Fatal(err)
			}
			img, err := doc.Page(0)
			if err != nil {
				b.Fatal(err)
			}
			for k, s := range stages {
				t0 := testenv.CPUTime()
				if err := s.f(data, doc, img); err != nil {
					b.Fatal(err)
				}
				each[k] += testenv.CPUTime() - t0
			}
		}
		per := func(d time.Duration) float64 { return ms(d) / float64(len(pages)) }
		b.ReportMetric(per(read), "ms-read")
		for k, s := range stages {
			b.ReportMetric(per(each[k]), "ms-"+s.name)
		}
	}
	b.ReportMetric(testenv.LoadAvg(), "load-avg")
}

// BenchmarkHostPrepare is the host's CPU time a page of Predict's workers
// (open, decode and the page's row) for the shipped demo ensemble with the
// orientation model (input sizes 224, 240, 320 and 384; the orientation
// model's is 224) with each upload: float (every distinct
// preprocessing normalised on the host), u8 (one 8-bit resize a size on
// the host) and page (the decoded page only, shrunk on load to
// PagePixels(384); the resizes are left to the device), against decoding
// alone, in alternating rounds in one run (best of each). page/u8 is the
// share of the host's work that UploadPage leaves on it; on a GPU machine
// it bounds the pages a second its cores prepare. The device's resizes
// are not in these figures (on a GPU they are the card's). Over the
// sample pages (samples) and over six of them enlarged to A4 scans at 300
// dpi (a4-scans: 8.7 MP JPEGs, which UploadPage decodes shrunk on load;
// a4-tiff-masters and a4-png-masters: the same as uncompressed TIFFs and
// as PNGs, an archive's masters, which no decoder shrinks on load).
//
//	go test -run '^$' -bench HostPrepare -benchtime 1x ./internal/pageclass/classify
func BenchmarkHostPrepare(b *testing.B) {
	b.Run("samples", func(b *testing.B) { hostPrepare(b, hostPages(b)) })
	b.Run("a4-scans", func(b *testing.B) { hostPrepare(b, scans(b, b.TempDir(), 6)) })
	b.Run("a4-tiff-masters", func(b *testing.B) { hostPrepare(b, scansAs(b, b.TempDir(), 6, "tif")) })
	b.Run("a4-png-masters", func(b *testing.B) { hostPrepare(b, scansAs(b, b.TempDir(), 6, "png")) })
}

// demoOnCPU loads the shipped demo ensemble and the orientation model on
// the CPU, closed when b ends; it skips b without the demo ensemble.
func demoOnCPU(b testing.TB) ([]*classify.Model, *classify.Orientation) {
	folders, err := classify.DemoEnsemble("../../../weights/demo")
	if err != nil {
		b.Skip("no shipped demo ensemble:", err)
	}
	models, err := classify.LoadAll(folders, "cpu")
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { classify.CloseAll(models) })
	orient, err := classify.LoadOrientation(filepath.Join("..", "..", "..", "weights", "rotation"), "cpu")
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { orient.Close() })
	return models, orient
}

// hostPrepare is BenchmarkHostPrepare over pages.
func hostPrepare(b *testing.B, pages []string) {
	models, orient := demoOnCPU(b)
	ups := []classify.Upload{classify.UploadFloat, classify.UploadU8, classify.UploadPage}
	run := func(dec imageio.Options, prep func(imageio.Image) error) func(string) {
		return func(p string) {
			data, err := imageio.ReadFile(p)
			if err != nil {
				b.Fatal(err)
			}
			doc, err := dec.Decode(data, filepath.Base(p))
			if err != nil {
				b.Fatal(err)
			}
			if err := doc.Use(context.Background(), 0, prep); err != nil {
				b.Fatal(err)
			}
		}
	}
	best := map[string]time.Duration{}
	keep := func(k string, d time.Duration) {
		if v, ok := best[k]; !ok || d < v {
			best[k] = d
		}
	}
	for n := 0; n < b.N; n++ {
		for r := 0; r < 2; r++ {
			keep("decode", cpuPerPage(b, pages, run(imageio.DefaultOptions, func(imageio.Image) error { return nil })))
			for _, up := range ups {
				dec := imageio.DefaultOptions
				if up == classify.UploadPage {
					dec = classify.PageDecode(dec, 384)
				}
				keep(up.String(), cpuPerPage(b, pages, run(dec, classify.HostPrepare(models, orient, up))))
			}
		}
	}
	for k, d := range best {
		b.ReportMetric(ms(d), "ms-cpu-"+k)
	}
	b.ReportMetric(float64(best["page"])/float64(best["u8"]), "page/u8")
	b.ReportMetric(float64(best["page"])/float64(best["float"]), "page/float")
	b.ReportMetric(testenv.LoadAvg(), "load-avg")
}

// scans writes n sample pages enlarged (nearest neighbour) to about an A4
// page at 300 dpi (8.7 MP) as JPEGs (quality 90) under dir: what an
// archive's scans are, where the sample pages are small.
func scans(b testing.TB, dir string, n int) []string { return scansAs(b, dir, n, "jpg") }

// scansAs is scans as JPEGs (ext jpg), uncompressed 8-bit RGB TIFFs (ext
// tif) or 8-bit RGB PNGs (ext png), as scanners write masters.
func scansAs(b testing.TB, dir string, n int, ext string) []string {
	var out []string
	for i, p := range samplePages(b) {
		if i%17 != 0 || len(out) == n {
			continue
		}
		f, err := os.Open(p)
		if err != nil {
			b.Fatal(err)
		}
		src, err := png.Decode(f)
		f.Close()
		if err != nil {
			b.Fatal(err)
		}
		sb := src.Bounds()
		k := math.Sqrt(2480 * 3508 / float64(sb.Dx()*sb.Dy()))
		w, h := int(float64(sb.Dx())*k), int(float64(sb.Dy())*k)
		dst := image.NewRGBA(image.Rect(0, 0, w, h))
		for y := 0; y < h; y++ {
			for x := 0; x < w; x++ {
				dst.Set(x, y, src.At(sb.Min.X+int(float64(x)/k), sb.Min.Y+int(float64(y)/k)))
			}
		}
		name := filepath.Join(dir, fmt.Sprintf("scan%d.%s", i, ext))
		g, err := os.Create(name)
		if err != nil {
			b.Fatal(err)
		}
		switch ext {
		case "tif":
			err = hostile.RGBTIFF(g, dst)
		case "png":
			err = png.Encode(g, dst)
		default:
			err = jpeg.Encode(g, dst, &jpeg.Options{Quality: 90})
		}
		if err != nil {
			b.Fatal(err)
		}
		if err := g.Close(); err != nil {
			b.Fatal(err)
		}
		out = append(out, name)
	}
	return out
}
