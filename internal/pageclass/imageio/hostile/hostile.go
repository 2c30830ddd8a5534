// Package hostile writes inputs that are small on the wire but large in
// pixels, for the memory tests and benchmarks of the page decoder and the
// classifier service, and multi-page TIFFs for the tests of page-by-page
// reading. Nothing here is checked in as a file: every input is made at
// test time, in a few hundred bytes to a few hundred kilobytes.
package hostile

import (
	"bytes"
	"compress/zlib"
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"image"
	"image/jpeg"
	"io"
)

// PNG returns a w×h 8-bit RGB PNG whose rows are a few grey bands (so that
// it compresses to almost nothing). It is written row by row: making it
// costs one row of memory, not w×h pixels.
func PNG(w, h int) []byte {
	var out bytes.Buffer
	out.WriteString("\x89PNG\r\n\x1a\n")
	ihdr := make([]byte, 13)
	binary.BigEndian.PutUint32(ihdr[0:], uint32(w))
	binary.BigEndian.PutUint32(ihdr[4:], uint32(h))
	ihdr[8], ihdr[9] = 8, 2 // 8 bits, RGB
	Chunk(&out, "IHDR", ihdr)
	var idat bytes.Buffer
	z, _ := zlib.NewWriterLevel(&idat, zlib.BestSpeed)
	row := make([]byte, 1+3*w)
	for y := 0; y < h; y++ {
		v := byte(255)
		if (y/64)%8 == 0 {
			v = 40 // a dark band every 512 rows: a page with lines
		}
		if row[1] != v {
			for i := 1; i < len(row); i++ {
				row[i] = v
			}
		}
		_, _ = z.Write(row)
	}
	_ = z.Close()
	Chunk(&out, "IDAT", idat.Bytes())
	Chunk(&out, "IEND", nil)
	return out.Bytes()
}

func Chunk(w io.Writer, typ string, data []byte) {
	var n [4]byte
	binary.BigEndian.PutUint32(n[:], uint32(len(data)))
	_, _ = w.Write(n[:])
	c := crc32.NewIEEE()
	_, _ = io.WriteString(c, typ)
	_, _ = c.Write(data)
	_, _ = io.WriteString(w, typ)
	_, _ = w.Write(data)
	binary.BigEndian.PutUint32(n[:], c.Sum32())
	_, _ = w.Write(n[:])
}

// PDF returns a PDF of pages pages, each widthIn × heightIn inches, each
// with a filled rectangle and a line of text so that it renders to more
// than one colour. An 85 × 85 inch page is 12,750 × 12,750 pixels at
// 150 dpi.
func PDF(pages int, widthIn, heightIn float64) []byte {
	wPt, hPt := widthIn*72, heightIn*72
	// 1 catalog, 2 pages, 3 font, 4 content, then one object per page.
	kids := ""
	for i := 0; i < pages; i++ {
		kids += fmt.Sprintf("%d 0 R ", 5+i)
	}
	content := fmt.Sprintf("0.2 g 36 36 %.0f %.0f re f BT /F1 48 Tf 0 g 72 %.0f Td (hostile page) Tj ET", wPt/3, hPt/4, hPt-120)
	objs := []string{
		"<< /Type /Catalog /Pages 2 0 R >>",
		fmt.Sprintf("<< /Type /Pages /Kids [%s] /Count %d >>", kids, pages),
		"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
		fmt.Sprintf("<< /Length %d >>\nstream\n%s\nendstream", len(content), content),
	}
	for i := 0; i < pages; i++ {
		objs = append(objs, fmt.Sprintf("<< /Type /Page /Parent 2 0 R /MediaBox [0 0 %.0f %.0f] /Resources << /Font << /F1 3 0 R >> >> /Contents 4 0 R >>", wPt, hPt))
	}
	return PDFObjects(objs...)
}

// ScanPDF returns a PDF as scanners write them: each image a page of its
// own, as a JPEG (quality 90) filling the page at dpi, with a line of
// Helvetica text over it; tree, when not empty, is the catalog's
// /PageLabels value.
func ScanPDF(pages []image.Image, dpi float64, tree string) ([]byte, error) {
	objs, err := ScanPDFObjects(pages, dpi, tree)
	if err != nil {
		return nil, err
	}
	return PDFObjects(objs...), nil
}

