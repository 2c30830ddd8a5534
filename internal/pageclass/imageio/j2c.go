package imageio

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"strings"
)

// jp2OfCodestream wraps a bare JPEG 2000 codestream (a .j2k or .j2c file)
// in the boxes of the JP2 file format (ISO/IEC 15444-1 annex I): the
// signature, the file type, a header with the image size and components
// read from the codestream's SIZ marker and an enumerated colour space
// (greyscale for one or two components, sRGB for three or four, sYCC for
// three whose second and third are subsampled), then
// the codestream itself, unchanged. govips hands libvips JPEG 2000 in the
// file format only; the pixels decoded are the codestream's.
func jp2OfCodestream(cs []byte) ([]byte, error) {
	// SOC (FF4F), then SIZ (FF51): Lsiz, Rsiz, Xsiz, Ysiz, XOsiz, YOsiz,
	// XTsiz, YTsiz, XTOsiz, YTOsiz, Csiz, then Ssiz, XRsiz, YRsiz a
	// component (annex A.5.1).
	const fixed = 4 + 2 + 2 + 8*4 + 2
	if len(cs) < fixed || cs[0] != 0xff || cs[1] != 0x4f || cs[2] != 0xff || cs[3] != 0x51 {
		return nil, errors.New("not a JPEG 2000 codestream (no SIZ marker after SOC)")
	}
	be := binary.BigEndian
	x, y := be.Uint32(cs[8:]), be.Uint32(cs[12:])
	x0, y0 := be.Uint32(cs[16:]), be.Uint32(cs[20:])
	nc := int(be.Uint16(cs[40:]))
	if x <= x0 || y <= y0 {
		return nil, fmt.Errorf("corrupt JPEG 2000 codestream: image area %d×%d from offset %d,%d", x, y, x0, y0)
	}
	if nc < 1 || nc > 4 || len(cs) < fixed+3*nc {
		return nil, fmt.Errorf("JPEG 2000 codestream with %d components (1 to 4 are read)", nc)
	}
	bpc := cs[fixed]
	for c := 1; c < nc; c++ {
		if cs[fixed+3*c] != bpc {
			bpc = 0xff // components of different depths
		}
	}
	colour := uint32(17) // greyscale
	if nc >= 3 {
		colour = 16 // sRGB
	}
	sub := func(c int) bool { return cs[fixed+3*c+1] > 1 || cs[fixed+3*c+2] > 1 }
	if nc == 3 && !sub(0) && sub(1) && sub(2) {
		// Subsampled chroma: YCbCr, as OpenJPEG's own decoder guesses.
		colour = 18 // sYCC
	}
	ihdr := make([]byte, 14)
	be.PutUint32(ihdr[0:], y-y0)
	be.PutUint32(ihdr[4:], x-x0)
	be.PutUint16(ihdr[8:], uint16(nc))
	ihdr[10], ihdr[11] = bpc, 7 // bits a component, compression type
	colr := []byte{1, 0, 0, 0, 0, 0, 0}
	be.PutUint32(colr[3:], colour)
	header := append(box("ihdr", ihdr), box("colr", colr)...)

	out := make([]byte, 0, len(cs)+96)
	out = append(out, box("jP  ", []byte{0x0d, 0x0a, 0x87, 0x0a})...)
	out = append(out, box("ftyp", []byte("jp2 \x00\x00\x00\x00jp2 "))...)
	out = append(out, box("jp2h", header)...)
	if len(cs) > 1<<32-9 {
		// A box of length 0 runs to the end of the file (I.4).
		return append(append(out, 0, 0, 0, 0, 'j', 'p', '2', 'c'), cs...), nil
	}
	return append(out, box("jp2c", cs)...), nil
}

// box is a JP2 box: its length, its type, its content.
func box(typ string, content []byte) []byte {
	b := make([]byte, 8, 8+len(content))
	binary.BigEndian.PutUint32(b, uint32(8+len(content)))
	copy(b[4:], typ)
	return append(b, content...)
}

// errPalette refuses a JPEG 2000 file with a colour palette.
var errPalette = errors.New("JPEG 2000 with a colour palette (a pclr box) is not read: " +
	"Debian 12's libvips 8.14 and OpenJPEG 2.5.0 crash on some such files; convert it to RGB or greyscale first")

