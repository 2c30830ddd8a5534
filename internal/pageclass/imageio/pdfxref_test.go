package imageio

import (
	"bytes"
	"fmt"
	"image"
	"regexp"
	"testing"

	"archivekit/internal/pageclass/imageio/hostile"
)

// A PDF whose cross-reference table sends poppler past the file's end
// (which made poppler 22.08 loop until killed) is opened with its table
// rebuilt from its objects: its pages are read, and each case returns.
// A sound PDF is handed on as it is.
func TestPDFPastItsEnd(t *testing.T) {
	good := hostile.PDF(2, 2, 3)
	if got := pdfWithinBounds(good); &got[0] != &good[0] {
		t.Fatal("a sound PDF was copied")
	}
	startRe := regexp.MustCompile(`startxref\n(\d+)`)
	set := func(data []byte, re string, repl string) []byte {
		out := regexp.MustCompile(re).ReplaceAll(data, []byte(repl))
		if bytes.Equal(out, data) {
			t.Fatalf("%q changed nothing", re)
		}
		return out
	}
	n := len(good)
	for _, c := range []struct {
		name string
		data []byte
	}{
		{"startxref past the end", set(good, `startxref\n\d+`, fmt.Sprintf("startxref\n%d", n+151))},
		{"an object past the end", set(good, `(?m)^\d{10} 00000 n $`, fmt.Sprintf("%010d 00000 n ", n+9000))},
		{"a previous section past the end", set(good, `/Root 1 0 R >>`, fmt.Sprintf("/Root 1 0 R /Prev %d >>", 10*n))},
		{"a startxref of 18 digits", set(good, `startxref\n\d+`, "startxref\n999999999999999999")},
		{"a startxref of 30 digits", set(good, `startxref\n\d+`, "startxref\n999999999999999999999999999999")},
		// Poppler reads the digits of "441J" as 441; a whole-token reading
		// saw no number (FuzzDecode's find of 2026-11-27).
		{"a startxref past the end with a letter after", set(good, `startxref\n\d+`, fmt.Sprintf("startxref\n%dJ", n+151))},
	} {
		t.Run(c.name, func(t *testing.T) {
			fixed := pdfWithinBounds(c.data)
			if m := startRe.FindSubmatch(fixed); m == nil || string(m[1]) != "0" {
				t.Fatalf("startxref not set to 0: %q", fixed[max(0, len(fixed)-60):])
			}
			d, err := DefaultOptions.Decode(c.data, "cut.pdf")
			if err != nil {
				t.Fatal(err)
			}
			if d.Pages() != 2 {
				t.Errorf("%d pages, want 2", d.Pages())
			}
			if _, err := d.Page(1); err != nil {
				t.Error(err)
			}
		})
	}
	// The PDF the fuzzer found (testdata/fuzz/FuzzDecode/337fac4a1131067f):
	// a stream whose dictionary is broken and a startxref past the end.
	// Poppler never returned on it; it is now refused.
	fuzzed := []byte("%PDF-1.4\n1 0 obj\n<< /<< /Length 25 >>\nstream\n0 0 1 rg 0 0 144 72 re f\nendstream\nendobj\n" +
		"xref\n0 7\n0000000000 65535 f \n000000000< 00000 n \n0000000058 00000 n \n0000000121 00000 n \n" +
		"0000000207 00000 n \n0000000293 00000 n \n0000000367 00000 n \ntrailer\n<< /Size 7 /Root 1 0 R >>\nstartxref\n441\n%%EOFj")
	if _, err := DefaultOptions.Decode(fuzzed, "fuzzed.pdf"); err == nil {
		t.Error("the fuzzer's PDF, which has no page, was opened")
	}
	// Its sibling of 2026-11-27, whose startxref reads "441J" and whose
	// table is garbled too (testdata/fuzz/FuzzDecode/90b5c1943d007ce5).
	fuzzedJ := []byte("%PDF-1.4\n1 0 obj\n<< /<< /Length 25 >>\nstream\n0 0 1 rg 0 0 144 72 re f\nendstream\nendobj\n" +
		"xref\n0 7\n0000000000 65\x153\x80\x00f \n000000000< 00000 n \n0000000058 00000 n \n0000000121 00000 n \n" +
		"0000000207 00000 000000n \n0293 00000 n \n0000000367 00000 n \ntrailer\n<< /Size 7 /Root 1 0 R >>\nstartxref\n441J%%EOFj")
	if _, err := DefaultOptions.Decode(fuzzedJ, "fuzzed.pdf"); err == nil {
		t.Error("the fuzzer's second PDF, which has no page, was opened")
	}
	// Cut in two, the table is lost: poppler rebuilds it itself.
	if got := pdfWithinBounds(good[:n/2]); !bytes.Equal(got, good[:n/2]) {
		t.Error("a PDF without a table was changed")
	}
}

// An image of extreme proportions over the decode budget (a row of
// 300,000 × 1 pixels; the fuzzer's JPEG 2000 codestream was 3,145,752 × 1)
// is shrunk within the budget in a few thumbnails: its short side cannot
// go under one pixel, so the thumbnail's side shrinks in proportion to
// the overshoot, not one pixel a try.
func TestThinImageOverBudget(t *testing.T) {
	o := DefaultOptions
	o.MaxDecodePixels = 1 << 12
	img := decodePage(t, o, hostile.GrayTIFF(image.NewGray(image.Rect(0, 0, 300000, 1))), 0)
	if img.W*img.H > 1<<12 || img.W < 1<<11 || img.H != 1 {
		t.Errorf("%d×%d, want within %d pixels and one row", img.W, img.H, 1<<12)
	}
}
