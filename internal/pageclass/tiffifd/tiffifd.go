// Package tiffifd reads the page sizes of a TIFF from its image file
// directories (IFDs) alone, without reading its image data: the header (8
// bytes, 16 for a BigTIFF), then for each directory of the main chain its
// entry count, its entries (ImageWidth and ImageLength are kept, and
// whether it has an Orientation tag and where its XMP packet lies) and the
// offset of the next one. A file of any size is read in a few KiB a
// directory, at the offsets the file gives, through an io.ReaderAt.
//
// The main chain is the TIFF's pages as libtiff (and so libvips) counts
// them; SubIFDs (reduced levels some pyramids keep beside a page) are not
// pages and are not followed. Any doubt is an error, never a guess: a
// file that is not TIFF, a directory or value beyond the end of the file,
// a chain that loops or is longer than MaxIFDs, a page without a positive
// width and length or without the offsets of its data (StripOffsets or
// TileOffsets), which libtiff refuses to read.
package tiffifd

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
)

// MaxIFDs bounds the directories followed: a chain longer than that is an
// error (ErrMalformed), as is one that comes back to a directory read
// before.
const MaxIFDs = 10000

// maxEntries bounds a directory's entry count: a classic TIFF's count is
// 16 bits, a BigTIFF's 64, which libtiff bounds to the same.
const maxEntries = 1 << 16

// chunk is how many entries are read at once (3 or 5 KiB).
const chunk = 256

var (
	// ErrNotTIFF is returned for a file whose header is not a TIFF's
	// (II or MM, then 42, or 43 for a BigTIFF).
	ErrNotTIFF = errors.New("not a TIFF")
	// ErrMalformed is returned for a TIFF whose directories cannot be
	// followed to the end: truncated, looping, or holding a page without
	// a size.
	ErrMalformed = errors.New("malformed TIFF directories")
)

// Size is a page's ImageWidth and ImageLength, in pixels.
type Size struct{ W, H int }

// Dir is what Dirs reads of a directory: its page's size, whether it has
// an Orientation tag (274), and where its XMP packet (tag 700, of type
// BYTE or UNDEFINED) lies in the file: XMPCount bytes from XMPOffset, none
// for a count of 0. The packet's place is as the file gives it; its bytes
// are not read.
type Dir struct {
	Size
	Orientation         bool
	XMPOffset, XMPCount uint64
	// Reduced: the directory's NewSubfileType (tag 254) says it is a
	// reduced-resolution version of another image (bit 0): a pyramid's
	// level or a thumbnail, not a page of its own.
	Reduced bool
}

// tag numbers and field types read here.
const (
	tagImageWidth   = 256
	tagImageLength  = 257
	tagStripOffsets = 273
	tagTileOffsets  = 324
	tagOrientation  = 274
	tagXMP          = 700
	tagSubfileType  = 254
	typeByte        = 1
	typeUndefined   = 7
	typeShort       = 3
	typeLong        = 4
	typeLong8       = 16
)

// Sizes returns the size of every page of the TIFF r, in order (the
// directories of its main chain).
func Sizes(r io.ReaderAt) ([]Size, error) {
	dirs, err := Dirs(r)
	if err != nil {
		return nil, err
	}
	sizes := make([]Size, len(dirs))
	for i, d := range dirs {
		sizes[i] = d.Size
	}
	return sizes, nil
}

