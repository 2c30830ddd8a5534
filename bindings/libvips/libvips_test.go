package libvips_test

import (
	"bytes"
	"image"
	"image/png"
	"strings"
	"testing"

	"archivekit/bindings/libvips"
	"github.com/davidbyttow/govips/v2/vips"
)

// TestReduce: a PNG reduced by 4 becomes a TIFF of each side divided by
// 4, its tones kept; the loader options reach the loader (the PNG loader
// refuses a page), and a failure returns libvips' text.
func TestReduce(t *testing.T) {
	vips.LoggingSettings(nil, vips.LogLevelError)
	vips.Startup(nil)
	g := image.NewGray(image.Rect(0, 0, 400, 300))
	for i := range g.Pix {
		g.Pix[i] = 200
	}
	var p bytes.Buffer
	if err := png.Encode(&p, g); err != nil {
		t.Fatal(err)
	}
	small, msg := libvips.Reduce(p.Bytes(), "", 4)
	if small == nil {
		t.Fatal(msg)
	}
	ref, err := vips.LoadImageFromBuffer(small, vips.NewImportParams())
	if err != nil {
		t.Fatal(err)
	}
	defer ref.Close()
	if ref.Format() != vips.ImageTypeTIFF || ref.Width() != 100 || ref.Height() != 75 {
		t.Errorf("reduced to a %s of %d×%d, want a TIFF of 100×75", vips.ImageTypes[ref.Format()], ref.Width(), ref.Height())
	}
	if avg, err := ref.Average(); err != nil || avg < 199 || avg > 201 {
		t.Errorf("mean %.1f (%v), want 200", avg, err)
	}
	for _, tc := range []struct {
		name, data, options, want string
	}{
		{"empty", "", "", "empty image"},
		{"truncated", string(p.Bytes()[:len(p.Bytes())/2]), "", "png"},
		{"an option the loader lacks", p.String(), "page=1", "page"},
	} {
		if out, msg := libvips.Reduce([]byte(tc.data), tc.options, 4); out != nil || !strings.Contains(strings.ToLower(msg), tc.want) {
			t.Errorf("%s: %d bytes, %q; want an error saying %q", tc.name, len(out), msg, tc.want)
		}
	}
}
