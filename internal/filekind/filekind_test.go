package filekind

import "testing"

func TestOf(t *testing.T) {
	for _, c := range []struct {
		head, want string
	}{
		{"\x89PNG\r\n\x1a\n\x00\x00\x00\x0dIHDR", PNG},
		{"\xff\xd8\xff\xe0\x00\x10JFIF", JPEG},
		{"II*\x00\x08\x00\x00\x00", TIFF},
		{"MM\x00*\x00\x00\x00\x08", TIFF},
		{"II+\x00\x08\x00\x00\x00", TIFF}, // BigTIFF
		{"MM\x00+\x00\x08\x00\x00", TIFF},
		{"RIFF\x24\x00\x00\x00WEBPVP8 ", WebP},
		{"\x00\x00\x00\x0cjP  \r\n\x87\n\x00\x00", JP2},
		{"%PDF-1.7\n", PDF},
		{"\xff\x4f\xff\x51\x00\x2f", J2C}, // a bare JPEG 2000 codestream
		{"\xff\x4f\xff\x52", ""},
		{"RIFF\x24\x00\x00\x00WAVE", ""},
		{"<?xml version", ""},
		{"", ""},
	} {
		if got := Of([]byte(c.head)); got != c.want {
			t.Errorf("Of(%q) = %q, want %q", c.head, got, c.want)
		}
	}
}
