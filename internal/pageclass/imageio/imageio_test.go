package imageio

import (
	"errors"
	"image/color"
	"image/png"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"archivekit/internal/testenv"
)

type px struct {
	x, y    int
	r, g, b uint8
}

func TestDecodeFixtures(t *testing.T) {
	tests := []struct {
		file   string
		w, h   int
		tol    int // allowed difference per channel (lossy JPEG)
		pixels []px
	}{
		{"grey.png", 16, 4, 0, []px{{0, 0, 0, 0, 0}, {1, 2, 16, 16, 16}, {15, 3, 240, 240, 240}}},
		// opaque red stays red, transparent black becomes white, blue at alpha 128 is mixed with white
		{"rgba.png", 8, 4, 1, []px{{0, 0, 255, 0, 0}, {3, 2, 255, 0, 0}, {4, 0, 255, 255, 255}, {7, 3, 255, 255, 255}, {0, 3, 127, 127, 255}}},
		// 16-bit samples keep their high byte
		{"rgb16.png", 3, 1, 0, []px{{0, 0, 255, 128, 0}, {1, 0, 0x12, 0, 255}, {2, 0, 0x7F, 1, 0x80}}},
		{"rgba16.png", 3, 1, 1, []px{{0, 0, 255, 0, 0}, {1, 0, 255, 255, 255}, {2, 0, 127, 255, 127}}},
		{"grey16.png", 4, 1, 0, []px{{0, 0, 0, 0, 0}, {1, 0, 64, 64, 64}, {2, 0, 128, 128, 128}, {3, 0, 255, 255, 255}}},
		// stored 32×16 left red / right blue, orientation 6: upright 16×32 top red / bottom blue
		{"exif6.jpg", 16, 32, 12, []px{{8, 4, 255, 0, 0}, {2, 12, 255, 0, 0}, {8, 28, 0, 0, 255}, {13, 20, 0, 0, 255}}},
		{"page.tif", 8, 4, 0, []px{{0, 0, 0, 200, 0}, {7, 1, 0, 200, 0}, {0, 2, 90, 90, 90}, {7, 3, 90, 90, 90}}},
		{"page.webp", 8, 4, 0, []px{{0, 0, 0, 200, 0}, {7, 1, 0, 200, 0}, {0, 2, 90, 90, 90}, {7, 3, 90, 90, 90}}},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			d, err := Open(filepath.Join("testdata", tt.file))
			if err != nil {
				t.Fatal(err)
			}
			if d.Pages() != 1 || d.IsPDF() {
				t.Fatalf("Pages() = %d, IsPDF() = %v; want 1, false", d.Pages(), d.IsPDF())
			}
			img, err := d.Page(0)
			if err != nil {
				t.Fatal(err)
			}
			if img.W != tt.w || img.H != tt.h || len(img.Pix) != tt.w*tt.h*3 {
				t.Fatalf("got %d×%d with %d bytes, want %d×%d×3", img.W, img.H, len(img.Pix), tt.w, tt.h)
			}
			for _, p := range tt.pixels {
				r, g, b := img.At(p.x, p.y)
				if !near(r, p.r, tt.tol) || !near(g, p.g, tt.tol) || !near(b, p.b, tt.tol) {
					t.Errorf("pixel (%d,%d) = (%d,%d,%d), want (%d,%d,%d)", p.x, p.y, r, g, b, p.r, p.g, p.b)
				}
			}
		})
	}
}

func near(a, b uint8, tol int) bool {
	d := int(a) - int(b)
	return d <= tol && d >= -tol
}

func TestPDFPages(t *testing.T) {
	path := filepath.Join("testdata", "two.pdf")
	d, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	if !d.IsPDF() || d.Pages() != 2 {
		t.Fatalf("IsPDF() = %v, Pages() = %d; want true, 2", d.IsPDF(), d.Pages())
	}
	// 72×144 pt and 144×72 pt at 150 dpi
	want := []struct {
		w, h    int
		r, g, b uint8
	}{{150, 300, 255, 0, 0}, {300, 150, 0, 0, 255}}
	for i, wt := range want {
		img, err := d.Page(i)
		if err != nil {
			t.Fatal(err)
		}
		if img.W != wt.w || img.H != wt.h {
			t.Errorf("page %d: %d×%d, want %d×%d", i+1, img.W, img.H, wt.w, wt.h)
		}
		if r, g, b := img.At(img.W/2, img.H/2); r != wt.r || g != wt.g || b != wt.b {
			t.Errorf("page %d centre = (%d,%d,%d), want (%d,%d,%d)", i+1, r, g, b, wt.r, wt.g, wt.b)
		}
	}
	_, err = d.Page(2)
	if !errors.Is(err, ErrPageRange) || !strings.Contains(err.Error(), path) {
		t.Errorf("Page(2) error = %v, want ErrPageRange naming %s", err, path)
	}

	// A lower DPI renders smaller pages.
	d72, err := Options{DPI: 72}.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	img, err := d72.Page(1)
	if err != nil {
		t.Fatal(err)
	}
	if img.W != 144 || img.H != 72 {
		t.Errorf("72 dpi page 2: %d×%d, want 144×72", img.W, img.H)
	}
}

