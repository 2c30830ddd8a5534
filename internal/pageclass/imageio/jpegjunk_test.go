package imageio

import (
	"bytes"
	"errors"
	"image/jpeg"
	"testing"
)

// A JPEG with extraneous bytes between two markers (libjpeg skips them and
// warns; Pillow's junk_jpeg_header.jpg, some scanners' files) is read,
// with the pixels of the same JPEG without them; truncated as well, it is
// still refused naming the file.
func TestJPEGExtraneousBytes(t *testing.T) {
	var clean bytes.Buffer
	if err := jpeg.Encode(&clean, textPage(120, 170, 75), &jpeg.Options{Quality: 90}); err != nil {
		t.Fatal(err)
	}
	dqt := bytes.Index(clean.Bytes(), []byte{0xff, 0xc4}) // the first DHT, after SOI, DQT and SOF
	if dqt < 0 {
		t.Fatal("no DHT marker")
	}
	junk := append(append(append([]byte(nil), clean.Bytes()[:dqt]...), 0, 0, 0, 0, 0), clean.Bytes()[dqt:]...)
	want := decodePage(t, DefaultOptions, clean.Bytes(), 0)
	got := decodePage(t, DefaultOptions, junk, 0)
	if got.W != want.W || got.H != want.H || !bytes.Equal(got.Pix, want.Pix) {
		t.Errorf("JPEG with extraneous bytes: %d×%d, differs from the clean JPEG (%d×%d)", got.W, got.H, want.W, want.H)
	}
	d, err := DefaultOptions.Decode(junk[:len(junk)*2/3], "cut.jpg")
	if err == nil {
		_, err = d.Page(0)
	}
	var e *Error
	if !errors.As(err, &e) || e.Name != "cut.jpg" {
		t.Errorf("a truncated JPEG with extraneous bytes: %v, want an error naming cut.jpg", err)
	}
}

func TestJPEGWithoutHeaderJunk(t *testing.T) {
	soi, eoi := []byte{0xff, 0xd8}, []byte{0xff, 0xd9}
	seg := func(m byte, body ...byte) []byte { return append([]byte{0xff, m, 0, byte(2 + len(body))}, body...) }
	sos := append(seg(0xda, 1, 2, 3), 0x12, 0xff, 0x00, 0x34) // scan data with a stuffed zero
	cat := func(parts ...[]byte) []byte {
		var b []byte
		for _, p := range parts {
			b = append(b, p...)
		}
		return b
	}
	clean := cat(soi, seg(0xe0, 'J', 'F'), seg(0xdb, 9, 9), sos, eoi)
	for _, c := range []struct {
		name string
		in   []byte
		want []byte
	}{
		{"clean", clean, clean},
		{"junk before DQT", cat(soi, seg(0xe0, 'J', 'F'), []byte{0, 0, 0, 0}, seg(0xdb, 9, 9), sos, eoi), clean},
		{"junk twice", cat(soi, []byte{1}, seg(0xe0, 'J', 'F'), []byte{2, 3}, seg(0xdb, 9, 9), sos, eoi), clean},
		{"fill bytes kept", cat(soi, []byte{0xff, 0xff}, seg(0xdb, 9, 9), sos, eoi), cat(soi, []byte{0xff, 0xff}, seg(0xdb, 9, 9), sos, eoi)},
		{"junk in the scan left to libjpeg", cat(soi, seg(0xdb, 9, 9), sos, []byte{7, 7}, eoi), cat(soi, seg(0xdb, 9, 9), sos, []byte{7, 7}, eoi)},
		{"junk to the end", cat(soi, seg(0xdb, 9, 9), []byte{5, 5, 5}), cat(soi, seg(0xdb, 9, 9), []byte{5, 5, 5})},
		{"cut length", cat(soi, []byte{0xff, 0xdb, 0}), cat(soi, []byte{0xff, 0xdb, 0})},
	} {
		if got := jpegWithoutHeaderJunk(c.in); !bytes.Equal(got, c.want) {
			t.Errorf("%s: % x, want % x", c.name, got, c.want)
		}
	}
}
