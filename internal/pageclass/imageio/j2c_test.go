package imageio

import (
	"strings"
	"testing"
)

// A codestream whose SIZ marker cannot describe a page is refused with
// what is wrong, before libvips sees it.
func TestJP2OfCodestreamRefuses(t *testing.T) {
	siz := func(x, y, nc byte) []byte {
		b := []byte{0xff, 0x4f, 0xff, 0x51, 0, 41, 0, 0}
		b = append(b, 0, 0, 0, x, 0, 0, 0, y) // Xsiz, Ysiz
		b = append(b, make([]byte, 24)...)    // offsets and tiles
		b = append(b, 0, nc)
		for range nc {
			b = append(b, 7, 1, 1)
		}
		return b
	}
	for _, c := range []struct {
		name string
		cs   []byte
		want string
	}{
		{"short", []byte{0xff, 0x4f, 0xff, 0x51, 0}, "no SIZ marker"},
		{"empty area", siz(0, 10, 1), "image area 0×10"},
		{"no components", siz(10, 10, 0), "0 components"},
		{"five components", siz(10, 10, 5), "5 components"},
	} {
		_, err := jp2OfCodestream(c.cs)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want an error saying %q", c.name, err, c.want)
		}
	}
	if _, err := jp2OfCodestream(siz(10, 10, 3)); err != nil {
		t.Errorf("a 10×10 codestream of 3 components: %v", err)
	}
	if _, err := DefaultOptions.Decode(siz(10, 10, 5), "five.j2k"); err == nil || !strings.Contains(err.Error(), "five.j2k") {
		t.Errorf("Decode names the file: %v", err)
	}
}
