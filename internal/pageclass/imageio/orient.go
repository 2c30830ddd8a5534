package imageio

import (
	"bytes"
	"compress/zlib"
	"encoding/binary"
	"encoding/hex"
	"io"
	"regexp"
	"slices"
	"strings"

	"github.com/davidbyttow/govips/v2/vips"

	"archivekit/internal/pageclass/tiffifd"
)

// Orientation beyond EXIF.
//
// libvips turns a page by its EXIF orientation tag (JPEG and WebP EXIF,
// a PNG's eXIf chunk before its pixels, the TIFF tag). Two other places
// hold the same tag in files of real use, and libvips 8.14 reads neither:
//
//   - XMP, as tiff:Orientation (written by Adobe's tools, exiftool and
//     many image editors beside or instead of EXIF), in a PNG's iTXt
//     chunk, a JPEG's APP1 segment or a WebP's XMP chunk;
//     and, where a TIFF page's directory has no Orientation tag, in its
//     XMP tag (libvips gives every TIFF orientation 1 then);
//   - ImageMagick's "Raw profile type exif" PNG text chunk: the EXIF
//     block as hexadecimal text, which ImageMagick writes instead of an
//     eXIf chunk.
//
// Pillow's ImageOps.exif_transpose reads both, in this order: EXIF (for a
// PNG, its eXIf chunk, or else the raw profile); XMP only when that gives
// no orientation tag. A PNG's eXIf chunk and text chunks after its pixels
// (read by Pillow once it has loaded them) are read here too: libvips
// reads only those before them. metaOrientation follows the same order, so a page
// turned by a phone, a scanner's software or an editor arrives upright
// however the turn was written.

// metaOrientation returns the orientation (2–8, as EXIF numbers them) that
// page ref's metadata gives where libvips read none (no "orientation"
// field: libvips applies its own), or 0 for none or upright (1). PNG,
// JPEG and WebP are looked at, and a TIFF without its own tag.
func metaOrientation(ref *vips.ImageRef, typ vips.ImageType, data []byte) int {
	fields := ref.ImageFields()
	switch typ {
	case vips.ImageTypePNG, vips.ImageTypeJPEG, vips.ImageTypeWEBP:
	case vips.ImageTypeTIFF:
		return tiffXMPOrientation(ref, fields, data)
	default:
		return 0
	}
	if slices.Contains(fields, "orientation") {
		return 0
	}
	if typ == vips.ImageTypePNG && !slices.Contains(fields, "exif-data") {
		// An eXIf chunk after the pixels, which libvips did not read;
		// else the raw profile.
		if exif, ok := pngChunk(data, "eXIf"); ok {
			if o, ok := exifOrientation(exif); ok {
				return upright(o)
			}
		} else if profile, ok := pngRawProfile(ref, fields, data); ok {
			if o, ok := exifOrientation(rawProfile(profile)); ok {
				return upright(o)
			}
		}
	}
	if slices.Contains(fields, "xmp-data") {
		return upright(xmpOrientation(ref.GetBlob("xmp-data")))
	}
	if typ == vips.ImageTypePNG {
		if xmp, ok := pngTextAfterPixels(data, "XML:com.adobe.xmp"); ok {
			return upright(xmpOrientation([]byte(xmp)))
		}
	}
	return 0
}

// tiffXMPOrientation is the orientation the first page of a TIFF without
// an Orientation tag gives in its XMP packet (tag 700), as Pillow turns
// it; libvips gives every TIFF an orientation, 1 where the tag is absent,
// so the tag is looked for in the file's first directory. The pages of a
// TIFF of several pages each have a directory of their own (tiffTurns).
func tiffXMPOrientation(ref *vips.ImageRef, fields []string, data []byte) int {
	if !slices.Contains(fields, "xmp-data") {
		return 0
	}
	if _, ok := exifOrientation(data); ok {
		return 0 // its own tag, which libvips applies
	}
	return upright(xmpOrientation(ref.GetBlob("xmp-data")))
}

