package imageio

import (
	"bytes"
	"errors"
	"fmt"

	"github.com/davidbyttow/govips/v2/vips"

	"archivekit/bindings/libvips"
	"archivekit/internal/pageclass/tiffifd"
)

// decodeBigTIFF opens a BigTIFF (a TIFF with 64-bit offsets, which
// scanners and libvips write for masters over 4 GiB): its pages and
// their sizes come from its directories, checked against MaxPixels
// before any pixel is read, and counted as for a TIFF
// (ClassifiedTIFFPages). Each page is turned by its own directory's XMP
// where it has no Orientation tag, as a classic TIFF's pages are
// (tiffTurns).
func (o Options) decodeBigTIFF(data []byte, name string) (*Doc, error) {
	dirs, err := tiffifd.Dirs(bytes.NewReader(data))
	if err != nil {
		return nil, &Error{Name: name, Err: fmt.Errorf("cannot read header: %v", err)}
	}
	if len(dirs) == 0 {
		return nil, &Error{Name: name, Err: errors.New("cannot read header: BigTIFF without a page")}
	}
	sizes := make([]tiffifd.Size, len(dirs))
	for i, dir := range dirs {
		sizes[i] = dir.Size
	}
	d := &Doc{name: name, data: data, typ: vips.ImageTypeTIFF, pages: 1, opts: o, bigTIFF: sizes, turns: dirTurns(dirs, data)}
	if err := o.checkPixels(int64(sizes[0].W), int64(sizes[0].H)); err != nil {
		return nil, &Error{Name: name, Err: err}
	}
	if len(sizes) > 1 {
		d.pages = ClassifiedTIFFPages(len(dirs), reducedFlags(dirs))
	}
	return d, nil
}

// loadBigTIFF reads page (0-based) of a BigTIFF as libvips needs its
// lines, reduced within the decode budget when over it (libvips.Reduce),
// into a classic TIFF that govips opens.
func (d *Doc) loadBigTIFF(page int) (*vips.ImageRef, error) {
	if page >= len(d.bigTIFF) {
		return nil, fmt.Errorf("%w: %d of %d", ErrPageRange, page+1, len(d.bigTIFF))
	}
	w, h := int64(d.bigTIFF[page].W), int64(d.bigTIFF[page].H)
	if err := d.opts.checkPixels(w, h); err != nil {
		return nil, err
	}
	factor := 1.0
	if budget := d.opts.MaxDecodePixels; budget > 0 && w*h > budget {
		factor = reduceFactor(w, h, budget)
	}
	classic, msg := libvips.Reduce(d.data, fmt.Sprintf("page=%d", page), factor)
	if classic == nil {
		return nil, fmt.Errorf("cannot read BigTIFF page %d: %s", page+1, oneLine(msg, "corrupt TIFF data"))
	}
	ref, err := vips.LoadImageFromBuffer(classic, vips.NewImportParams())
	if err != nil {
		return nil, vipsErr("cannot read the BigTIFF page", err, "")
	}
	return ref, nil
}
