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

// TestOtherImage: images of formats that are not page formats are named by
// their content; page formats and other files are not.
func TestOtherImage(t *testing.T) {
	for _, c := range []struct{ head, want string }{
		{"GIF89a\x10\x00", "GIF"},
		{"BM\x36\x00\x0c\x00\x00\x00\x00\x00\x36\x00\x00\x00", "BMP"},
		{"P6\n640 480\n255\n", "PNM"},
		{"\x00\x00\x00\x1cftypavif\x00\x00", "AVIF"},
		{"\x00\x00\x00\x18ftypheic\x00\x00", "HEIF"},
		{"\xff\x0a\xfa", "JPEG XL"},
		{"\x89PNG\r\n\x1a\n", ""},
		{"BMW is a car, not a bitmap", ""},
		{"PDF notes", ""},
		{`{"a": 1}`, ""},
	} {
		if got := OtherImage([]byte(c.head)); got != c.want {
			t.Errorf("OtherImage(%q) = %q, want %q", c.head, got, c.want)
		}
	}
}
