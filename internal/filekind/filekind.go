// Package filekind tells the page-image formats archives keep (and PDF)
// by their first bytes, the signatures of their file formats: one place
// for both tools, the classifier reading pages and the translator telling
// what a book's file that is no text is.
package filekind

import "bytes"

// The media types Of gives.
const (
	PNG  = "image/png"
	JPEG = "image/jpeg"
	TIFF = "image/tiff"
	WebP = "image/webp"
	JP2  = "image/jp2"
	J2C  = "image/j2c"
	PDF  = "application/pdf"
)

// Of is the media type of the page-image format (or PDF) that head, a
// file's first bytes (12 are enough), starts like, or "" for none of
// them. JPEG 2000 comes as the JP2 file format (its signature box, ISO/IEC
// 15444-1 annex I) or as a bare codestream (J2C: its SOC marker then its
// SIZ marker, annex A; the files named .j2k or .j2c).
func Of(head []byte) string {
	switch {
	case bytes.HasPrefix(head, []byte("\x89PNG\r\n\x1a\n")):
		return PNG
	case bytes.HasPrefix(head, []byte{0xff, 0xd8, 0xff}):
		return JPEG
	case bytes.HasPrefix(head, []byte("II*\x00")), bytes.HasPrefix(head, []byte("MM\x00*")),
		bytes.HasPrefix(head, []byte("II+\x00")), bytes.HasPrefix(head, []byte("MM\x00+")): // TIFF, BigTIFF
		return TIFF
	case len(head) >= 12 && string(head[:4]) == "RIFF" && string(head[8:12]) == "WEBP":
		return WebP
	case bytes.HasPrefix(head, []byte("\x00\x00\x00\x0cjP  \r\n\x87\n")):
		return JP2
	case bytes.HasPrefix(head, []byte{0xff, 0x4f, 0xff, 0x51}):
		return J2C
	case bytes.HasPrefix(head, []byte("%PDF-")):
		return PDF
	}
	return ""
}

// OtherImage is the name of an image format that head starts like which is
// not one of Of's page formats (GIF, BMP, PNM, HEIF, AVIF, JPEG XL), or ""
// for none: a folder run can say which images it did not read.
func OtherImage(head []byte) string {
	switch {
	case bytes.HasPrefix(head, []byte("GIF87a")), bytes.HasPrefix(head, []byte("GIF89a")):
		return "GIF"
	case len(head) >= 14 && string(head[:2]) == "BM" && head[6] == 0 && head[7] == 0 && head[8] == 0 && head[9] == 0:
		return "BMP"
	case len(head) >= 3 && head[0] == 'P' && head[1] >= '1' && head[1] <= '7' && (head[2] == '\n' || head[2] == ' ' || head[2] == '\r' || head[2] == '\t'):
		return "PNM"
	case len(head) >= 12 && string(head[4:8]) == "ftyp":
		switch string(head[8:12]) {
		case "avif", "avis":
			return "AVIF"
		case "heic", "heix", "hevc", "heim", "heis", "mif1", "msf1":
			return "HEIF"
		}
	case bytes.HasPrefix(head, []byte{0xff, 0x0a}), bytes.HasPrefix(head, []byte("\x00\x00\x00\x0cJXL \r\n\x87\n")):
		return "JPEG XL"
	}
	return ""
}
