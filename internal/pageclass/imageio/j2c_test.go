package imageio

import (
	"bytes"
	"encoding/binary"
	"errors"
	"image/png"
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

// A JPEG 2000 file with a colour palette is refused before libvips sees
// it, naming the file: on Debian 12 (libvips 8.14, OpenJPEG 2.5.0) six
// of the thirteen palette files of OpenJPEG's test data crashed the
// process while their pixels were decoded.
func TestJPEG2000Palette(t *testing.T) {
	var page bytes.Buffer
	if err := png.Encode(&page, textPage(62, 88, 75)); err != nil {
		t.Fatal(err)
	}
	jp2 := jp2Of(t, page.Bytes(), true)
	if jp2Palette(jp2) {
		t.Fatal("a JP2 without a palette is said to have one")
	}
	// The same file with a (two-entry, one-column) palette box added at
	// the end of its header box.
	at := bytes.Index(jp2, []byte("jp2h")) - 4
	if at < 0 {
		t.Fatal("no header box")
	}
	n := int(binary.BigEndian.Uint32(jp2[at:]))
	pclr := box("pclr", []byte{0, 2, 1, 7, 0, 255})
	withPalette := append(append(append([]byte(nil), jp2[:at+n]...), pclr...), jp2[at+n:]...)
	binary.BigEndian.PutUint32(withPalette[at:], uint32(n+len(pclr)))
	if !jp2Palette(withPalette) {
		t.Fatal("the palette box is not found")
	}
	_, err := DefaultOptions.Decode(withPalette, "palette.jp2")
	var e *Error
	if !errors.As(err, &e) || e.Name != "palette.jp2" || !errors.Is(err, errPalette) {
		t.Errorf("Decode of a palette JP2: %v", err)
	}
	// Malformed lengths end the search without reading past the data.
	for _, b := range [][]byte{{0, 0, 0, 1, 'j', 'p', '2', 'h'}, {0, 0, 0, 200, 'j', 'p', '2', 'h', 0}, {0, 0, 0, 4, 'x', 'x', 'x', 'x'}} {
		if jp2Palette(b) {
			t.Errorf("jp2Palette(%q) = true", b)
		}
	}
}
