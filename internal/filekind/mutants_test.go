package filekind

import "testing"

// Without this, a GIF87a, a PAM, a PNM with a CR, tab or space after its
// magic, a HEIF or AVIF of a less common brand, or a boxed JPEG XL would
// be reported as an unknown file instead of named; a BMP-like or
// too-short head would be named wrongly (or crash the reader).
func TestOtherImageEdges(t *testing.T) {
	for _, c := range []struct{ head, want string }{
		{"GIF87a\x10\x00", "GIF"},
		{"BM\x36\x00\x0c\x00\x01\x00\x00\x00\x36\x00\x00\x00", ""},
		{"BM\x36\x00\x0c\x00\x00\x00\x00\x01\x36\x00\x00\x00", ""},
		{"P1\n", "PNM"}, {"P7\n", "PNM"}, {"P8\n", ""}, {"P0\n", ""},
		{"P5\r\n", "PNM"}, {"P3\t1", "PNM"}, {"P4 640", "PNM"},
		{"P6", ""}, {"P", ""},
		{"\x00\x00\x00\x18ftypavif", "AVIF"},
		{"\x00\x00\x00\x18ftypavis\x00\x00", "AVIF"},
		{"\x00\x00\x00\x18ftypmif1\x00\x00", "HEIF"},
		{"\x00\x00\x00\x18ftypmsf1\x00\x00", "HEIF"},
		{"\x00\x00\x00\x18ftypheix\x00\x00", "HEIF"},
		{"\x00\x00\x00\x18ftyphevc\x00\x00", "HEIF"},
		{"\x00\x00\x00\x18ftypheim\x00\x00", "HEIF"},
		{"\x00\x00\x00\x18ftypheis\x00\x00", "HEIF"},
		{"\x00\x00\x00\x18ftypisom\x00\x00", ""},
		{"\x00\x00\x00\x0cJXL \r\n\x87\n\x00\x00", "JPEG XL"},
	} {
		if got := OtherImage([]byte(c.head)); got != c.want {
			t.Errorf("OtherImage(%q) = %q, want %q", c.head, got, c.want)
		}
	}
}

// Without this, a WebP head of exactly the 12 bytes Of asks for would not
// be read as WebP, and heads that only begin like JPEG or PDF would be.
func TestOfEdges(t *testing.T) {
	for _, c := range []struct{ head, want string }{
		{"RIFF\x24\x00\x00\x00WEBP", WebP},
		{"RIFF\x24\x00\x00\x00WEB", ""},
		{"\xff\xd8\x00\x00", ""},
		{"%PDF1.7", ""},
	} {
		if got := Of([]byte(c.head)); got != c.want {
			t.Errorf("Of(%q) = %q, want %q", c.head, got, c.want)
		}
	}
}
