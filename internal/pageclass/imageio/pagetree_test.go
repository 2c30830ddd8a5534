package imageio

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"math/rand/v2"
	"regexp"
	"strings"
	"testing"

	"archivekit/internal/pageclass/imageio/hostile"

	"github.com/davidbyttow/govips/v2/vips"
)

// colourPages are three scanned pages, each of its own colour, so that a
// page's pixels tell which it is.
var colourPages = []color.RGBA{{200, 40, 40, 255}, {40, 200, 40, 255}, {40, 40, 200, 255}}

// brokenPDFs are 3-page scans (hostile.ScanPDFObjects) whose page 2 is
// broken in each of the ways poppler skips, and the intact scan.
func brokenPDFs(t *testing.T) (intact []byte, broken map[string][]byte) {
	t.Helper()
	objs := colourScanObjects(t)
	with := func(num int, obj string) []byte {
		o := append([]string(nil), objs...)
		o[num-1] = obj
		return hostile.PDFObjects(o...)
	}
	// Page 2's object is 7 (ScanPDFObjects).
	return hostile.PDFObjects(objs...), map[string][]byte{
		"object missing":        with(7, ""),
		"object not a dict":     with(7, "[1 2 3]"),
		"kid points to nothing": with(2, strings.Replace(objs[1], "7 0 R", "99 0 R", 1)),
	}
}

// colourScanObjects are the objects of a 3-page scan
// (hostile.ScanPDFObjects) of the colourPages.
func colourScanObjects(t *testing.T) []string {
	t.Helper()
	var imgs []image.Image
	for _, c := range colourPages {
		img := image.NewRGBA(image.Rect(0, 0, 300, 400))
		for i := 0; i < len(img.Pix); i += 4 {
			img.Pix[i], img.Pix[i+1], img.Pix[i+2], img.Pix[i+3] = c.R, c.G, c.B, 255
		}
		imgs = append(imgs, img)
	}
	objs, err := hostile.ScanPDFObjects(imgs, 150, "")
	if err != nil {
		t.Fatal(err)
	}
	return objs
}

// pageColour names the colourPages entry nearest to the centre of img:
// "page 1" to "page 3".
func pageColour(img Image) string {
	r, g, b := img.At(img.W/2, img.H/2)
	best, dist := "", 1<<30
	for k, c := range colourPages {
		d := abs(int(r)-int(c.R)) + abs(int(g)-int(c.G)) + abs(int(b)-int(c.B))
		if d < dist {
			best, dist = fmt.Sprintf("page %d", k+1), d
		}
	}
	return best
}

// renderAll renders every page of data with o (poppler: the default),
// and says for each what it shows ("page N") or its error, and what
// Decode told OnBrokenPages.
func renderAll(t *testing.T, o Options, data []byte) (pages []string, told string) {
	t.Helper()
	o.OnBrokenPages = func(name string, err error) { told = name + ": " + err.Error() }
	d, err := o.Decode(data, "badpage.pdf")
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < d.Pages(); i++ {
		err := d.Use(context.Background(), i, func(img Image) error {
			pages = append(pages, pageColour(img))
			return nil
		})
		var e *Error
		if errors.As(err, &e) {
			pages = append(pages, fmt.Sprintf("error on page %d", e.Page))
		} else if err != nil {
			t.Fatalf("page %d: %v", i+1, err)
		}
	}
	return pages, told
}

// TestBrokenPageObject: a PDF whose page 2 is broken (its object missing
// or not a dictionary) has pages 1 and 3 rendered as themselves and page 2
// failed under its own number, never page 3 under number 2 as poppler
// numbers them: with PDFium where it is loaded (and a warning that says
// so), in this process or a decoder process, else with poppler, its
// indexes mapped.
func TestBrokenPageObject(t *testing.T) {
	intact, broken := brokenPDFs(t)
	if got, told := renderAll(t, DefaultOptions, intact); strings.Join(got, ", ") != "page 1, page 2, page 3" || told != "" {
		t.Fatalf("intact PDF: %q, told %q", got, told)
	}
	want := "page 1, error on page 2, page 3"
	for _, tc := range []struct {
		name     string
		pdfium   bool
		isolated bool
		told     string
	}{
		{"poppler alone", false, false, "badpage.pdf: page 2 of the PDF cannot be read (page object missing or not a dictionary): it fails, and poppler renders the others under their own numbers"},
		{"PDFium loaded", true, false, "badpage.pdf: page 2 of the PDF cannot be read (page object missing or not a dictionary): rendered with PDFium: poppler would number the pages after it wrongly"},
		{"PDFium loaded, decoder process", true, true, "badpage.pdf: page 2 of the PDF cannot be read (page object missing or not a dictionary): rendered with PDFium: poppler would number the pages after it wrongly"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.pdfium {
				loadPDFium(t)
			} else {
				pdfiumLoaded = func() string { return "" }
				t.Cleanup(func() { pdfiumLoaded = pdfiumLoadedDefault })
			}
			o := DefaultOptions
			if tc.isolated {
				o.Isolation = isolation(t, 1, 0)
			}
			for name, data := range broken {
				got, told := renderAll(t, o, data)
				if strings.Join(got, ", ") != want {
					t.Errorf("%s: pages %q, want %s", name, got, want)
				}
				if !strings.HasPrefix(told, tc.told) {
					t.Errorf("%s: told %q, want %q", name, told, tc.told)
				}
			}
		})
	}
}

// pdfiumLoadedDefault is pdfiumLoaded as the package sets it.
var pdfiumLoadedDefault = pdfiumLoaded