// jp2Palette reports whether a JP2 (or JPX) file's header box holds a
// palette box ("pclr", ISO/IEC 15444-1 I.5.3.4). The boxes are read by
// their lengths only, within data; a codestream or a malformed box ends
// the search.
func jp2Palette(data []byte) bool {
	return findBox(data, "jp2h", func(header []byte) bool {
		return findBox(header, "pclr", func([]byte) bool { return true })
	})
}

// findBox calls found with the content of each box of type typ among the
// boxes that make up data, and reports whether a call returned true. A box
// that runs past data ends the search.
func findBox(data []byte, typ string, found func([]byte) bool) bool {
	hit := false
	eachBox(data, func(t string, content []byte, whole bool) bool {
		hit = whole && t == typ && found(content)
		return !whole || hit
	})
	return hit
}

// jp2Codestream returns the start of a JP2 file's codestream (the content
// of its jp2c box, as far as the data goes), or nil.
func jp2Codestream(data []byte) []byte {
	var cs []byte
	eachBox(data, func(t string, content []byte, whole bool) bool {
		if t == "jp2c" {
			cs = content
		}
		return cs != nil || !whole
	})
	return cs
}

// eachBox calls fn with the type and content of each box that makes up
// data, read by their lengths (ISO/IEC 15444-1 I.4), until fn returns
// true. A box that runs past the end of data is the last: fn gets its
// content as far as data goes, with whole false. A length shorter than
// the box's own header ends the walk.
func eachBox(data []byte, fn func(typ string, content []byte, whole bool) bool) {
	for len(data) >= 8 {
		n, head := uint64(binary.BigEndian.Uint32(data)), uint64(8)
		switch n {
		case 0: // to the end
			n = uint64(len(data))
		case 1: // a 64-bit length follows the type
			if len(data) < 16 {
				return
			}
			n, head = binary.BigEndian.Uint64(data[8:]), 16
		}
		if n < head {
			return
		}
		if n > uint64(len(data)) {
			fn(string(data[4:8]), data[head:], false)
			return
		}
		if fn(string(data[4:8]), data[head:n], true) {
			return
		}
		data = data[n:]
	}
}

// sizFixed is the length of a codestream's SOC marker and SIZ segment
// before its components: SOC, SIZ, Lsiz, Rsiz, eight sizes and offsets,
// Csiz (ISO/IEC 15444-1 A.5.1).
const sizFixed = 4 + 2 + 2 + 8*4 + 2

// sizSampling returns the sampling steps (XRsiz, YRsiz) of a codestream's
// components, and false where its SIZ marker is not whole in cs.
func sizSampling(cs []byte) (steps [][2]int, ok bool) {
	if len(cs) < sizFixed || cs[0] != 0xff || cs[1] != 0x4f || cs[2] != 0xff || cs[3] != 0x51 {
		return nil, false
	}
	nc := int(binary.BigEndian.Uint16(cs[40:]))
	if nc < 1 || len(cs) < sizFixed+3*nc {
		return nil, false
	}
	for c := range nc {
		steps = append(steps, [2]int{int(cs[sizFixed+3*c+1]), int(cs[sizFixed+3*c+2])})
	}
	return steps, true
}

// mainHeader calls seg with each marker segment of a codestream's main
// header after SOC: its marker, the offset of its content in cs and the
// content (as far as cs goes), up to the first tile-part (SOT) or the end
// of cs, or until seg returns true.
func mainHeader(cs []byte, seg func(marker uint16, at int, content []byte) bool) {
	if len(cs) < 6 || cs[0] != 0xff || cs[1] != 0x4f {
		return
	}
	for at := 2; at+4 <= len(cs); {
		marker, n := binary.BigEndian.Uint16(cs[at:]), int(binary.BigEndian.Uint16(cs[at+2:]))
		if marker>>8 != 0xff || marker == 0xff90 || n < 2 {
			return
		}
		if seg(marker, at+4, cs[at+4:min(len(cs), at+2+n)]) {
			return
		}
		at += 2 + n
	}
}