// Dirs returns the directories of the TIFF r's main chain, its pages, in
// order: each one's size, Orientation tag and XMP packet (Dir).
func Dirs(r io.ReaderAt) ([]Dir, error) {
	var hdr [16]byte
	n, err := r.ReadAt(hdr[:], 0)
	if n < 8 {
		if err == nil || err == io.EOF {
			err = ErrNotTIFF
		}
		return nil, err
	}
	w := walker{r: r}
	switch string(hdr[:2]) {
	case "II":
		w.order = binary.LittleEndian
	case "MM":
		w.order = binary.BigEndian
	default:
		return nil, ErrNotTIFF
	}
	var off uint64
	switch w.order.Uint16(hdr[2:]) {
	case 42:
		off = uint64(w.order.Uint32(hdr[4:]))
	case 43:
		// BigTIFF: offsets of 8 bytes, then 2 bytes of 0.
		if n < 16 || w.order.Uint16(hdr[4:]) != 8 || w.order.Uint16(hdr[6:]) != 0 {
			return nil, ErrNotTIFF
		}
		w.big = true
		off = w.order.Uint64(hdr[8:])
	default:
		return nil, ErrNotTIFF
	}
	if off == 0 {
		return nil, fmt.Errorf("%w: no directory", ErrMalformed)
	}
	var dirs []Dir
	seen := map[uint64]bool{}
	for off != 0 {
		if len(dirs) == MaxIFDs {
			return nil, fmt.Errorf("%w: more than %d directories", ErrMalformed, MaxIFDs)
		}
		if seen[off] {
			return nil, fmt.Errorf("%w: directory %d at offset %d comes back to one read before", ErrMalformed, len(dirs)+1, off)
		}
		seen[off] = true
		d, next, err := w.dir(off)
		if err != nil {
			return nil, fmt.Errorf("directory %d at offset %d: %w", len(dirs)+1, off, err)
		}
		dirs = append(dirs, d)
		off = next
	}
	return dirs, nil
}

// walker reads the directories of one TIFF.
type walker struct {
	r     io.ReaderAt
	order binary.ByteOrder
	big   bool // BigTIFF: 8-byte counts and offsets, 20-byte entries
	buf   [chunk * 20]byte
}

// read fills b from offset off: a short read is ErrMalformed (the file
// ends first).
func (w *walker) read(b []byte, off uint64) error {
	if off > 1<<62 {
		return fmt.Errorf("%w: offset %d beyond the file", ErrMalformed, off)
	}
	n, err := w.r.ReadAt(b, int64(off))
	if n == len(b) {
		return nil
	}
	if err == nil || err == io.EOF || err == io.ErrUnexpectedEOF {
		return fmt.Errorf("%w: %d bytes at offset %d beyond the end of the file", ErrMalformed, len(b), off)
	}
	return err
}

// dir reads the directory at off: its page's size, Orientation and XMP
// (Dir), and the next directory's offset (0: the last).
func (w *walker) dir(off uint64) (Dir, uint64, error) {
	countSize, entrySize, offSize := uint64(2), uint64(12), uint64(4)
	if w.big {
		countSize, entrySize, offSize = 8, 20, 8
	}
	b := w.buf[:countSize]
	if err := w.read(b, off); err != nil {
		return Dir{}, 0, err
	}
	var count uint64
	if w.big {
		count = w.order.Uint64(b)
	} else {
		count = uint64(w.order.Uint16(b))
	}
	if count == 0 || count > maxEntries {
		return Dir{}, 0, fmt.Errorf("%w: %d entries", ErrMalformed, count)
	}
	var d Dir
	s := &d.Size
	var data bool // StripOffsets or TileOffsets: libtiff reads no page without
	// libtiff reads the first entry of a tag and ignores its later
	// duplicates, valid or not: so does the walker, for the tags it reads.
	seen := make(map[uint16]bool, 6)
	at := off + countSize
	for left := count; left > 0; {
		k := min(left, chunk)
		b := w.buf[:k*entrySize]
		if err := w.read(b, at); err != nil {
			return Dir{}, 0, err
		}
		for e := b; len(e) > 0; e = e[entrySize:] {
			switch tag := w.order.Uint16(e); tag {
			case tagImageWidth, tagImageLength, tagStripOffsets, tagTileOffsets, tagOrientation, tagXMP:
				if seen[tag] {
					continue
				}
				seen[tag] = true
			}
			w.meta(e[:entrySize], at+uint64(len(b)-len(e)), &d)
			if err := w.entry(e[:entrySize], s); err != nil {
				return Dir{}, 0, err
			}
			ok, err := w.offsets(e[:entrySize])
			if err != nil {
				return Dir{}, 0, err
			}
			data = data || ok
		}
		at += k * entrySize
		left -= k
	}
	if s.W <= 0 || s.H <= 0 {
		return Dir{}, 0, fmt.Errorf("%w: page of %d×%d pixels", ErrMalformed, s.W, s.H)
	}
	if !data {
		return Dir{}, 0, fmt.Errorf("%w: page without StripOffsets or TileOffsets", ErrMalformed)
	}
	b = w.buf[:offSize]
	if err := w.read(b, at); err != nil {
		return Dir{}, 0, err
	}
	if w.big {
		return d, w.order.Uint64(b), nil
	}
	return d, uint64(w.order.Uint32(b)), nil
}

