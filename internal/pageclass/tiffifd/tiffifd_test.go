package tiffifd_test

import (
	"bytes"
	"encoding/binary"
	"errors"
	"image"
	"io"
	"slices"
	"testing"

	"archivekit/internal/pageclass/imageio/hostile"
	"archivekit/internal/pageclass/tiffifd"
)

// grey returns blank grey pages of the sizes given (w, h, w, h, ...).
func grey(sides ...int) []*image.Gray {
	var pages []*image.Gray
	for i := 0; i+1 < len(sides); i += 2 {
		pages = append(pages, image.NewGray(image.Rect(0, 0, sides[i], sides[i+1])))
	}
	return pages
}

// countingReader is a file read at offsets, counting the bytes read.
type countingReader struct {
	r    *bytes.Reader
	read int
}

func (c *countingReader) ReadAt(b []byte, off int64) (int, error) {
	n, err := c.r.ReadAt(b, off)
	c.read += n
	return n, err
}

// TestSizes: the sizes of every page of TIFFs of either byte order, their
// directories before or after their pixels (libtiff's layout), classic or
// BigTIFF, are read from the directories alone.
func TestSizes(t *testing.T) {
	be, le := binary.BigEndian, binary.LittleEndian
	scan := grey(40, 60, 60, 40, 30, 30)
	want := []tiffifd.Size{{40, 60}, {60, 40}, {30, 30}}
	for _, tc := range []struct {
		name   string
		layout hostile.TIFFLayout
	}{
		{"II, directories first", hostile.TIFFLayout{Order: le}},
		{"II, directories after the pixels", hostile.TIFFLayout{Order: le, DirsAfter: true}},
		{"MM, directories first", hostile.TIFFLayout{Order: be}},
		{"MM, directories after the pixels", hostile.TIFFLayout{Order: be, DirsAfter: true}},
		{"BigTIFF II", hostile.TIFFLayout{Order: le, Big: true, DirsAfter: true}},
		{"BigTIFF MM", hostile.TIFFLayout{Order: be, Big: true}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			data := hostile.GrayTIFFAs(tc.layout, scan...)
			r := &countingReader{r: bytes.NewReader(data)}
			got, err := tiffifd.Sizes(r)
			if err != nil || !slices.Equal(got, want) {
				t.Fatalf("Sizes = %v, %v; want %v", got, err, want)
			}
			// The directories and the header, whose first 16 bytes are read
			// (a BigTIFF's size).
			if pixels := 40*60 + 60*40 + 30*30; r.read > len(data)-pixels+8 {
				t.Errorf("read %d bytes of %d, %d of them pixels: want the header and directories alone", r.read, len(data), pixels)
			}
		})
	}
}

// TestSizesLong8: a BigTIFF's width and length may be LONG8 values.
func TestSizesLong8(t *testing.T) {
	le := binary.LittleEndian
	data := hostile.GrayTIFFAs(hostile.TIFFLayout{Big: true}, grey(70000, 1)...)
	e := int(le.Uint64(data[8:])) + 8 // the first entry: ImageWidth, a LONG
	if le.Uint16(data[e:]) != 256 {
		t.Fatal("the first entry is not ImageWidth")
	}
	le.PutUint16(data[e+2:], 16)
	le.PutUint64(data[e+12:], 70000)
	got, err := tiffifd.Sizes(bytes.NewReader(data))
	if err != nil || !slices.Equal(got, []tiffifd.Size{{70000, 1}}) {
		t.Fatalf("Sizes = %v, %v; want [{70000 1}]", got, err)
	}
}

// chain returns a little-endian TIFF of n directories of three entries
// (ImageWidth, ImageLength and StripOffsets, SHORTs), one after the other
// from offset 8, no pixels; the last directory's next offset is last.
func chain(n int, last uint32) []byte {
	le := binary.LittleEndian
	b := []byte("II*\x00\x08\x00\x00\x00")
	for i := range n {
		b = le.AppendUint16(b, 3)
		for _, tag := range []uint16{256, 257, 273} {
			b = le.AppendUint16(b, tag)
			b = le.AppendUint16(b, 3)
			b = le.AppendUint32(b, 1)
			b = le.AppendUint32(b, 10)
		}
		next := uint32(len(b) + 4)
		if i == n-1 {
			next = last
		}
		b = le.AppendUint32(b, next)
	}
	return b
}

// TestSizesRefuses: what the directories cannot tell is an error, never
// a count: not a TIFF, a truncated file, a directory beyond the end, a
// loop, a chain over MaxIFDs, a page without a size.
func TestSizesRefuses(t *testing.T) {
	three := hostile.GrayTIFFAs(hostile.TIFFLayout{DirsAfter: true}, grey(40, 60, 60, 40, 30, 30)...)
	noLength := chain(1, 0)
	binary.LittleEndian.PutUint16(noLength[8+2+12:], 258) // ImageLength becomes BitsPerSample
	noData := chain(1, 0)
	binary.LittleEndian.PutUint16(noData[8+2+24:], 279) // StripOffsets becomes StripByteCounts
	farData := chain(1, 0)
	binary.LittleEndian.PutUint32(farData[8+2+24+4:], 100)   // 100 StripOffsets,
	binary.LittleEndian.PutUint32(farData[8+2+24+8:], 1<<20) // at 1 MiB
	for _, tc := range []struct {
		name string
		data []byte
		want error
	}{
		{"empty", nil, tiffifd.ErrNotTIFF},
		{"PNG", hostile.PNG(4, 4), tiffifd.ErrNotTIFF},
		{"header alone", []byte("II*\x00"), tiffifd.ErrNotTIFF},
		{"no directory", []byte("II*\x00\x00\x00\x00\x00"), tiffifd.ErrMalformed},
		{"truncated in the last directory", three[:len(three)-10], tiffifd.ErrMalformed},
		{"truncated before the first directory", three[:100], tiffifd.ErrMalformed},
		{"next directory beyond the end", chain(2, 1<<30), tiffifd.ErrMalformed},
		{"loop to the first directory", chain(3, 8), tiffifd.ErrMalformed},
		{"loop to itself", chain(1, 8), tiffifd.ErrMalformed},
		{"longer than MaxIFDs", chain(tiffifd.MaxIFDs+1, 0), tiffifd.ErrMalformed},
		{"no ImageLength", noLength, tiffifd.ErrMalformed},
		{"no StripOffsets", noData, tiffifd.ErrMalformed},
		{"StripOffsets beyond the end", farData, tiffifd.ErrMalformed},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := tiffifd.Sizes(bytes.NewReader(tc.data))
			if !errors.Is(err, tc.want) {
				t.Fatalf("Sizes = %v, %v; want %v", got, err, tc.want)
			}
		})
	}
	if got, err := tiffifd.Sizes(bytes.NewReader(chain(tiffifd.MaxIFDs, 0))); err != nil || len(got) != tiffifd.MaxIFDs {
		t.Errorf("a chain of MaxIFDs: %d sizes, %v; want them all", len(got), err)
	}
}