// maxTIFFXMP bounds a TIFF page's XMP packet read for its orientation
// (some kilobytes in real files).
const maxTIFFXMP = 1 << 20

// tiffTurns reads the directories of a TIFF of several pages once
// (tiffifd.Dirs) and gives them with each page's turn: the turn the XMP
// packet of its own directory gives where that directory has no
// Orientation tag (libvips applies the tag), as Pillow turns each page; 0
// for none or upright. Both are nil when the directories cannot be
// followed: libvips reads the pages, or refuses them, on its own.
func tiffTurns(data []byte) ([]tiffifd.Dir, []int) {
	dirs, err := tiffifd.Dirs(bytes.NewReader(data))
	if err != nil {
		return nil, nil
	}
	return dirs, dirTurns(dirs, data)
}

// dirTurns is tiffTurns for the directories dirs of the TIFF data.
func dirTurns(dirs []tiffifd.Dir, data []byte) []int {
	turns := make([]int, len(dirs))
	for i, d := range dirs {
		if d.Orientation || d.XMPCount == 0 || d.XMPCount > maxTIFFXMP || d.XMPOffset > uint64(len(data))-d.XMPCount {
			continue
		}
		turns[i] = upright(xmpOrientation(data[d.XMPOffset : d.XMPOffset+d.XMPCount]))
	}
	return turns
}

// pngRawProfile returns the text of a PNG's "Raw profile type exif" chunk:
// the one libvips read before the pixels, else one after them.
func pngRawProfile(ref *vips.ImageRef, fields []string, data []byte) (string, bool) {
	for _, f := range fields {
		// libvips names a PNG text chunk png-comment-N-keyword.
		if strings.HasPrefix(f, "png-comment-") && strings.HasSuffix(f, "-Raw profile type exif") {
			return ref.GetString(f), true
		}
	}
	return pngTextAfterPixels(data, "Raw profile type exif")
}

// maxPNGText bounds the inflated size of a compressed PNG text chunk read
// here (an XMP packet or an EXIF profile is some kilobytes).
const maxPNGText = 1 << 20

// pngTextAfterPixels returns the text of the first text chunk (tEXt, zTXt
// or iTXt, compressed or not) with the keyword after a PNG's image data,
// where libvips reads none and Pillow reads them once the pixels are
// loaded; ok is false when there is none, or it cannot be read (its
// compressed text over maxPNGText, or not zlib).
func pngTextAfterPixels(data []byte, keyword string) (text string, ok bool) {
	pixels := false
	pngChunks(data, func(typ string, body []byte) bool {
		switch {
		case typ == "IDAT":
			pixels = true
			return true
		case !pixels || (typ != "tEXt" && typ != "zTXt" && typ != "iTXt"):
			return true
		}
		key, rest, found := bytes.Cut(body, []byte{0})
		if !found || string(key) != keyword {
			return true
		}
		compressed := false
		switch typ {
		case "zTXt":
			if len(rest) < 1 {
				return false
			}
			compressed, rest = true, rest[1:]
		case "iTXt":
			// Compression flag and method, language tag, translated keyword.
			if len(rest) < 2 {
				return false
			}
			compressed = rest[0] == 1
			var lang, translated bool
			_, rest, lang = bytes.Cut(rest[2:], []byte{0})
			_, rest, translated = bytes.Cut(rest, []byte{0})
			if !lang || !translated {
				return false
			}
		}
		if compressed {
			zr, err := zlib.NewReader(bytes.NewReader(rest))
			if err != nil {
				return false
			}
			b, err := io.ReadAll(io.LimitReader(zr, maxPNGText+1))
			if err != nil || len(b) > maxPNGText {
				return false
			}
			rest = b
		}
		text, ok = string(rest), true
		return false
	})
	return text, ok
}