// ScanPDFObjects returns the objects of ScanPDF's PDF, for PDFObjects,
// so that a test can break one first: object 1 is the catalog, 2 the page
// tree, 3 the font, then each page has three, from 4 on: its page
// object (4, 7, 10, ...), its content stream and its image.
func ScanPDFObjects(pages []image.Image, dpi float64, tree string) ([]string, error) {
	catalog := "<< /Type /Catalog /Pages 2 0 R >>"
	if tree != "" {
		catalog = "<< /Type /Catalog /Pages 2 0 R /PageLabels " + tree + " >>"
	}
	objs := []string{catalog, "", "<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>"}
	kids := ""
	for i, img := range pages {
		var jb bytes.Buffer
		if err := jpeg.Encode(&jb, img, &jpeg.Options{Quality: 90}); err != nil {
			return nil, err
		}
		w, h := img.Bounds().Dx(), img.Bounds().Dy()
		pw, ph := float64(w)*72/dpi, float64(h)*72/dpi
		page, content, xobj := len(objs)+1, len(objs)+2, len(objs)+3
		kids += fmt.Sprintf("%d 0 R ", page)
		text := fmt.Sprintf("q %.2f 0 0 %.2f 0 0 cm /Im1 Do Q BT /F1 18 Tf 20 20 Td (scanned page %d) Tj ET", pw, ph, i+1)
		objs = append(objs,
			fmt.Sprintf("<< /Type /Page /Parent 2 0 R /MediaBox [0 0 %.2f %.2f] /Resources << /XObject << /Im1 %d 0 R >> /Font << /F1 3 0 R >> >> /Contents %d 0 R >>", pw, ph, xobj, content),
			fmt.Sprintf("<< /Length %d >>\nstream\n%s\nendstream", len(text), text),
			fmt.Sprintf("<< /Type /XObject /Subtype /Image /Width %d /Height %d /ColorSpace /DeviceRGB /BitsPerComponent 8 /Filter /DCTDecode /Length %d >>\nstream\n%s\nendstream", w, h, jb.Len(), jb.String()))
	}
	objs[1] = fmt.Sprintf("<< /Type /Pages /Kids [%s] /Count %d >>", kids, len(pages))
	return objs, nil
}

// PDFObjects writes a PDF file whose objects 1, 2, ... are objs (object 1
// must be the catalog), with its cross-reference table and trailer. An
// empty string leaves its object undefined: no definition, a free entry
// in the table.
func PDFObjects(objs ...string) []byte {
	var b bytes.Buffer
	b.WriteString("%PDF-1.4\n")
	offs := make([]int, len(objs))
	for i, o := range objs {
		if o == "" {
			continue
		}
		offs[i] = b.Len()
		fmt.Fprintf(&b, "%d 0 obj\n%s\nendobj\n", i+1, o)
	}
	xref := b.Len()
	fmt.Fprintf(&b, "xref\n0 %d\n0000000000 65535 f \n", len(objs)+1)
	for i, o := range offs {
		if objs[i] == "" {
			b.WriteString("0000000000 00001 f \n")
			continue
		}
		fmt.Fprintf(&b, "%010d 00000 n \n", o)
	}
	fmt.Fprintf(&b, "trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n", len(objs)+1, xref)
	return b.Bytes()
}

// TIFFPage is one page of TIFF: a W×H grey page of one value.
type TIFFPage struct {
	W, H int
	Grey uint8
	// Reduced flags the page as a reduced-resolution image (NewSubfileType
	// 1): a pyramid's level or a thumbnail.
	Reduced bool
}

// TIFF returns an uncompressed 8-bit grey TIFF (little-endian) holding the
// pages in order, one image file directory each, as a scanner writes a
// multi-page scan. Pages flagged Reduced after the first make the layout
// of a pyramidal TIFF (one image at reduced resolutions) or of a page with
// its thumbnail.
func TIFF(pages ...TIFFPage) []byte {
	imgs := make([]*image.Gray, len(pages))
	reduced := make([]bool, len(pages))
	for i, p := range pages {
		g := image.NewGray(image.Rect(0, 0, p.W, p.H))
		for j := range g.Pix {
			g.Pix[j] = p.Grey
		}
		imgs[i], reduced[i] = g, p.Reduced
	}
	return GrayTIFFAs(TIFFLayout{Reduced: reduced}, imgs...)
}