// failingReader fails every read past its first n bytes with err.
type failingReader struct {
	data []byte
	err  error
}

func (f failingReader) ReadAt(b []byte, off int64) (int, error) {
	if off+int64(len(b)) > int64(len(f.data)) {
		return 0, f.err
	}
	return copy(b, f.data[off:]), nil
}

// TestSizesReadError: a read error of the file is returned as it is.
func TestSizesReadError(t *testing.T) {
	boom := errors.New("disk on fire")
	data := hostile.GrayTIFF(grey(40, 60)...)
	_, err := tiffifd.Sizes(failingReader{data[:20], boom})
	if !errors.Is(err, boom) {
		t.Fatalf("Sizes = %v, want %v", err, boom)
	}
	var _ io.ReaderAt = failingReader{}
}

// TestSizesDuplicateTags: libtiff reads the first entry of a tag and
// ignores its later duplicates, valid or not, and so does Sizes. A
// duplicate ImageWidth found by FuzzTIFFPages made the walker read a
// page of 12336×6 where libvips reads 8×6, so the two counted the pages of
// a pyramid differently.
func TestSizesDuplicateTags(t *testing.T) {
	le := binary.LittleEndian
	type entry struct {
		tag, typ   uint16
		count, val uint32
	}
	dir := func(entries ...entry) []byte {
		b := []byte("II*\x00\x08\x00\x00\x00")
		b = le.AppendUint16(b, uint16(len(entries)))
		for _, e := range entries {
			b = le.AppendUint16(b, e.tag)
			b = le.AppendUint16(b, e.typ)
			b = le.AppendUint32(b, e.count)
			b = le.AppendUint32(b, e.val)
		}
		return le.AppendUint32(b, 0)
	}
	width, length, strips := entry{256, 3, 1, 8}, entry{257, 4, 1, 6}, entry{273, 3, 1, 0}
	for _, tc := range []struct {
		name    string
		entries []entry
	}{
		{"later ImageWidth", []entry{width, length, strips, {256, 4, 1, 12336}}},
		{"later ImageLength of a bad type", []entry{width, length, strips, {257, 12336, 1, 9}}},
		{"later ImageWidth with two values", []entry{width, {256, 3, 2, 9}, length, strips}},
		{"later StripOffsets beyond the end", []entry{width, length, strips, {273, 4, 100, 1 << 20}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := tiffifd.Sizes(bytes.NewReader(dir(tc.entries...)))
			if err != nil || !slices.Equal(got, []tiffifd.Size{{8, 6}}) {
				t.Fatalf("Sizes = %v, %v; want [{8 6}]", got, err)
			}
		})
	}
	// The first entry decides: a first StripOffsets beyond the end is not
	// mended by a later good one.
	data := dir(width, length, entry{273, 4, 100, 1 << 20}, strips)
	if got, err := tiffifd.Sizes(bytes.NewReader(data)); !errors.Is(err, tiffifd.ErrMalformed) {
		t.Fatalf("Sizes = %v, %v; want ErrMalformed", got, err)
	}
}

// TestDirs: each page's directory says whether it has an Orientation tag
// and where its XMP packet lies; a page without either has none.
func TestDirs(t *testing.T) {
	page := image.NewRGBA(image.Rect(0, 0, 8, 4))
	long := []byte("<x:xmpmeta>tiff:Orientation=\"6\"</x:xmpmeta>")
	data := hostile.RGBTIFFPages(
		hostile.RGBPage{Img: page, XMP: long},
		hostile.RGBPage{Img: page, Orientation: 3},
		hostile.RGBPage{Img: page},
	)
	dirs, err := tiffifd.Dirs(bytes.NewReader(data))
	if err != nil || len(dirs) != 3 {
		t.Fatalf("%d directories, %v", len(dirs), err)
	}
	xmp := func(d tiffifd.Dir) string {
		if d.XMPCount == 0 {
			return ""
		}
		return string(data[d.XMPOffset : d.XMPOffset+d.XMPCount])
	}
	for i, want := range []struct {
		orientation bool
		xmp         string
	}{{false, string(long)}, {true, ""}, {false, ""}} {
		if d := dirs[i]; d.Orientation != want.orientation || xmp(d) != want.xmp || d.Size != (tiffifd.Size{W: 8, H: 4}) {
			t.Errorf("page %d: %+v (xmp %q), want orientation %v, xmp %q", i+1, d, xmp(d), want.orientation, want.xmp)
		}
	}
}
