package imageio

import (
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"strings"

	"archivekit/bindings/libvips"
	"archivekit/bindings/pdfium"
	"archivekit/internal/pageclass/pdflabel"

	"github.com/davidbyttow/govips/v2/vips"
)

// A PDF's page tree lists its pages in order. Where an entry of it is
// broken (its object missing, or not a dictionary), poppler skips it when
// it numbers the pages, while its page count (the tree's /Count) still
// includes it: libvips asked for page 2 of 3 got page 3, and page 3
// failed ("unable to load page 2"), so that page 3 was classified as
// page 2 without a word. PDFium keeps each page at its place and fails
// the broken one. checkPageTree reads the tree (pdflabel.PageObjects)
// when poppler is to render a PDF and, where a page is broken, renders
// the document with PDFium when it is loaded, else maps each page to
// poppler's index of it and fails the broken ones.

// errBrokenPage is the error of a broken page that poppler was to render.
var errBrokenPage = errors.New("the PDF's page tree has no page object for it (missing or not a dictionary); " +
	"poppler cannot render it")

// pdfiumLoaded is pdfium.Loaded (a variable for tests of a process
// without PDFium).
var pdfiumLoaded = pdfium.Loaded

// checkPageTree checks the page tree of a PDF that poppler is to render
// (d.data, mended for poppler, indexed as pf, or openErr; orig as it
// came). A tree that cannot be read, or has no broken page, changes
// nothing.
func (d *Doc) checkPageTree(pf *pdflabel.File, openErr error, orig []byte) {
	if openErr != nil {
		return
	}
	count, broken, err := pf.PageObjects()
	if err != nil || len(broken) == 0 {
		return
	}
	d.broken = broken
	if pdfiumLoaded() != "" {
		if n, err := pdfiumPages(orig); err == nil && n >= 1 {
			d.data, d.pages, d.opts.Renderer = orig, n, RendererPDFium
			return
		}
	}
	d.pages = count
	d.popplerPages = make([]int, count)
	next, b := 0, 0
	for i := range d.popplerPages {
		if b < len(broken) && broken[b] == i+1 {
			d.popplerPages[i] = -1
			b++
			continue
		}
		d.popplerPages[i] = next
		next++
	}
}

// ErrCutImage is the error of a PDF page that draws a JPEG image cut short
// or not JPEG: poppler and PDFium would draw the part they have, the rest
// grey, without a word.
var ErrCutImage = errors.New("the page cannot be drawn whole")

// checkImages finds the pages of a PDF (indexed as pf, or openErr) that
// draw a JPEG cut short; they fail when rendered. A PDF whose tree cannot
// be followed here is left to its renderer.
func (d *Doc) checkImages(pf *pdflabel.File, openErr error) {
	if openErr != nil {
		return
	}
	pages, err := pf.PageJPEGs()
	if err != nil {
		return
	}
	d.cut = pdflabel.CutPages(pages)
	for num, js := range pages {
		for _, j := range js {
			if j.Fault == "" && j.Data != nil {
				if d.jpegs == nil {
					d.jpegs = map[int][]pdflabel.JPEG{}
				}
				d.jpegs[num] = append(d.jpegs[num], j)
			}
		}
	}
}

// checkJPEGs fails page i (0-based) of a PDF when a JPEG image it draws is
// damaged: decoded at an eighth of its size (which reads all of its coded
// data, cheaply), it gives the decoder's error or warning, as the same
// JPEG as a file of its own would. Poppler and PDFium draw such an image
// half garbled without a word, and the page was classified from it.
func (d *Doc) checkJPEGs(i int) error {
	for _, j := range d.jpegs[i+1] {
		if msg := damagedJPEG(jpegWithoutHeaderJunk(j.Data)); msg != "" {
			return fmt.Errorf("%w: its image /%s is damaged JPEG data (%s)", ErrCutImage, j.Name, msg)
		}
	}
	return nil
}

// damagedJPEG says what the decoder reports of the JPEG data (decoded at
// an eighth of its size, failing on its first warning); "" when nothing.
func damagedJPEG(data []byte) string {
	vipsCalls.RLock()
	defer vipsCalls.RUnlock()
	p := vips.NewImportParams() // fail on the first warning
	p.JpegShrinkFactor.Set(8)
	ref, err := vips.LoadImageFromBuffer(data, p)
	if err != nil {
		return oneLine(vipsErr("header", err, "").Error(), "corrupt JPEG data")
	}
	defer ref.Close()
	buf, msg := libvips.WriteToMemory(ref)
	if buf == nil {
		return oneLine(msg, "corrupt JPEG data")
	}
	buf.Close()
	return ""
}

// BrokenPages returns the 1-based numbers of the pages of a PDF whose
// page object is missing or not a dictionary, found when poppler was to
// render it (Options.OnBrokenPages says what is done); nil for none, and
// for a PDF that PDFium was asked to render.
func (d *Doc) BrokenPages() []int { return d.broken }

// brokenErr says which pages of d are broken and what is done about it:
// rendered with PDFium, or the broken pages failed.
func (d *Doc) brokenErr(withPDFium bool) error {
	nums := make([]string, len(d.broken))
	for i, n := range d.broken {
		nums[i] = strconv.Itoa(n)
	}
	which, it := "page "+nums[0], "it fails"
	if len(nums) > 1 {
		which, it = "pages "+strings.Join(nums, ", "), "they fail"
	}
	if withPDFium {
		return fmt.Errorf("%s of the PDF cannot be read (page object missing or not a dictionary): "+
			"rendered with PDFium: poppler would number the pages after it wrongly", which)
	}
	return fmt.Errorf("%s of the PDF cannot be read (page object missing or not a dictionary): "+
		"%s, and poppler renders the others under their own numbers (--pdf-renderer %s, PDF_RENDERER=%s, renders them with PDFium)",
		which, it, RendererPDFium, RendererPDFium)
}

// tellBroken tells Options.OnBrokenPages (else the log) about d's broken
// pages, if it has any, and whether PDFium renders it.
func (d *Doc) tellBroken(withPDFium bool) {
	if d.broken == nil {
		return
	}
	err := d.brokenErr(withPDFium)
	if d.opts.OnBrokenPages != nil {
		d.opts.OnBrokenPages(d.name, err)
		return
	}
	slog.Warn(err.Error(), "file", d.name)
}