// meta notes in d the entry e, read from offset at, where it is the
// Orientation tag or an XMP packet of BYTE or UNDEFINED values (the
// packet's place: in the entry itself when it fits there).
func (w *walker) meta(e []byte, at uint64, d *Dir) {
	switch w.order.Uint16(e) {
	case tagSubfileType:
		// One LONG (or SHORT) value, left-justified in the value field.
		v := e[8:]
		if w.big {
			v = e[12:]
		}
		switch w.order.Uint16(e[2:]) {
		case typeLong:
			d.Reduced = w.order.Uint32(v)&1 != 0
		case typeShort:
			d.Reduced = w.order.Uint16(v)&1 != 0
		}
	case tagOrientation:
		d.Orientation = true
	case tagXMP:
		if typ := w.order.Uint16(e[2:]); typ != typeByte && typ != typeUndefined {
			return
		}
		if w.big {
			d.XMPCount, d.XMPOffset = w.order.Uint64(e[4:]), w.order.Uint64(e[12:])
			if d.XMPCount <= 8 {
				d.XMPOffset = at + 12
			}
		} else {
			d.XMPCount, d.XMPOffset = uint64(w.order.Uint32(e[4:])), uint64(w.order.Uint32(e[8:]))
			if d.XMPCount <= 4 {
				d.XMPOffset = at + 8
			}
		}
	}
}

// offsets reports whether e is StripOffsets or TileOffsets as libtiff
// reads them: of a type it takes for them, at least one value, its values
// within the file (the last byte is read).
func (w *walker) offsets(e []byte) (bool, error) {
	if tag := w.order.Uint16(e); tag != tagStripOffsets && tag != tagTileOffsets {
		return false, nil
	}
	var size uint64
	switch w.order.Uint16(e[2:]) {
	case typeShort:
		size = 2
	case typeLong:
		size = 4
	case typeLong8:
		if !w.big {
			return false, nil
		}
		size = 8
	default:
		return false, nil
	}
	var count, at, inline uint64
	if w.big {
		count, at, inline = w.order.Uint64(e[4:]), w.order.Uint64(e[12:]), 8
	} else {
		count, at, inline = uint64(w.order.Uint32(e[4:])), uint64(w.order.Uint32(e[8:])), 4
	}
	if count == 0 || count > 1<<40 {
		return false, nil
	}
	if count*size <= inline {
		return true, nil
	}
	if at > 1<<62 {
		return false, fmt.Errorf("%w: offsets at %d beyond the file", ErrMalformed, at)
	}
	var last [1]byte
	return true, w.read(last[:], at+count*size-1)
}

// entry keeps e's value in s where e is ImageWidth or ImageLength: one
// SHORT, LONG or (BigTIFF) LONG8, held in the entry itself.
func (w *walker) entry(e []byte, s *Size) error {
	tag := w.order.Uint16(e)
	if tag != tagImageWidth && tag != tagImageLength {
		return nil
	}
	typ := w.order.Uint16(e[2:])
	var count uint64
	val := e[8:]
	if w.big {
		count = w.order.Uint64(e[4:])
		val = e[12:]
	} else {
		count = uint64(w.order.Uint32(e[4:]))
	}
	if count != 1 {
		return fmt.Errorf("%w: tag %d has %d values", ErrMalformed, tag, count)
	}
	var v uint64
	switch {
	case typ == typeShort:
		v = uint64(w.order.Uint16(val))
	case typ == typeLong:
		v = uint64(w.order.Uint32(val))
	case typ == typeLong8 && w.big:
		v = w.order.Uint64(val)
	default:
		return fmt.Errorf("%w: tag %d of type %d", ErrMalformed, tag, typ)
	}
	if v > 1<<31-1 {
		return fmt.Errorf("%w: tag %d is %d", ErrMalformed, tag, v)
	}
	if tag == tagImageWidth {
		s.W = int(v)
	} else {
		s.H = int(v)
	}
	return nil
}