// highThroughput reports whether a codestream's main header declares
// High-Throughput block coding (ISO/IEC 15444-15, HTJ2K): Part 15 in its
// CAP marker's Pcap, or the HT bit (0x40) in its COD marker's code-block
// style.
func highThroughput(cs []byte) bool {
	ht := false
	mainHeader(cs, func(marker uint16, _ int, c []byte) bool {
		switch marker {
		case 0xff50: // CAP: Pcap, a bit for each part from the most significant
			ht = len(c) >= 4 && binary.BigEndian.Uint32(c)&(1<<(32-15)) != 0
		case 0xff52: // COD: Scod, SGcod (4), levels, xcb, ycb, code-block style
			ht = len(c) >= 9 && c[8]&0x40 != 0
		}
		return ht
	})
	return ht
}

// withoutMCT returns a JP2 file (data, its codestream cs of steps
// components) of fewer than three components whose COD marker asks for a
// multiple component transform with that transform's flag cleared (in a
// copy), or data itself. OpenJPEG skips the transform on such a file and
// reports it as an error ("Number of components (1) is inconsistent with
// a MCT"); libvips 8.14 then decodes no further part of the page and
// returns the rest black, with no error (OpenJPEG's 123.j2c, bug.j2c and
// illegalcolortransform.j2k, 16-bit X-rays, came out black but for their
// top-left corner). Without the flag OpenJPEG decodes the same samples
// and reports nothing.
func withoutMCT(data, cs []byte, steps [][2]int) []byte {
	if len(steps) >= 3 {
		return data
	}
	out := data
	mainHeader(cs, func(marker uint16, at int, c []byte) bool {
		if marker != 0xff52 || len(c) < 5 || c[4] == 0 {
			return marker == 0xff52
		}
		// COD: Scod, progression order, layers (2), MCT.
		start := len(data) - len(cs)
		out = bytes.Clone(data)
		out[start+at+4] = 0
		return true
	})
	return out
}

// jp2Colr returns the content of a JP2 file's first colr box (the first
// decides, as in OpenJPEG; ISO/IEC 15444-1 I.5.3.3, 15444-2 M.11.7.2),
// nil where it has none.
func jp2Colr(data []byte) (colr []byte) {
	findBox(data, "jp2h", func(header []byte) bool {
		return findBox(header, "colr", func(c []byte) bool {
			colr = c
			return true
		})
	})
	return colr
}

// colrEnumerated returns the enumerated colour space of a colr box's
// content, and false where it holds none (method 1).
func colrEnumerated(c []byte) (cs uint32, ok bool) {
	if len(c) >= 7 && c[0] == 1 {
		return binary.BigEndian.Uint32(c[3:]), true
	}
	return 0, false
}

// colrICCSpace returns the colour space signature (ICC.1 7.2.6: "RGB ",
// "GRAY", "CMYK", "Lab ", ...) of the ICC profile in a colr box's content
// (methods 2 and 3), and false where it holds none.
func colrICCSpace(c []byte) (space string, ok bool) {
	if len(c) >= 3+20 && (c[0] == 2 || c[0] == 3) {
		return string(c[3+16 : 3+20]), true
	}
	return "", false
}

// jp2Enumerated returns the enumerated colour space of a JP2 file's first
// colr box, and false where it has none (no colr box, or one with an ICC
// profile).
func jp2Enumerated(data []byte) (cs uint32, ok bool) { return colrEnumerated(jp2Colr(data)) }

// enumeratedNames names the enumerated colour spaces of ISO/IEC 15444-2
// M.11.7.2 that Debian 12's libvips 8.14 does not read right.
var enumeratedNames = map[uint32]string{
	0: "bilevel", 1: "YCbCr(1)", 3: "YCbCr(2)", 4: "YCbCr(3)", 9: "PhotoYCC", 11: "CMY", 12: "CMYK",
	13: "YCCK", 14: "CIELab", 15: "bilevel(2)", 19: "CIEJab", 20: "e-sRGB", 21: "ROMM-RGB",
	22: "YPbPr(1125/60)", 23: "YPbPr(1250/50)",
}

