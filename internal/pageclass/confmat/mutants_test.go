package confmat_test

import (
	"bytes"
	"encoding/binary"
	"image/color"
	"image/png"
	"strings"
	"testing"

	"archivekit/internal/pageclass/confmat"
)

// pngChunk returns the data of the first chunk of type typ in a PNG file.
func pngChunk(t *testing.T, p []byte, typ string) []byte {
	t.Helper()
	for i := 8; i+8 <= len(p); {
		n := int(binary.BigEndian.Uint32(p[i:]))
		if string(p[i+4:i+8]) == typ {
			return p[i+8 : i+8+n]
		}
		i += 12 + n
	}
	t.Fatalf("no %s chunk", typ)
	return nil
}

// If broken: the confusion-matrix image of an evaluation does not open, is
// not 8 x 7.5 inches at 300 dpi, or its cells are not shaded by the share
// of each true class (row) predicted as each class: a class's misreadings
// look smaller or larger than they are, and a class without pages shows
// as a dark (or broken) row.
func TestPNGShadesRowShares(t *testing.T) {
	// Row shares: A 1 0 0; B 0.5 0.5 0; C no pages, all 0.
	counts := [][]int{{4, 0, 0}, {2, 2, 0}, {0, 0, 0}}
	var buf bytes.Buffer
	if err := confmat.PNG(&buf, "fold 1", []string{"A", "B", "C"}, counts); err != nil {
		t.Fatal(err)
	}
	img, err := png.Decode(bytes.NewReader(buf.Bytes()))
	if err != nil {
		t.Fatalf("not a PNG: %v", err)
	}
	if b := img.Bounds(); b.Dx() != 8*confmat.DPI || b.Dy() != 15*confmat.DPI/2 {
		t.Errorf("image %dx%d, want 8 x 7.5 inches at %d dpi", b.Dx(), b.Dy(), confmat.DPI)
	}
	phys := pngChunk(t, buf.Bytes(), "pHYs")
	x, y := binary.BigEndian.Uint32(phys), binary.BigEndian.Uint32(phys[4:])
	if len(phys) != 9 || phys[8] != 1 || x != y || x < 11800 || x > 11820 {
		t.Errorf("pHYs %v, want about 11811 pixels per metre (300 dpi)", phys)
	}
	// Count the pixels of the three shades: share 1 (dark blue), 0.5, 0
	// (the near-white of an empty cell, not the page's white).
	shades := map[color.RGBA]string{{8, 48, 107, 255}: "1", {128, 150, 181, 255}: "0.5", {247, 251, 255, 255}: "0"}
	n := map[string]float64{}
	b := img.Bounds()
	for py := b.Min.Y; py < b.Max.Y; py++ {
		for px := b.Min.X; px < b.Max.X; px++ {
			r, g, bl, a := img.At(px, py).RGBA()
			if s, ok := shades[color.RGBA{uint8(r >> 8), uint8(g >> 8), uint8(bl >> 8), uint8(a >> 8)}]; ok {
				n[s]++
			}
		}
	}
	// One cell of share 1, two of 0.5, six empty (no text in them).
	if n["1"] == 0 {
		t.Fatalf("no cell of share 1 (pixels per shade %v)", n)
	}
	if r := n["0.5"] / n["1"]; r < 1.8 || r > 2.2 {
		t.Errorf("cells of share 0.5 / of share 1 = %.2f, want about 2 (pixels %v)", r, n)
	}
	if r := n["0"] / n["1"]; r < 5.5 || r > 7 {
		t.Errorf("empty cells / cells of share 1 = %.2f, want about 6 (pixels %v)", r, n)
	}
}

// If broken: a matrix whose rows do not match its labels is drawn (or
// panics) instead of being refused.
func TestPNGRefusesBadShape(t *testing.T) {
	for _, c := range []struct {
		name   string
		labels []string
		counts [][]int
	}{
		{"no labels", nil, nil},
		{"fewer rows than labels", []string{"A", "B"}, [][]int{{1, 0}}},
		{"more rows than labels", []string{"A"}, [][]int{{1}, {2}}},
		{"a row shorter than the labels", []string{"A", "B"}, [][]int{{1, 0}, {2}}}, // it panicked
		{"a row longer than the labels", []string{"A", "B"}, [][]int{{1, 0, 3}, {2, 1}}},
	} {
		t.Run(c.name, func(t *testing.T) {
			var buf bytes.Buffer
			err := confmat.PNG(&buf, "t", c.labels, c.counts)
			if err == nil || !strings.Contains(err.Error(), "confusion matrix") || buf.Len() != 0 {
				t.Errorf("error %v, %d bytes written; want it refused", err, buf.Len())
			}
		})
	}
}