// GrayTIFF returns an uncompressed 8-bit grey TIFF (little-endian) holding
// the images in order, one image file directory each: a multi-page scan of
// real pages.
func GrayTIFF(pages ...*image.Gray) []byte { return GrayTIFFAs(TIFFLayout{}, pages...) }

// TIFFLayout is how GrayTIFFAs lays a TIFF out.
type TIFFLayout struct {
	// Order is the byte order (II or MM); nil is little-endian.
	Order binary.ByteOrder
	// DirsAfter puts each directory after its page's pixels, as libtiff
	// writes them, instead of before.
	DirsAfter bool
	// Big writes a BigTIFF: 8-byte offsets and counts, 20-byte entries.
	Big bool
	// XMP gives page i the XMP packet XMP[i] (tag 700, UNDEFINED, after
	// its pixels) when it is not nil.
	XMP [][]byte
	// Reduced flags page i as a reduced-resolution image (NewSubfileType,
	// tag 254, 1) when Reduced[i] is true, as libvips flags a pyramid's
	// levels.
	Reduced []bool
}

// GrayTIFFAs is GrayTIFF laid out as l says.
func GrayTIFFAs(l TIFFLayout, pages ...*image.Gray) []byte {
	order := l.Order
	if order == nil {
		order = binary.LittleEndian
	}
	hdrSize, countSize, entrySize, offSize := 8, 2, 12, 4
	if l.Big {
		hdrSize, countSize, entrySize, offSize = 16, 8, 20, 8
	}
	xmpOf := func(i int) []byte {
		if i < len(l.XMP) {
			return l.XMP[i]
		}
		return nil
	}
	reduced := func(i int) bool { return i < len(l.Reduced) && l.Reduced[i] }
	entriesOf := func(i int) int {
		n := 9
		if xmpOf(i) != nil {
			n++
		}
		if reduced(i) {
			n++
		}
		return n
	}
	// Where each page's directory, pixels and XMP packet go.
	dirs, pixels, xmps := make([]int, len(pages)), make([]int, len(pages)), make([]int, len(pages))
	at := hdrSize
	for i, p := range pages {
		size := p.Rect.Dx() * p.Rect.Dy()
		dirSize := countSize + entriesOf(i)*entrySize + offSize
		if l.DirsAfter {
			pixels[i], dirs[i] = at, at+size
		} else {
			dirs[i], pixels[i] = at, at+dirSize
		}
		at += dirSize + size
		xmps[i] = at
		at += len(xmpOf(i))
	}
	var out bytes.Buffer
	put := func(v any) { _ = binary.Write(&out, order, v) }
	// offset writes an offset or a directory's entry count.
	offset := func(v, size int) {
		if size == 8 {
			put(uint64(v))
		} else if size == 4 {
			put(uint32(v))
		} else {
			put(uint16(v))
		}
	}
	if order == binary.ByteOrder(binary.BigEndian) {
		out.WriteString("MM")
	} else {
		out.WriteString("II")
	}
	first := 0
	if len(pages) > 0 {
		first = dirs[0]
	}
	if l.Big {
		put([3]uint16{43, 8, 0})
	} else {
		put(uint16(42))
	}
	offset(first, offSize)
	for i, p := range pages {
		w, h := p.Rect.Dx(), p.Rect.Dy()
		writePixels := func() {
			for y := 0; y < h; y++ {
				off := p.PixOffset(p.Rect.Min.X, p.Rect.Min.Y+y)
				out.Write(p.Pix[off : off+w])
			}
		}
		if l.DirsAfter {
			writePixels()
		}
		next := 0
		if i < len(pages)-1 {
			next = dirs[i+1]
		}
		offset(entriesOf(i), countSize)
		const short, long, long8 = 3, 4, 16
		// tag writes an entry of one value, left-justified in its field.
		tag := func(id, typ uint16, v int) {
			put(id)
			put(typ)
			offset(1, offSize)
			size := map[uint16]int{short: 2, long: 4, long8: 8}[typ]
			offset(v, size)
			out.Write(make([]byte, offSize-size))
		}
		strip := uint16(long)
		if l.Big {
			strip = long8
		}
		if reduced(i) {
			tag(254, long, 1) // NewSubfileType: reduced-resolution
		}
		tag(256, long, w)          // ImageWidth
		tag(257, long, h)          // ImageLength
		tag(258, short, 8)         // BitsPerSample
		tag(259, short, 1)         // Compression: none
		tag(262, short, 1)         // PhotometricInterpretation: BlackIsZero
		tag(273, strip, pixels[i]) // StripOffsets
		tag(277, short, 1)         // SamplesPerPixel
		tag(278, long, h)          // RowsPerStrip
		tag(279, strip, w*h)       // StripByteCounts
		if x := xmpOf(i); x != nil {
			put(uint16(700)) // XMP, UNDEFINED, at its place after the pixels
			put(uint16(7))
			offset(len(x), offSize)
			offset(xmps[i], offSize)
		}
		offset(next, offSize)
		if !l.DirsAfter {
			writePixels()
		}
		out.Write(xmpOf(i))
	}
	return out.Bytes()
}