// jp2Prepared returns a JP2 file (a bare codestream is wrapped by
// jp2OfCodestream first) as libvips is to read it (withoutMCT), or why
// Debian 12's libvips 8.14 would return it with wrong pixels and no error.
// Found on OpenJPEG's and Pillow's test images, compared with OpenJPEG's
// own decoder:
//   - a colour palette: six of thirteen palette files crashed OpenJPEG
//     2.5.0 (errPalette);
//   - a first component that is subsampled: libvips sizes the page by it,
//     then asks OpenJPEG for that many pixels of the full-resolution grid,
//     so it returns the page's top-left part (a half or a quarter)
//     stretched to the page, and pixels never written where the grid is
//     not a whole number of samples (uninitialised memory);
//   - YCbCr colour (sYCC, e-sYCC) other than three components with the
//     second and third subsampled 2×2 (4:2:0, which libvips converts): the
//     YCbCr values come back as if they were RGB;
//   - High-Throughput block coding (HTJ2K): a flat grey page (every sample
//     128), though OpenJPEG 2.5.0's own decoder reads it;
//   - an enumerated colour space other than sRGB, greyscale and the YCbCr
//     ones above (CMYK came back inverted, CIELab in false colours), and
//     an ICC profile of a colour space other than RGB and grey (a CMYK one
//     came back as RGB and alpha: OpenJPEG's issue208.jp2);
//   - two or four components not all sampled alike (OpenJPEG's p1_03.j2k,
//     its third and fourth subsampled, came back in false colours; its own
//     decoder writes no image of it): what the components hold (CMYK, or
//     colour and alpha) is not said, and libvips takes them for RGB and
//     alpha.
func jp2Prepared(data []byte) ([]byte, error) {
	if jp2Palette(data) {
		return nil, errPalette
	}
	cs := jp2Codestream(data)
	if highThroughput(cs) {
		return nil, errors.New("High-Throughput JPEG 2000 (HTJ2K, ISO/IEC 15444-15) is not read: " +
			"Debian 12's libvips 8.14 returns a flat grey page for it; convert it to classic JPEG 2000, TIFF or PNG first")
	}
	steps, ok := sizSampling(cs)
	if !ok {
		return data, nil // OpenJPEG tells what is wrong with the codestream
	}
	if dx, dy := steps[0][0], steps[0][1]; dx > 1 || dy > 1 {
		return nil, fmt.Errorf("JPEG 2000 whose first component is subsampled (one sample every %d×%d pixels) is not read: "+
			"Debian 12's libvips 8.14 returns only the top-left part of such a page; convert it with its first component at full resolution first", dx, dy)
	}
	colr := jp2Colr(data)
	space, enumerated := colrEnumerated(colr)
	if enumerated && space != 16 && space != 17 && space != 18 && space != 24 {
		name := enumeratedNames[space]
		if name == "" {
			name = "unknown"
		}
		return nil, fmt.Errorf("JPEG 2000 in the colour space %s (enumerated %d) is not read: "+
			"Debian 12's libvips 8.14 reads sRGB, greyscale and 4:2:0 sYCC right, and others with wrong colours; convert it to RGB first", name, space)
	}
	if icc, ok := colrICCSpace(colr); ok && icc != "RGB " && icc != "GRAY" {
		return nil, fmt.Errorf("JPEG 2000 with an ICC profile of the colour space %q is not read: "+
			"Debian 12's libvips 8.14 reads its samples as RGB; convert it to RGB first", strings.TrimSpace(icc))
	}
	if len(steps) != 3 {
		for c := 1; c < len(steps); c++ {
			if steps[c] != steps[0] {
				return nil, fmt.Errorf("JPEG 2000 of %d components, component %d subsampled (one sample every %d×%d pixels), is not read: "+
					"what its components hold is not told, and Debian 12's libvips 8.14 returns such a page in false colours; convert it to RGB first",
					len(steps), c+1, steps[c][0], steps[c][1])
			}
		}
	}
	ycc420 := len(steps) == 3 && steps[1][0] > 1 && steps[1][1] > 1 && steps[2][0] > 1 && steps[2][1] > 1
	if enumerated && (space == 18 || space == 24) && !ycc420 {
		return nil, errors.New("JPEG 2000 in YCbCr colour (sYCC) other than 4:2:0 is not read: " +
			"Debian 12's libvips 8.14 returns its YCbCr values as RGB; convert it to RGB first")
	}
	return withoutMCT(data, cs, steps), nil
}