// pngChunks calls fn with each chunk of the PNG data in order, walking
// them by their lengths, until fn returns false, the IEND chunk or the
// walk runs off the data.
func pngChunks(data []byte, fn func(typ string, body []byte) bool) {
	const sig = 8
	for at := sig; at+8 <= len(data); {
		n := int(binary.BigEndian.Uint32(data[at:]))
		if n < 0 || n > len(data)-at-12 {
			return
		}
		typ := string(data[at+4 : at+8])
		if typ == "IEND" || !fn(typ, data[at+8:at+8+n]) {
			return
		}
		at += 12 + n
	}
}

// pngChunk returns the data of the first chunk of type typ in the PNG
// data; ok is false when there is none or the walk runs off the data
// first.
func pngChunk(data []byte, typ string) (chunk []byte, ok bool) {
	pngChunks(data, func(t string, body []byte) bool {
		if t == typ {
			chunk, ok = body, true
		}
		return !ok
	})
	return chunk, ok
}

// upright maps an orientation to the turn to apply: 2–8, or 0 for upright
// and for numbers EXIF does not define.
func upright(o int) int {
	if o < 2 || o > 8 {
		return 0
	}
	return o
}

// rawProfile decodes ImageMagick's raw profile text: a line break, the
// profile's name, its length in bytes, then the bytes in hexadecimal over
// as many lines as it takes. It returns nil when the text is not of that
// form.
func rawProfile(text string) []byte {
	lines := strings.Split(text, "\n")
	if len(lines) < 4 {
		return nil
	}
	digits := strings.Join(lines[3:], "")
	digits = strings.Map(func(r rune) rune {
		if r == ' ' || r == '\r' || r == '\t' {
			return -1
		}
		return r
	}, digits)
	b, err := hex.DecodeString(digits)
	if err != nil {
		return nil
	}
	return b
}

// exifOrientation reads the orientation tag (0x0112) from the first image
// directory of an EXIF block (a TIFF header and directories, after an
// optional "Exif\0\0"). ok is false when the block is not readable or has
// no such tag.
func exifOrientation(b []byte) (o int, ok bool) {
	b = bytes.TrimPrefix(b, []byte("Exif\x00\x00"))
	if len(b) < 8 {
		return 0, false
	}
	order, ok := tiffOrder(b)
	if !ok {
		return 0, false
	}
	off := int64(order.Uint32(b[4:8]))
	if off < 8 || off+2 > int64(len(b)) {
		return 0, false
	}
	n := int64(order.Uint16(b[off:]))
	for i := range n {
		e := off + 2 + 12*i
		if e+12 > int64(len(b)) {
			return 0, false
		}
		if order.Uint16(b[e:]) != 0x0112 {
			continue
		}
		// SHORT, one value, held in the entry itself.
		if order.Uint16(b[e+2:]) != 3 || order.Uint32(b[e+4:]) < 1 {
			return 0, false
		}
		return int(order.Uint16(b[e+8:])), true
	}
	return 0, false
}

// tiffOrder is the byte order of a classic TIFF header (EXIF's too).
func tiffOrder(b []byte) (binary.ByteOrder, bool) {
	switch {
	case bytes.HasPrefix(b, []byte("II*\x00")):
		return binary.LittleEndian, true
	case bytes.HasPrefix(b, []byte("MM\x00*")):
		return binary.BigEndian, true
	}
	return nil, false
}

// xmpTiffOrientation finds tiff:Orientation in an XMP packet, written as
// an attribute (tiff:Orientation="6") or as an element
// (<tiff:Orientation>6</tiff:Orientation>). XMP writers use the prefix
// tiff for that namespace; a packet binding it to another prefix is not
// read.
var xmpTiffOrientation = regexp.MustCompile(`tiff:Orientation\s*(?:=\s*["']|>)\s*([0-9]{1,2})\s*["'<]`)

// xmpOrientation returns the orientation an XMP packet gives, or 0.
func xmpOrientation(xmp []byte) int {
	m := xmpTiffOrientation.FindSubmatch(xmp)
	if m == nil {
		return 0
	}
	o := 0
	for _, c := range m[1] {
		o = o*10 + int(c-'0')
	}
	return o
}