// RGBTIFF writes img as a baseline TIFF: uncompressed 8-bit RGB in one
// strip, little-endian, as scanners write masters (Go's encoder writes
// RGBA, which scanners do not).
func RGBTIFF(w io.Writer, img *image.RGBA) error { return RGBTIFFWith(w, img, 0, nil) }

// RGBTIFFWith is RGBTIFF with an Orientation tag (274) when orientation
// is not 0, and an XMP packet (tag 700, after the pixels) when xmp is not
// nil.
func RGBTIFFWith(w io.Writer, img *image.RGBA, orientation int, xmp []byte) error {
	_, err := w.Write(RGBTIFFPages(RGBPage{Img: img, Orientation: orientation, XMP: xmp}))
	return err
}

// RGBPage is a page of RGBTIFFPages: its image, its Orientation tag (none
// for 0) and its XMP packet (none for nil).
type RGBPage struct {
	Img         *image.RGBA
	Orientation int
	XMP         []byte
}

// RGBTIFFPages is a TIFF of the pages in order, each as RGBTIFFWith writes
// one: its directory, BitsPerSample's values, its pixels, its XMP packet;
// each directory links the next.
func RGBTIFFPages(pages ...RGBPage) []byte {
	var buf bytes.Buffer
	le := binary.LittleEndian
	put := func(v any) { _ = binary.Write(&buf, le, v) }
	buf.Write([]byte("II*\x00"))
	put(uint32(8))
	for k, p := range pages {
		b := p.Img.Bounds()
		width, height := b.Dx(), b.Dy()
		entries := 10
		if p.Orientation != 0 {
			entries++
		}
		if p.XMP != nil {
			entries++
		}
		ifd := buf.Len()
		data := ifd + 2 + entries*12 + 4 + 6 // after the IFD and BitsPerSample's three values
		next := 0
		if k < len(pages)-1 {
			next = data + width*height*3 + len(p.XMP)
		}
		put(uint16(entries))
		entry := func(tag, typ uint16, count, value uint32) { put(tag); put(typ); put(count); put(value) }
		const undefined, short, long = 7, 3, 4
		entry(256, long, 1, uint32(width))   // ImageWidth
		entry(257, long, 1, uint32(height))  // ImageLength
		entry(258, short, 3, uint32(data-6)) // BitsPerSample, at the offset
		entry(259, short, 1, 1)              // Compression: none
		entry(262, short, 1, 2)              // PhotometricInterpretation: RGB
		entry(273, long, 1, uint32(data))    // StripOffsets
		if p.Orientation != 0 {
			entry(274, short, 1, uint32(p.Orientation)) // Orientation
		}
		entry(277, short, 1, 3)                     // SamplesPerPixel
		entry(278, long, 1, uint32(height))         // RowsPerStrip
		entry(279, long, 1, uint32(width*height*3)) // StripByteCounts
		entry(284, short, 1, 1)                     // PlanarConfiguration: chunky
		if p.XMP != nil {
			entry(700, undefined, uint32(len(p.XMP)), uint32(data+width*height*3)) // XMP, after the pixels
		}
		put(uint32(next))
		put([3]uint16{8, 8, 8}) // BitsPerSample's values
		for y := b.Min.Y; y < b.Max.Y; y++ {
			for x := 0; x < width; x++ {
				c := p.Img.RGBAAt(b.Min.X+x, y)
				buf.Write([]byte{c.R, c.G, c.B})
			}
		}
		buf.Write(p.XMP)
	}
	return buf.Bytes()
}
