package imageio

import (
	"os"
	"path/filepath"
	"testing"
)

// FuzzDecode: the header checks and the decoder never panic on arbitrary
// bytes; an input they accept decodes to W×H×3 samples within the pixel
// cap and the decode budget, or fails with an *Error naming the input.
// Seeds: every fixture of testdata (PNG, JPEG, TIFF, WebP, PDF, broken
// ones included).
func FuzzDecode(f *testing.F) {
	files, _ := filepath.Glob(filepath.Join("testdata", "*.*"))
	for _, p := range files {
		if b, err := os.ReadFile(p); err == nil && len(b) < 64<<10 && filepath.Ext(p) != ".go" {
			f.Add(b)
		}
	}
	o := Options{MaxPixels: 1 << 22, MaxDecodePixels: 1 << 18, DPI: 36}
	f.Fuzz(func(t *testing.T, data []byte) {
		d, err := o.Decode(data, "fuzz")
		if err != nil {
			if _, ok := err.(*Error); !ok {
				t.Fatalf("error %T %v is not an *Error", err, err)
			}
			return
		}
		for i := 0; i < min(d.Pages(), 2); i++ {
			img, err := d.Page(i)
			if err != nil {
				if _, ok := err.(*Error); !ok {
					t.Fatalf("page error %T %v is not an *Error", err, err)
				}
				continue
			}
			if img.W <= 0 || img.H <= 0 || len(img.Pix) != img.W*img.H*3 || int64(img.W)*int64(img.H) > o.MaxDecodePixels {
				t.Fatalf("page %d: %d×%d with %d bytes", i+1, img.W, img.H, len(img.Pix))
			}
		}
	})
}