// TestCutJPEGPage: a scanned PDF whose page 2 is a JPEG cut short has that
// page failed, naming its image, and pages 1 and 3 rendered, by poppler
// and by PDFium, in this process or a decoder process; both renderers
// would draw page 2's part and grey for the rest without a word.
func TestCutJPEGPage(t *testing.T) {
	objs := colourScanObjects(t)
	// Page 2's image is object 9 (ScanPDFObjects): its JPEG cut to 60%.
	_, rest, _ := strings.Cut(objs[8], "stream\n")
	jpg := strings.TrimSuffix(rest, "\nendstream")
	eachRenderer(t, withImage9(objs, jpg[:len(jpg)*6/10]), "cut.pdf", func(t *testing.T, got []string) {
		if len(got) != 3 || got[0] != "page 1" || got[2] != "page 3" {
			t.Fatalf("pages: %q", got)
		}
		if want := "cut.pdf: page 2: the page cannot be drawn whole: its image /Im1 is JPEG data cut short"; !strings.HasPrefix(got[1], want) {
			t.Errorf("page 2: %q, want %q", got[1], want)
		}
	})
}

// withImage9 is the PDF of objs (hostile.ScanPDFObjects) with object 9,
// page 2's image, holding jpg as its data.
func withImage9(objs []string, jpg string) []byte {
	o := append([]string(nil), objs...)
	head, _, _ := strings.Cut(o[8], "stream\n")
	head = regexp.MustCompile(`/Length \d+`).ReplaceAllString(head, fmt.Sprintf("/Length %d", len(jpg)))
	o[8] = head + "stream\n" + jpg + "\nendstream"
	return hostile.PDFObjects(o...)
}

// eachRenderer calls check with what each page of data shows (pageColour,
// or its error), rendered by poppler and by PDFium, in this process and in
// a decoder process.
func eachRenderer(t *testing.T, data []byte, name string, check func(t *testing.T, got []string)) {
	for _, tc := range []struct {
		name             string
		pdfium, isolated bool
	}{
		{"poppler", false, false},
		{"PDFium", true, false},
		{"PDFium, decoder process", true, true},
		{"poppler, decoder process", false, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := DefaultOptions
			if tc.pdfium {
				loadPDFium(t)
				o.Renderer = RendererPDFium
			}
			if tc.isolated {
				o.Isolation = isolation(t, 1, 0)
			}
			d, err := o.Decode(data, name)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for i := 0; i < d.Pages(); i++ {
				err := d.Use(context.Background(), i, func(img Image) error {
					got = append(got, pageColour(img))
					return nil
				})
				if err != nil {
					got = append(got, err.Error())
				}
			}
			check(t, got)
		})
	}
}

// TestDamagedJPEGPage: a scanned PDF whose page 2 is a JPEG damaged in its
// coded data (bytes inserted, as a bad copy makes them) has that page
// failed, naming its image and the decoder's words, as the same JPEG as a
// file is refused; pages 1 and 3 are rendered. Both renderers drew page 2
// half garbled without a word, and it was classified.
func TestDamagedJPEGPage(t *testing.T) {
	var imgs []image.Image
	for k := range 3 {
		img := image.NewRGBA(image.Rect(0, 0, 320, 400))
		for i := 0; i < len(img.Pix); i += 4 {
			v := byte((i*7919 + k*31) % 251)
			img.Pix[i], img.Pix[i+1], img.Pix[i+2], img.Pix[i+3] = v, v/2, 255-v, 255
		}
		imgs = append(imgs, img)
	}
	objs, err := hostile.ScanPDFObjects(imgs, 150, "")
	if err != nil {
		t.Fatal(err)
	}
	// Page 2's image as a progressive JPEG (as many scanners write them;
	// a baseline one's coded data decodes garbage without a word more
	// often).
	var pb bytes.Buffer
	if err := png.Encode(&pb, imgs[1]); err != nil {
		t.Fatal(err)
	}
	ref, err := vips.NewImageFromBuffer(pb.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	prog, _, err := ref.ExportJpeg(&vips.JpegExportParams{Quality: 90, Interlace: true})
	ref.Close()
	if err != nil {
		t.Fatal(err)
	}
	whole := string(prog)
	// 40 bytes inserted in its coded data: the first of a few tries that
	// the decoder tells, as the same data as a file of its own is refused
	// (some garbage decodes as pixels without a word; then nothing could).
	alone := func(jpg string) error {
		d, err := DefaultOptions.Decode([]byte(jpg), "p2.jpg")
		if err == nil {
			_, err = d.Page(0)
		}
		return err
	}
	var jpg string
	rng := rand.New(rand.NewPCG(1, 2))
	for try := 0; try < 20 && jpg == ""; try++ {
		junk := make([]byte, 40)
		for k := range junk {
			junk[k] = byte(rng.IntN(255))
		}
		at := len(whole)*4/10 + try*97
		if damaged := whole[:at] + string(junk) + whole[at:]; alone(damaged) != nil {
			jpg = damaged
		}
	}
	if jpg == "" {
		t.Fatal("no damage the decoder tells in 20 tries")
	}
	eachRenderer(t, withImage9(objs, jpg), "damaged.pdf", func(t *testing.T, got []string) {
		if len(got) != 3 || strings.HasPrefix(got[0], "damaged.pdf:") || strings.HasPrefix(got[2], "damaged.pdf:") {
			t.Fatalf("pages: %q", got)
		}
		if want := "damaged.pdf: page 2: the page cannot be drawn whole: its image /Im1 is damaged JPEG data ("; !strings.HasPrefix(got[1], want) {
			t.Errorf("page 2: %q, want %q", got[1], want)
		}
	})
}