func TestBadFiles(t *testing.T) {
	tests := []struct {
		file    string
		is      error  // errors.Is target, or nil
		problem string // text the message must contain
		atOpen  bool   // the failure is found by Open (header), not Page
	}{
		{"corrupt.png", nil, "cannot read header: corrupt PNG data", true},
		{"notimage.png", ErrUnsupportedFormat, "unsupported image format", true},
		{"bomb.png", ErrTooManyPixels, "30000×30000 = 900000000 pixels, limit 178956970", true},
		{"truncated.jpg", nil, "Premature end of input file", true},
		{"truncated.png", nil, "cannot decode pixels: vipspng: libpng read error", false},
		{"missing.png", os.ErrNotExist, "cannot read", true},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			path := filepath.Join("testdata", tt.file)
			start := time.Now()
			d, err := Open(path)
			if err == nil {
				if tt.atOpen {
					t.Fatalf("Open succeeded, want an error")
				}
				_, err = d.Page(0)
			} else if !tt.atOpen {
				t.Fatalf("Open: %v; want the error from Page", err)
			}
			if err == nil {
				t.Fatal("no error")
			}
			msg := err.Error()
			t.Log(msg)
			if !strings.HasPrefix(msg, path+": ") || !strings.Contains(msg, tt.problem) {
				t.Errorf("error %q does not name %s and %q", msg, path, tt.problem)
			}
			if strings.Contains(msg, "Stack:") || strings.Contains(msg, "goroutine") {
				t.Errorf("error carries a stack trace: %q", msg)
			}
			if tt.is != nil && !errors.Is(err, tt.is) {
				t.Errorf("error %v is not %v", err, tt.is)
			}
			if el := time.Since(start); el > 2*time.Second {
				t.Errorf("took %v: pixels were decoded", el)
			}
		})
	}
}

func TestPixelCapOption(t *testing.T) {
	// grey.png has 64 pixels.
	for _, tc := range []struct {
		max int64
		ok  bool
	}{{64, true}, {63, false}} {
		_, err := Options{MaxPixels: tc.max}.Open(filepath.Join("testdata", "grey.png"))
		if (err == nil) != tc.ok {
			t.Errorf("MaxPixels %d: err = %v, want ok=%v", tc.max, err, tc.ok)
		}
		if err != nil && !errors.Is(err, ErrTooManyPixels) {
			t.Errorf("MaxPixels %d: %v is not ErrTooManyPixels", tc.max, err)
		}
	}
	// A PDF page is checked at its rendered size: page 1 at 150 dpi is 45,000 pixels.
	d, err := Options{MaxPixels: 40000}.Open(filepath.Join("testdata", "two.pdf"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := d.Page(0); !errors.Is(err, ErrTooManyPixels) || !strings.Contains(err.Error(), "page 1: ") {
		t.Errorf("PDF page over the cap: %v", err)
	}
}

func TestDecodeBytes(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("testdata", "two.pdf"))
	if err != nil {
		t.Fatal(err)
	}
	if !IsPDF(data) {
		t.Error("IsPDF(two.pdf) = false")
	}
	d, err := Decode(data, "upload.pdf")
	if err != nil || d.Pages() != 2 || d.Name() != "upload.pdf" {
		t.Fatalf("Decode: %v, pages %d", err, d.Pages())
	}
	if _, err := Decode([]byte("hello world, no image"), "upload.png"); err == nil || !strings.HasPrefix(err.Error(), "upload.png: ") {
		t.Errorf("Decode(text) error = %v, want one naming upload.png", err)
	}
	if _, err := Decode(nil, "empty.png"); err == nil || !strings.Contains(err.Error(), "empty.png: empty file") {
		t.Errorf("Decode(nil) error = %v", err)
	}
	png, _ := os.ReadFile(filepath.Join("testdata", "grey.png"))
	if IsPDF(png) {
		t.Error("IsPDF(grey.png) = true")
	}
}

func TestSupported(t *testing.T) {
	for name, want := range map[string]bool{
		"a.png": true, "b.JPG": true, "c.jpeg": true, "d.TIF": true, "e.tiff": true,
		"f.webp": true, "g.pdf": true, "h.gif": false, "i.txt": false, "png": false,
	} {
		if got := Supported(name); got != want {
			t.Errorf("Supported(%q) = %v, want %v", name, got, want)
		}
	}
}

// TestRealPages decodes every page of shared/data/pages and compares each
// pixel with Go's own PNG decoder, converted the same way (grey and palette
// expanded, alpha composited on white).
func TestRealPages(t *testing.T) {
	root := testenv.Data(t, "pages")
	var files []string
	filepath.WalkDir(root, func(p string, e os.DirEntry, err error) error {
		if err == nil && !e.IsDir() && strings.EqualFold(filepath.Ext(p), ".png") {
			files = append(files, p)
		}
		return nil
	})
	if len(files) < 100 {
		t.Fatalf("found %d pages under %s, want the 184 test pages", len(files), root)
	}
	for _, f := range files {
		d, err := Open(f)
		if err != nil {
			t.Errorf("%v", err)
			continue
		}
		img, err := d.Page(0)
		if err != nil {
			t.Errorf("%v", err)
			continue
		}
		ref := referenceRGB(t, f)
		if ref.W != img.W || ref.H != img.H {
			t.Errorf("%s: %d×%d, Go decoder %d×%d", f, img.W, img.H, ref.W, ref.H)
			continue
		}
		diff := 0
		for i := range img.Pix {
			if !near(img.Pix[i], ref.Pix[i], 1) {
				diff++
			}
		}
		if diff > 0 {
			t.Errorf("%s: %d of %d samples differ from Go's PNG decoder by more than 1", f, diff, len(img.Pix))
		}
	}
}

func referenceRGB(t *testing.T, path string) Image {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	m, err := png.Decode(f)
	if err != nil {
		t.Fatalf("%s: Go decoder: %v", path, err)
	}
	b := m.Bounds()
	out := Image{W: b.Dx(), H: b.Dy(), Pix: make([]uint8, 0, b.Dx()*b.Dy()*3)}
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			c := color.NRGBA64Model.Convert(m.At(x, y)).(color.NRGBA64)
			a := float64(c.A) / 0xFFFF
			for _, v := range []uint16{c.R, c.G, c.B} {
				s := float64(v>>8)*a + 255*(1-a)
				out.Pix = append(out.Pix, uint8(s+0.5))
			}
		}
	}
	return out
}

func TestSniff(t *testing.T) {
	for _, tc := range []struct {
		file, want string
	}{
		{"grey.png", ".png"}, {"exif6.jpg", ".jpg"}, {"page.tif", ".tif"}, {"page.webp", ".webp"}, {"two.pdf", ".pdf"},
		{"notimage.png", ""},
	} {
		b, err := os.ReadFile(filepath.Join("testdata", tc.file))
		if err != nil {
			t.Fatal(err)
		}
		if got := Sniff(b[:min(len(b), SniffLen)]); got != tc.want {
			t.Errorf("%s: %q, want %q", tc.file, got, tc.want)
		}
	}
	if got := Sniff([]byte("<?xml version")); got != "" {
		t.Errorf("XML sniffed as %q", got)
	}
}

// A file that is no image says what it is when its first bytes show it: a
// server's HTML error page saved as a page image said only "unsupported
// image format".
func TestNotImageSaysWhat(t *testing.T) {
	for _, tc := range []struct{ data, want string }{
		{"<!DOCTYPE html><html><body><h1>503 Service Unavailable</h1></body></html>", "; it is text/html)"},
		{`{"error": "quota exceeded"}`, "; it is text/plain"},
		{"\x00\x01\x02\x03 binary", "or PDF)"},
		// A white binary PPM: its bytes read as text.
		{"P6\n4 4\n255\n" + strings.Repeat("\xff", 48), "; it is a PNM image: convert it to PNG or TIFF)"},
		{"GIF89a\x04\x00\x04\x00", "; it is a GIF image"},
	} {
		path := filepath.Join(t.TempDir(), "page.png")
		os.WriteFile(path, []byte(tc.data), 0o666)
		_, err := Open(path)
		if !errors.Is(err, ErrUnsupportedFormat) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%.20q: %v, want %q", tc.data, err, tc.want)
		}
	}
}
