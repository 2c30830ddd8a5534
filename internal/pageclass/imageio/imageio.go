// Package imageio decodes page images into 8-bit RGB pixels for the page
// classifier, through libvips (govips).
//
// Supported inputs are PNG, JPEG, TIFF, WebP, JPEG 2000 (the JP2 file
// format, the masters of many libraries and IIIF image servers, and bare
// codestreams) and PDF.
// Every page becomes an
// Image of W×H pixels with 3 interleaved channels (RGB, row-major, "HWC").
// The conversion to RGB is, in order:
//
//  1. the header is read and the pixel count checked against
//     Options.MaxPixels before any pixel is decoded (decompression bombs are
//     refused with ErrTooManyPixels);
//  2. the EXIF orientation tag, when present, is applied (autorotate);
//     so is one written only in XMP or in ImageMagick's raw EXIF profile
//     of a PNG, which libvips does not read (metaOrientation);
//  3. the colour space is converted to sRGB: grey (1 band) becomes 3 equal
//     bands, CMYK and other spaces go through libvips' colour conversion,
//     and 16-bit samples are scaled to 8 bits by keeping the high byte
//     (v >> 8, so 65535 → 255 and 0x8000 → 128);
//  4. an alpha band is composited on white (out = c·a + 255·(1−a));
//  5. the samples are cast to 8 bits.
//
// PDF pages are rendered by libvips through poppler at Options.DPI, 150 by
// default: an A4 page becomes 1240×1754 pixels, more than five times the
// 224–384 pixel input side of the classifier models while costing a quarter
// of a 300 dpi rendering. A TIFF with several pages (a multi-page scan) has
// them all, numbered from 1 like a PDF's, except a pyramidal TIFF (each page
// half the size of the one before: one image at reduced resolutions), which
// is read as its first, full-size page. WebP files with several frames are
// read as one image, their first frame, as PIL's Image.open does.
//
// Memory follows the model's needs, not the input's pixel count. A page is
// decoded to at most Options.MaxDecodePixels (16,777,216 = 4096×4096 by
// default, more than ten times the side of the largest model input): a
// larger image is shrunk while it is decoded (libvips thumbnail: the JPEG
// and WebP decoders shrink on load, PNG and TIFF are read as a stream of
// lines through a box shrink and a Lanczos-3 reduction, so the full-size
// pixels never exist in memory), and a PDF page too large at Options.DPI is
// rendered at the highest whole DPI that fits the budget. Pages within the
// budget (every scan up to A4 at 400 dpi) are decoded exactly as before.
// The models then resize every page to their 224–384 pixel input, so a
// page shrunk first differs from one resized in a single step only by
// rounding (measured in the classify package's tests). Finally, decoding
// and the caller's use of the pixels (Doc.Use) take slots of a
// process-wide budget of MaxPixelsInFlight pixels, so that any number of
// concurrent requests or pipeline workers holds at most that many decoded
// pixels at once.
//
// The decoders are C libraries. With Options.Isolation they run in child
// processes (Isolation, ServeIfWorker): a file that crashes or hangs one
// of them fails with ErrDecoderCrashed or ErrDecodeTimeout, naming the
// file, instead of ending or stalling the calling program; the pixels are
// the same.
//
// The Python reference tool opens pages with PIL as
// Image.open(path).convert("RGB"). It differs from this package in three
// ways: PIL ignores the EXIF orientation (a phone photo tagged "rotate 90°"
// reaches the model sideways, here it arrives upright); PIL's convert drops
// the alpha band instead of compositing it (fully transparent pixels keep
// whatever colour they store, often black, here they become white); and PIL
// clips 16-bit grey ("I;16") to 255 instead of scaling it (a 16-bit grey
// scan turns almost white, here it keeps its tones). 16-bit RGB is read by
// PIL as the high byte, the same as here. PIL refuses images over
// 178,956,970 pixels (twice Image.MAX_IMAGE_PIXELS) with
// DecompressionBombError; DefaultOptions uses the same cap.
package imageio

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"runtime/debug"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/davidbyttow/govips/v2/vips"

	"archivekit/bindings/libvips"
	"archivekit/bindings/pdfium"
	"archivekit/internal/filekind"
	"archivekit/internal/pageclass/pdflabel"
	"archivekit/internal/pageclass/tiffifd"
	"archivekit/internal/regularfile"
)

// DefaultDPI is the resolution PDF pages are rendered at by default.
const DefaultDPI = 150

// DefaultMaxPixels is the default decompression-bomb cap: the pixel count
// (width × height) above which an image is refused without being decoded.
// It equals PIL's DecompressionBombError threshold, 2 × 89,478,485.
const DefaultMaxPixels = 178_956_970

// Options controls decoding.
type Options struct {
	// DPI is the resolution PDF pages are rendered at; 0 means DefaultDPI.
	DPI int
	// MaxPixels is the largest accepted width × height of one page;
	// 0 means DefaultMaxPixels.
	MaxPixels int64
	// MaxDecodePixels is the largest width × height a page is decoded
	// to: a larger image is shrunk while decoding (aspect kept) and a
	// larger PDF page rendered at a lower DPI. 0 means
	// DefaultMaxDecodePixels; a negative value decodes at full size.
	MaxDecodePixels int64
	// Renderer renders PDF pages: RendererPoppler (or "": libvips and
	// poppler) or RendererPDFium (LoadPDFium first).
	Renderer string
	// MaxPDFPagePixels is the largest width × height a PDF page is
	// rendered to (the lower of it and MaxDecodePixels applies): a larger
	// page is rendered at a lower DPI. Rendering costs CPU time in
	// proportion to the pixels, blank or not, so a page of a few bytes
	// could otherwise cost seconds. 0 means DefaultMaxPDFPagePixels; a
	// negative MaxDecodePixels turns it off too.
	MaxPDFPagePixels int64
	// MinSide, when > 0, lets a JPEG be decoded shrunk on load by its
	// decoder (DCT scaling by 2, 4 or 8, no resampling after) by the
	// largest factor that keeps both its sides at least MinSide pixels:
	// for a caller that resizes every page to at most MinSide a side
	// anyway (classify's UploadPage). A page still over MaxDecodePixels
	// is then reduced within it by libvips' reduce with a linear kernel
	// (reduceFactor; a TIFF that is no pyramid or a PNG that is not
	// interlaced: Doc.streams), cheaper than the thumbnail's Lanczos-3.
	// 0: pages are decoded at full size (within MaxDecodePixels, by the
	// thumbnail).
	MinSide int
	// OnLabelError, when set, is called by Decode with the document's name
	// when a PDF's page labels cannot be read (Doc.LabelError): its pages
	// are then numbered only, and the caller can say so in its log. It is
	// called from the goroutine that calls Decode, so possibly from
	// several at once.
	OnLabelError func(name string, err error)
	// OnBrokenPages, when set, is called by Decode with the document's
	// name and what is done about it when a PDF that poppler would render
	// has broken pages (Doc.BrokenPages): poppler would number the pages
	// after them wrongly, so the document is rendered with PDFium where
	// it is loaded, else those pages fail and the others keep their
	// numbers. Nil logs it with log/slog at Warn level. It is called from
	// the goroutine that calls Decode.
	OnBrokenPages func(name string, err error)
	// Isolation, when set, decodes in child processes (see Isolation): a
	// crash or a hang of a C decoder then fails the one file, naming it.
	// Nil decodes in this process.
	Isolation *Isolation
}

// DefaultMaxPDFPagePixels is the default render budget of one PDF page
// (2560×2560, 6.6 million pixels): an A3 page at 150 dpi (1754×2480)
// fits, and its short side is still more than six times the largest
// model input (384 pixels).
const DefaultMaxPDFPagePixels = 2560 * 2560

// fitDPI is the DPI at which a page of pixels pixels at dpi has about
// budget pixels (at least 1): the DPI a PDF page over its budget is
// rendered at, by poppler and by PDFium.
func fitDPI(dpi int, pixels, budget int64) int {
	return max(1, int(float64(dpi)*math.Sqrt(float64(budget)/float64(pixels))))
}

// pdfPageBudget is the most pixels a PDF page is rendered to: the lower of
// MaxDecodePixels and MaxPDFPagePixels (0 or less: no budget).
func (o Options) pdfPageBudget() int64 {
	if o.MaxDecodePixels <= 0 {
		return o.MaxDecodePixels
	}
	if o.MaxPDFPagePixels > 0 {
		return min(o.MaxDecodePixels, o.MaxPDFPagePixels)
	}
	return o.MaxDecodePixels
}

// DefaultMaxDecodePixels is the default pixel budget of one decoded page
// (4096×4096): larger images are shrunk while decoding and larger PDF pages
// rendered at a lower DPI.
const DefaultMaxDecodePixels = 1 << 24

// MaxPixelsInFlight is the process-wide number of decoded pixels that may
// exist at once in Doc.Page and Doc.Use: two pages at the full budget, or
// many small ones. A page larger than it waits until it is alone.
const MaxPixelsInFlight = 2 * DefaultMaxDecodePixels

// DefaultOptions are the options used by Open and Decode.
var DefaultOptions = Options{DPI: DefaultDPI, MaxPixels: DefaultMaxPixels, MaxDecodePixels: DefaultMaxDecodePixels, MaxPDFPagePixels: DefaultMaxPDFPagePixels}

// Extensions lists the file extensions (lower case, with the dot) that
// Supported accepts.
var Extensions = []string{".png", ".jpg", ".jpeg", ".tif", ".tiff", ".webp", ".jp2", ".j2k", ".j2c", ".pdf"}

// Errors that callers may test for with errors.Is.
var (
	// ErrUnsupportedFormat: the data is not PNG, JPEG, TIFF, WebP, JPEG 2000
	// or PDF.
	ErrUnsupportedFormat = errors.New("unsupported image format")
	// ErrTooManyPixels: the header announces more pixels than MaxPixels.
	ErrTooManyPixels = errors.New("image exceeds the pixel limit (decompression bomb)")
	// ErrPageRange: a page index outside 0..Pages()-1.
	ErrPageRange = errors.New("page out of range")
)

// Error is a decoding failure; its message names the file (and the page
// of a PDF) and the problem.
type Error struct {
	Name string // file path or upload name
	Page int    // 1-based page number of a PDF, 0 otherwise
	Err  error  // the problem
}

func (e *Error) Error() string {
	if e.Page > 0 {
		return fmt.Sprintf("%s: page %d: %v", e.Name, e.Page, e.Err)
	}
	return fmt.Sprintf("%s: %v", e.Name, e.Err)
}

// Unwrap returns the underlying problem.
func (e *Error) Unwrap() error { return e.Err }

// Image is one decoded page: 8-bit RGB samples, interleaved, row-major.
// len(Pix) == W*H*3.
type Image struct {
	Pix  []uint8
	W, H int
}

// At returns the RGB value of pixel (x, y).
func (m Image) At(x, y int) (r, g, b uint8) {
	i := (y*m.W + x) * 3
	return m.Pix[i], m.Pix[i+1], m.Pix[i+2]
}

// Doc is an opened input file: one page for an image, one page per PDF
// page or per page of a multi-page TIFF. Its methods may be called from
// several goroutines at once.
type Doc struct {
	name  string
	data  []byte
	typ   vips.ImageType
	pages int
	opts  Options
	// labels are a PDF's page labels (nil: none); labelErr why they could
	// not be read.
	labels   []string
	labelErr error
	// broken are the 1-based numbers of a PDF's pages whose page object
	// is missing or no dictionary (pdflabel.PageObjects), found when
	// poppler was to render it; nil for none. The Doc is then rendered by
	// PDFium (opts.Renderer), or by poppler through popplerPages.
	broken []int
	// popplerPages maps each page (0-based) of a PDF with broken pages
	// that poppler renders to poppler's index of it, -1 for a broken
	// page; nil when poppler's own numbering is used.
	popplerPages []int
	// cut says, for the 1-based pages of a PDF that draw a JPEG cut
	// short or not JPEG (pdflabel.CutPages), which image and what
	// is wrong; such a page fails (ErrCutImage). nil for none.
	cut map[int]string
	// jpegs are, for the 1-based pages of a PDF, the JPEG images each
	// draws whose data is whole (pdflabel.File.PageJPEGs): decoded small
	// before the page is rendered (checkJPEGs). nil for none.
	jpegs map[int][]pdflabel.JPEG
	// bigTIFF holds a BigTIFF's page sizes (read from its directories):
	// govips does not hand libvips a BigTIFF, so each page is read by
	// libvips itself into a classic TIFF within the decode budget (load).
	bigTIFF []tiffifd.Size
	// rendering is the time spent in open and decode, in nanoseconds.
	rendering atomic.Int64
	// orient is the turn (2–8, EXIF's numbers) that the file's XMP or
	// raw EXIF profile gives where libvips reads no orientation
	// (metaOrientation); 0 for none.
	orient int
	// turns are, for a TIFF of several pages, each page's turn from its
	// own directory's XMP (tiffTurns; where its directories cannot be
	// followed, the first page's only); nil for any other file.
	turns []int
	// isolated numbers a Doc read by a decoder process (Options.Isolation)
	// for its pages' requests; 0 for a Doc of this process.
	isolated uint64
}

// Supported reports whether path has one of the Extensions (any case).
func Supported(path string) bool {
	ext := strings.ToLower(filepath.Ext(path))
	for _, e := range Extensions {
		if ext == e {
			return true
		}
	}
	return false
}

// SniffLen is how many leading bytes Sniff looks at.
const SniffLen = 12

// Sniff names the format that data (a file's first SniffLen bytes or more)
// starts like, by its signature, as the extension pageclass collects it
// under (".png", ".jpg", ".tif", ".webp", ".jp2", ".j2k", ".pdf"), or "" for none of
// them.
// Decode goes by content the same way, whatever the file's name.
func Sniff(head []byte) string {
	return sniffExt[filekind.Of(head)]
}

// sniffExt is the extension Sniff gives each kind filekind.Of tells.
var sniffExt = map[string]string{
	filekind.PNG: ".png", filekind.JPEG: ".jpg", filekind.TIFF: ".tif", filekind.WebP: ".webp",
	filekind.JP2: ".jp2", filekind.J2C: ".j2k", filekind.PDF: ".pdf",
}

// IsPDF reports whether data starts like a PDF file ("%PDF-").
func IsPDF(data []byte) bool { return filekind.Of(data) == filekind.PDF }

// Open reads the file at path with DefaultOptions; see Options.Open.
func Open(path string) (*Doc, error) { return DefaultOptions.Open(path) }

// Decode parses data named name (for messages, e.g. an upload's file name)
// with DefaultOptions; see Options.Decode.
func Decode(data []byte, name string) (*Doc, error) { return DefaultOptions.Decode(data, name) }

// Open reads the file at path and parses its header. The format is
// detected from the content, not the extension.
func (o Options) Open(path string) (*Doc, error) {
	data, err := ReadFile(path)
	if err != nil {
		return nil, err
	}
	return o.Decode(data, path)
}

// ReadFile reads the regular file at path as Open does, with the same
// error for a file that cannot be read. A caller that needs the bytes too
// (for a content digest of exactly what is decoded) reads them with
// ReadFile and passes them to Decode.
func ReadFile(path string) ([]byte, error) {
	data, err := regularfile.Read(path)
	if err != nil {
		var pe *os.PathError
		if errors.As(err, &pe) {
			err = pe.Err
		}
		return nil, &Error{Name: path, Err: fmt.Errorf("cannot read: %w", err)}
	}
	return data, nil
}

// ErrNotRegular is regularfile.ErrNotRegular: the path is a device, pipe,
// socket or directory, not a regular file (a link is followed first).
var ErrNotRegular = regularfile.ErrNotRegular

// Decode parses the header of an encoded image held in data; name is used
// in error messages. For a single image it also checks the pixel cap; PDF
// pages are checked one by one in Page, as their size depends on the page.
// Decode keeps data (without copying); the caller must not modify it. Four
// inputs are held as a mended copy instead (one more copy of the file
// while the Doc lives): a bare JPEG 2000 codestream (wrapped in JP2
// boxes), a BigTIFF page (a classic TIFF of it, made when it is opened), a
// JPEG with junk between its header's segments (the junk dropped) and a
// PDF whose table points past its end (startxref 0).
func (o Options) Decode(data []byte, name string) (*Doc, error) {
	if o.DPI <= 0 {
		o.DPI = DefaultDPI
	}
	if o.MaxPixels <= 0 {
		o.MaxPixels = DefaultMaxPixels
	}
	if o.MaxDecodePixels == 0 {
		o.MaxDecodePixels = DefaultMaxDecodePixels
	}
	if o.MaxPDFPagePixels <= 0 {
		o.MaxPDFPagePixels = DefaultMaxPDFPagePixels
	}
	if len(data) == 0 {
		return nil, &Error{Name: name, Err: errors.New("empty file")}
	}
	if o.Isolation != nil {
		return o.decodeIsolated(data, name)
	}
	startup()
	vipsCalls.RLock()
	defer vipsCalls.RUnlock()
	typ := vips.DetermineImageType(data)
	switch typ {
	case vips.ImageTypePNG, vips.ImageTypeJPEG, vips.ImageTypeTIFF, vips.ImageTypeWEBP, vips.ImageTypeJP2K, vips.ImageTypePDF:
	default:
		if IsPDF(data) {
			typ = vips.ImageTypePDF
			break
		}
		if filekind.Of(data) == filekind.TIFF { // a BigTIFF
			return o.decodeBigTIFF(data, name)
		}
		if filekind.Of(data) == filekind.J2C {
			wrapped, err := jp2OfCodestream(data)
			if err != nil {
				return nil, &Error{Name: name, Err: err}
			}
			data, typ = wrapped, vips.ImageTypeJP2K
			break
		}
		return nil, &Error{Name: name, Err: fmt.Errorf("%w (not PNG, JPEG, TIFF, WebP, JPEG 2000 or PDF%s)", ErrUnsupportedFormat, contentSays(data))}
	}
	if typ == vips.ImageTypeJPEG {
		data = jpegWithoutHeaderJunk(data)
	}
	orig := data
	if typ == vips.ImageTypePDF && !o.pdfium() {
		data = pdfWithinBounds(data)
	}
	if typ == vips.ImageTypeJP2K {
		var err error
		if data, err = jp2Prepared(data); err != nil {
			return nil, &Error{Name: name, Err: err}
		}
	}
	d := &Doc{name: name, data: data, typ: typ, pages: 1, opts: o}
	if typ == vips.ImageTypePDF && o.pdfium() {
		n, err := pdfiumPages(data)
		if err != nil {
			return nil, &Error{Name: name, Err: err}
		}
		if d.pages = n; n < 1 {
			return nil, &Error{Name: name, Err: errors.New("PDF has no pages")}
		}
		pf, perr := pdflabel.Open(d.data)
		d.checkImages(pf, perr)
		d.readLabelsOf(pf, perr)
		return d, nil
	}
	ref, err := d.load(0, o.DPI)
	if err != nil {
		return nil, &Error{Name: name, Err: err}
	}
	defer ref.Close()
	if typ == vips.ImageTypePDF {
		d.pages = pageCount(ref)
		if d.pages < 1 {
			return nil, &Error{Name: name, Err: errors.New("PDF has no pages")}
		}
		// The PDF's objects indexed once for its page tree and its labels.
		pf, perr := pdflabel.Open(d.data)
		d.checkPageTree(pf, perr, orig)
		d.checkImages(pf, perr)
		d.readLabelsOf(pf, perr)
		d.tellBroken(d.opts.pdfium())
		return d, nil
	}
	if err := o.checkSize(ref); err != nil {
		return nil, &Error{Name: name, Err: err}
	}
	d.orient = metaOrientation(ref, typ, data)
	if n := pageCount(ref); typ == vips.ImageTypeTIFF && n > 1 {
		dirs, turns := tiffTurns(data)
		if d.turns = turns; d.turns == nil {
			d.turns = []int{d.orient} // the first page's, read by libvips
		}
		// The pages classified, by the directories' flags; all n when
		// they cannot be read here (libvips reads the pages that it can,
		// and a damaged one fails on its own).
		d.pages = n
		if len(dirs) == n {
			d.pages = ClassifiedTIFFPages(n, reducedFlags(dirs))
		}
	}
	return d, nil
}

// pageCount is the number of pages libvips read in ref's file: its
// n-pages field, which the getter (ref.Pages) gives as 1 when it is over
// 10,000, so that a PDF or TIFF of 10,000 pages or more passed the page
// limit as a one-page document and its other pages were dropped.
func pageCount(ref *vips.ImageRef) int {
	n := ref.Pages()
	if slices.Contains(ref.ImageFields(), "n-pages") {
		n = max(n, ref.GetInt("n-pages"))
	}
	return n
}

// ClassifiedTIFFPages returns how many pages of a TIFF of n pages are
// classified, reduced giving whether each directory is flagged as a
// reduced-resolution image (NewSubfileType bit 0; nil when its directories
// could not be read): 1 when every directory after the first is so
// flagged (a pyramidal TIFF, one image at reduced resolutions, as libvips
// and image servers write it, or a page with its thumbnail), else all n.
// Pages that are not flagged are pages, whatever their sizes: an A3 page
// followed by an A5 one at half its size was taken for a pyramid, and the
// second page dropped without a word. It is the rule of Doc.Pages and of
// TIFFPages.
func ClassifiedTIFFPages(n int, reduced []bool) int {
	if n <= 1 || len(reduced) != n {
		return n
	}
	for _, r := range reduced[1:] {
		if !r {
			return n
		}
	}
	return 1
}

// reducedFlags are the NewSubfileType flags of dirs (ClassifiedTIFFPages).
func reducedFlags(dirs []tiffifd.Dir) []bool {
	flags := make([]bool, len(dirs))
	for i, d := range dirs {
		flags[i] = d.Reduced
	}
	return flags
}

// TIFFPages returns the number of pages Decode's Doc.Pages gives the TIFF
// r (a pyramidal TIFF: 1), from the TIFF's directories alone
// (internal/pageclass/tiffifd): a few KiB a page are read, never its
// image data, so a job can route a 100-MB master without holding it. The
// first page's size is checked against MaxPixels, as Decode checks it.
// An error says the directories cannot tell (a malformed or truncated
// TIFF, one that loops), the file is not a TIFF (ErrUnsupportedFormat), or
// its first page is refused (ErrTooManyPixels); Decode then tells what it
// does with the file.
func (o Options) TIFFPages(r io.ReaderAt) (int, error) {
	if o.MaxPixels <= 0 {
		o.MaxPixels = DefaultMaxPixels
	}
	var magic [4]byte
	if _, err := r.ReadAt(magic[:], 0); err != nil && err != io.EOF {
		return 0, err
	}
	if Sniff(magic[:]) != ".tif" {
		return 0, fmt.Errorf("%w (not a TIFF)", ErrUnsupportedFormat)
	}
	dirs, err := tiffifd.Dirs(r)
	if err != nil {
		return 0, err
	}
	if w, h := int64(dirs[0].W), int64(dirs[0].H); w*h > o.MaxPixels {
		return 0, fmt.Errorf("%w: %d×%d = %d pixels, limit %d", ErrTooManyPixels, w, h, w*h, o.MaxPixels)
	}
	return ClassifiedTIFFPages(len(dirs), reducedFlags(dirs)), nil
}

// Name returns the path or name the Doc was opened with.
func (d *Doc) Name() string { return d.name }

// Pages returns the number of pages: the PDF page count, the page count of
// a multi-page TIFF (1 for a pyramidal one), or 1.
func (d *Doc) Pages() int { return d.pages }

// IsPDF reports whether the Doc is a PDF.
func (d *Doc) IsPDF() bool { return d.typ == vips.ImageTypePDF }

// Label returns the page label of page i (0-based) of a PDF that defines
// page labels (such as "iv" or "12a", internal/pageclass/pdflabel), or ""
// when the document defines none, is not a PDF, or its labels could not be
// read (LabelError says why).
func (d *Doc) Label(i int) string {
	if i < 0 || i >= len(d.labels) {
		return ""
	}
	return d.labels[i]
}

// LabelError says why a PDF's page labels could not be read; nil when they
// were read or the document has none.
func (d *Doc) LabelError() error { return d.labelErr }

// readLabelsOf reads the page labels of a PDF of d.pages pages, its
// objects indexed as pf (or the error that opening gave), and tells
// Options.OnLabelError when they cannot be read.
func (d *Doc) readLabelsOf(pf *pdflabel.File, err error) {
	d.labels, d.labelErr = nil, err
	if err == nil {
		d.labels, d.labelErr = pf.Labels(d.pages)
	}
	if errors.Is(d.labelErr, pdflabel.ErrEncrypted) {
		if labels, ok := pdfiumLabels(d.data, d.pages); ok {
			d.labels, d.labelErr = labels, nil
		}
	}
	if d.labelErr != nil && d.opts.OnLabelError != nil {
		d.opts.OnLabelError(d.name, d.labelErr)
	}
}

// RenderTime is the time spent so far on the pages of d: opening and
// decoding them and the callers' use of the pixels in Use (waits for the
// process-wide pixel budget excluded), for a caller's per-document budget:
// a PDF page's rendering cannot be interrupted, so the caller checks it
// between pages.
func (d *Doc) RenderTime() time.Duration { return time.Duration(d.rendering.Load()) }

// ReleaseMemory returns memory freed by decoding to the system: the C
// heap's free pages (poppler's and libvips'), then the Go heap's. Call it
// after a large document; it costs a few milliseconds.
func ReleaseMemory() {
	libvips.ReleaseMemory()
	debug.FreeOSMemory()
}

// Page decodes page i (0-based) to RGB. The decoding takes a slot of the
// process-wide pixel budget (MaxPixelsInFlight); the returned pixels are a
// Go copy that does not count against it, so a caller that holds many
// pages should use Use.
func (d *Doc) Page(i int) (Image, error) {
	var out Image
	err := d.Use(context.Background(), i, func(img Image) error {
		out = Image{Pix: bytes.Clone(img.Pix), W: img.W, H: img.H}
		return nil
	})
	return out, err
}

// Use decodes page i (0-based) to RGB and calls fn with it, holding a slot
// of the process-wide pixel budget (MaxPixelsInFlight) from before the
// decoding until fn returns: at most that many decoded pixels exist at
// once in all the Use calls of the process. img.Pix is memory of libvips,
// freed when fn returns (the pages it holds go back to the system at once,
// not at the Go collector's next cycle): fn must not keep img.Pix or a
// slice of it; it copies what it needs. Use waits for a slot until ctx is
// done (a ctx done before the call decodes nothing), and returns fn's error
// as it is; decoding errors are *Error values naming the file.
func (d *Doc) Use(ctx context.Context, i int, fn func(Image) error) error {
	if d.isolated != 0 {
		return d.useIsolated(ctx, i, fn)
	}
	if !d.IsPDF() {
		return d.render(ctx, i, fn)
	}
	var flat *flatPage
	err := d.render(ctx, i, func(img Image) error {
		if c, ok := oneColour(img); ok {
			flat = &flatPage{w: img.W, h: img.H, c: c}
			return nil
		}
		return fn(img)
	})
	if err != nil || flat == nil {
		return err
	}
	if err := d.secondLook(ctx, i); err != nil {
		return d.wrap(i, err)
	}
	// The page as drawn, rebuilt within the pixel budget.
	n := int64(flat.w) * int64(flat.h)
	if err := inFlight.acquire(ctx, n); err != nil {
		return d.wrap(i, err)
	}
	defer inFlight.release(n)
	return fn(flat.image())
}

// ErrFlatRender: a PDF page's renderer drew it in one colour where the
// other renderer draws on it.
var ErrFlatRender = errors.New("the page was rendered blank")

// secondLook renders PDF page i, which the Doc's renderer drew in one
// colour, with the other renderer, and returns ErrFlatRender (naming both
// and what to do) where that one draws on it. Checked on pdf.js's 971 test
// PDFs: poppler through libvips drew 20 first pages blank that PDFium
// draws, among them JBIG2 pages whose segments its decoder refuses and
// images over cairo's 32767 pixels; PDFium drew 45 blank that poppler
// draws, nearly all form fields without an appearance. Nothing is
// returned where the other renderer is not loaded, cannot open the
// document, or draws the page flat too (a blank page).
func (d *Doc) secondLook(ctx context.Context, i int) error {
	if d.broken != nil {
		return nil // the renderers number its pages differently
	}
	o := d.opts
	o.Isolation = nil // this process decodes (a decoder process, or in process)
	switch {
	case o.pdfium():
		o.Renderer = RendererPoppler
	case pdfium.Loaded() != "":
		o.Renderer = RendererPDFium
	default:
		return nil
	}
	other, err := o.Decode(d.data, d.name)
	if err != nil || i >= other.pages {
		return nil
	}
	drew := false
	if err := other.render(ctx, i, func(img Image) error {
		_, flat := oneColour(img)
		drew = !flat
		return nil
	}); err != nil || !drew {
		return nil
	}
	first, second := rendererName(d.opts.Renderer), rendererName(o.Renderer)
	return fmt.Errorf("%w: %s drew it in one colour, but %s draws on it, so it is not classified from %s's render: "+
		"classify this file with %s (--pdf-renderer %s, PDF_RENDERER=%s)",
		ErrFlatRender, first, second, first, second, o.Renderer, o.Renderer)
}

// SecondLook reports whether a PDF page that renderer draws in one colour
// is looked at with the other renderer (Doc.Use): with PDFium where libvips
// reads PDFs (an image built for PDFium alone has no poppler module), with
// poppler where PDFium is loaded.
func SecondLook(renderer string) bool {
	if renderer == RendererPDFium {
		startup()
		return vips.IsTypeSupported(vips.ImageTypePDF)
	}
	return pdfium.Loaded() != ""
}

// rendererName is a renderer's name for people.
func rendererName(r string) string {
	if r == RendererPDFium {
		return "PDFium"
	}
	return "poppler"
}

// oneColour returns the colour of an image all of whose pixels are the
// same, and whether they are.
func oneColour(img Image) ([3]byte, bool) {
	var c [3]byte
	if len(img.Pix) < 3 {
		return c, false
	}
	copy(c[:], img.Pix)
	for k := 3; k < len(img.Pix); k += 3 {
		if img.Pix[k] != c[0] || img.Pix[k+1] != c[1] || img.Pix[k+2] != c[2] {
			return c, false
		}
	}
	return c, true
}

// flatPage is a page rendered in one colour, kept as its size and colour
// while the other renderer looks at it.
type flatPage struct {
	w, h int
	c    [3]byte
}

// image is the page's pixels.
func (f *flatPage) image() Image {
	pix := make([]byte, 3*f.w*f.h)
	for k := 0; k < len(pix); k += 3 {
		pix[k], pix[k+1], pix[k+2] = f.c[0], f.c[1], f.c[2]
	}
	return Image{Pix: pix, W: f.w, H: f.h}
}

// render is Use without the second look at a flat PDF page.
func (d *Doc) render(ctx context.Context, i int, fn func(Image) error) error {
	if why, ok := d.cut[i+1]; ok {
		return d.wrap(i, fmt.Errorf("%w: %s", ErrCutImage, why))
	}
	if err := d.checkJPEGs(i); err != nil {
		return d.wrap(i, err)
	}
	start := time.Now()
	if d.IsPDF() && d.opts.pdfium() {
		defer func() { d.rendering.Add(int64(time.Since(start))) }()
		return d.usePDFium(ctx, i, fn)
	}
	vipsCalls.RLock()
	ref, factor, err := d.open(i)
	vipsCalls.RUnlock()
	d.rendering.Add(int64(time.Since(start)))
	if err != nil {
		return d.wrap(i, err)
	}
	n := reducedPixels(int64(ref.Width()), int64(ref.Height()), factor)
	if err := inFlight.acquire(ctx, n); err != nil {
		ref.Close()
		return d.wrap(i, err)
	}
	defer inFlight.release(n)
	start = time.Now() // the wait for a slot is not rendering
	defer func() { d.rendering.Add(int64(time.Since(start))) }()
	img, free, err := d.decodeChecked(i, ref, factor)
	ref.Close() // the decoding pipeline goes; img's memory stays until free
	if err != nil {
		return d.wrap(i, err)
	}
	defer free()
	return fn(img)
}

// vipsCalls orders this package's use of libvips around its error
// buffer, which is one for the process: a decoding that must read what
// its own decoder reported (decodeChecked) holds it alone, so that no
// other call adds its errors or empties the buffer (libvips' callers read
// and clear it when a call fails); every other use holds it shared.
var vipsCalls sync.RWMutex

// decodeChecked is decode, refusing a page whose decoder reported errors
// while libvips gave its pixels (damaged): a TIFF or JPEG 2000 page is
// decoded with no other libvips call under way in the process, its error
// buffer emptied before, so that what it holds after is this page's, in
// process as in a decoder process. Other formats' decoders stop at their
// errors, and are decoded beside each other.
func (d *Doc) decodeChecked(i int, ref *vips.ImageRef, factor float64) (Image, func(), error) {
	if d.typ != vips.ImageTypeTIFF && d.typ != vips.ImageTypeJP2K {
		vipsCalls.RLock()
		defer vipsCalls.RUnlock()
		return d.decode(i, ref, factor)
	}
	vipsCalls.Lock()
	defer vipsCalls.Unlock()
	libvips.LastError()
	img, free, err := d.decode(i, ref, factor)
	if err == nil {
		if err = damaged(d); err != nil {
			free()
		}
	}
	return img, free, err
}

// wrap names the file (and the page of a PDF or multi-page TIFF) in a
// decoding error.
func (d *Doc) wrap(i int, err error) error {
	e := &Error{Name: d.name, Err: err}
	if d.IsPDF() || d.pages > 1 {
		e.Page = i + 1
	}
	return e
}

// open checks page i's size from its header and returns it ready for
// decoding at the size it will have: a PDF page over the decode budget
// is reloaded at a lower DPI and a larger image is reopened through
// libvips' thumbnail, which shrinks it while decoding; for a caller that
// resizes every page itself (Options.MinSide) it is given a factor > 1 by
// which decode reduces it instead (reduceFactor). No pixel has been
// decoded when open returns.
func (d *Doc) open(i int) (ref *vips.ImageRef, factor float64, err error) {
	if i < 0 || i >= d.pages {
		return nil, 1, fmt.Errorf("%w: %d of %d", ErrPageRange, i+1, d.pages)
	}
	ref, err = d.load(i, d.opts.DPI)
	if err != nil {
		return nil, 1, err
	}
	if budget := d.opts.pdfPageBudget(); d.IsPDF() && budget > 0 && int64(ref.Width())*int64(ref.Height()) > max(budget, d.opts.MaxPixels) {
		// A page too large to render at DPI even once (a 100-inch
		// square, a scroll): rendered at the DPI that fits the budget
		// before any size check (it was refused as a decompression
		// bomb at 150 dpi, although it would be shrunk below).
		w, h := int64(ref.Width()), int64(ref.Height())
		ref.Close()
		if ref, err = d.load(i, fitDPI(d.opts.DPI, w*h, budget)); err != nil {
			return nil, 1, err
		}
	}
	// Header only so far: libvips loads pixels on demand.
	if err := d.opts.checkSize(ref); err != nil {
		ref.Close()
		return nil, 1, err
	}
	if f := jpegShrink(ref.Width(), ref.Height(), d.opts.MinSide); f > 1 && d.typ == vips.ImageTypeJPEG {
		p := d.params(i, d.opts.DPI)
		p.JpegShrinkFactor.Set(f)
		small, err := vips.LoadImageFromBuffer(d.data, p)
		if err != nil {
			ref.Close()
			return nil, 1, vipsErr("cannot shrink while decoding", err, "corrupt "+formatName(d.typ)+" data")
		}
		ref.Close()
		ref = small
	}
	budget := d.opts.MaxDecodePixels
	if d.IsPDF() {
		budget = d.opts.pdfPageBudget()
	}
	w, h := int64(ref.Width()), int64(ref.Height())
	if budget <= 0 || w*h <= budget {
		return ref, 1, nil
	}
	if d.streams(ref) && (d.opts.MinSide > 0 || d.levels(ref)) {
		return ref, reduceFactor(w, h, budget), nil
	}
	ref.Close()
	if d.IsPDF() {
		ref, err = d.load(i, fitDPI(d.opts.DPI, w*h, budget))
		return ref, 1, err
	}
	scale := math.Sqrt(float64(budget) / float64(w*h))
	// The thumbnail fits the long side, whatever the EXIF rotation; libvips
	// rounds the short side, so a result a little over the budget is made
	// again one pixel smaller (the pipeline is lazy: no pixel is decoded).
	side := max(1, int(float64(max(w, h))*scale))
	size := vips.SizeDown
	if d.typ == vips.ImageTypeJP2K {
		// libvips 8.14 shrinks a JPEG 2000 on load to too low a
		// resolution level under SizeDown and may not enlarge it again
		// (620×877 to fit 427: 78×110); SizeBoth gives 302×427 from a
		// level still over the target. The page is over the budget, so
		// nothing is enlarged.
		size = vips.SizeBoth
	}
	for {
		ref, err = vips.LoadThumbnailFromBuffer(d.data, side, side, vips.InterestingNone, size, d.params(i, d.opts.DPI))
		if err != nil {
			return nil, 1, vipsErr("cannot shrink while decoding", err, "corrupt "+formatName(d.typ)+" data")
		}
		got := int64(ref.Width()) * int64(ref.Height())
		if got <= budget || side <= 1 {
			return ref, 1, nil
		}
		ref.Close()
		// One pixel less when rounding overshot; in proportion when a
		// side cannot shrink under one pixel (a 3,145,752 × 1 image made
		// side-- run 645,000 thumbnails).
		side = max(1, min(side-1, int(float64(side)*math.Sqrt(float64(budget)/float64(got)))))
	}
}

// levels reports whether ref, a page of a TIFF of several directories or
// with SubIFDs, may be taken by libvips' thumbnail for a pyramid: it reads
// one of the smaller levels instead of the page (78×109 pixels of a
// 5000×7000 page), or the next page of a scan whose pages halve in size
// (libvips tells a pyramid by the sizes alone). Such a page is reduced
// from itself (libvips.Reduce), with or without Options.MinSide.
func (d *Doc) levels(ref *vips.ImageRef) bool {
	if d.typ != vips.ImageTypeTIFF {
		return false
	}
	if slices.Contains(ref.ImageFields(), "n-subifds") && ref.GetInt("n-subifds") > 0 {
		return true
	}
	return pageCount(ref) > 1
}

// streams reports whether page ref can be reduced as it is read
// (libvips.Reduce over sequential access): a TIFF (a pyramidal one from
// its full-size page), or a PNG that is not interlaced. An interlaced (Adam7) PNG keeps the
// thumbnail: libpng gives its rows only after its last pass, so libvips
// decodes it whole into memory whichever path reads it (a 6000×6000 page:
// 111 MiB above the start through the thumbnail, 116 through the
// reduction); the reduction is kept to what it reads as a stream, and such
// a PNG gets the pixels it gets without MinSide. Other formats keep the
// thumbnail too: a JPEG or a WebP is shrunk by its decoder through it.
func (d *Doc) streams(ref *vips.ImageRef) bool {
	switch d.typ {
	case vips.ImageTypeTIFF:
		return true
	case vips.ImageTypePNG:
		return !pngInterlaced(d.data)
	}
	return false
}

// pngInterlaced reports whether the PNG in data is interlaced: its IHDR
// chunk, which the format puts first, gives an interlace method other than
// 0. A PNG too short to tell counts as not interlaced (its reading fails).
func pngInterlaced(data []byte) bool {
	const ihdr = 8 + 4 // signature, chunk length
	return len(data) > ihdr+4+12 && string(data[ihdr:ihdr+4]) == "IHDR" && data[ihdr+4+12] != 0
}

// reduceFactor is the factor by which decode reduces a w×h page over
// budget pixels for a caller that resizes every page itself with an
// antialiasing filter (Options.MinSide; classify's UploadPage, on the
// device): the smallest that brings it within budget, each side rounded
// up. The page is read again as it is reduced (libvips.Reduce: read
// sequentially, libvips' reduce with a linear kernel as wide as the
// reduction, so the page stays antialiased), at a fraction of the
// thumbnail's cost (an A4 TIFF master at 300 dpi to PagePixels(384),
// 1.33 MP: 0.56 of the thumbnail's CPU time a page; at 600 dpi 0.22;
// BenchmarkReduceMasters). TIFFs and PNGs, the masters archives keep
// (Doc.streams): a JPEG still over the budget after its shrink on load
// keeps the thumbnail, and so do a pyramidal TIFF, whose smaller levels
// the thumbnail reads instead of the full page, and an interlaced PNG.
func reduceFactor(w, h, budget int64) float64 {
	f := math.Sqrt(float64(w*h) / float64(budget))
	for reducedPixels(w, h, f) > budget && f < float64(max(w, h)) {
		f *= 1.001
	}
	return f
}

// reducedPixels bounds the pixels of a w×h page reduced by factor (1:
// not reduced): each side divided and rounded up.
func reducedPixels(w, h int64, factor float64) int64 {
	if factor <= 1 {
		return w * h
	}
	return int64(math.Ceil(float64(w)/factor)) * int64(math.Ceil(float64(h)/factor))
}

// jpegShrink is the largest JPEG shrink-on-load factor (1, 2, 4 or 8)
// that keeps both sides of a w×h image at least side pixels (the decoder
// rounds a scaled side up); 1 when side is 0.
func jpegShrink(w, h, side int) int {
	if side <= 0 {
		return 1
	}
	for _, f := range []int{8, 4, 2} {
		if (w+f-1)/f >= side && (h+f-1)/f >= side {
			return f
		}
	}
	return 1
}

// unsignedSamples refuses a page whose samples are not 8- or 16-bit
// unsigned integers: libvips 8.14 converts signed ones to 8 bits by
// clipping the negative ones to black (Pillow's 8bit.s.tif and
// 16bit.s.tif came out posterised and black), and 32-bit or floating-point
// ones by clipping to 255 or 1 (white or black). How such samples are to be
// shown is not in the file; a scanned page is never one.
func unsignedSamples(f vips.BandFormat) error {
	name, refused := refusedSamples[f]
	if !refused {
		return nil
	}
	return fmt.Errorf("%s samples are not read: libvips would clip them to 8 bits (negative samples black); "+
		"convert the image to 8- or 16-bit unsigned samples first", name)
}

// refusedSamples names the sample formats unsignedSamples refuses.
var refusedSamples = map[vips.BandFormat]string{
	vips.BandFormatChar: "signed 8-bit", vips.BandFormatShort: "signed 16-bit",
	vips.BandFormatInt: "signed 32-bit", vips.BandFormatUint: "unsigned 32-bit",
	vips.BandFormatFloat: "32-bit floating-point", vips.BandFormatDouble: "64-bit floating-point",
	vips.BandFormatComplex: "complex", vips.BandFormatDpComplex: "complex",
}

// decode converts page i, opened as ref, to 8-bit RGB pixels, held in
// memory allocated by libvips that free releases; with factor over 1 the
// page (Doc.streams) is read again reduced by factor (reduceFactor).
func (d *Doc) decode(i int, ref *vips.ImageRef, factor float64) (img Image, free func(), err error) {
	orient := d.orient
	if d.turns != nil {
		orient = 0 // a page of a TIFF of several: its own directory's turn
		if i < len(d.turns) {
			orient = d.turns[i]
		}
	}
	if factor > 1 {
		opts := ""
		if d.typ == vips.ImageTypeTIFF {
			opts = fmt.Sprintf("page=%d", i)
		}
		small, msg := libvips.Reduce(d.data, opts, factor)
		if small == nil {
			return Image{}, nil, fmt.Errorf("cannot shrink while decoding: %s", oneLine(msg, "corrupt "+formatName(d.typ)+" data"))
		}
		if ref, err = vips.LoadImageFromBuffer(small, vips.NewImportParams()); err != nil {
			return Image{}, nil, vipsErr("cannot read the reduced page", err, "")
		}
		defer ref.Close()
	}
	if err := unsignedSamples(ref.BandFormat()); err != nil {
		return Image{}, nil, err
	}
	if !d.IsPDF() {
		if orient != 0 {
			if err := ref.SetOrientation(orient); err != nil {
				return Image{}, nil, vipsErr("orientation", err, "")
			}
		}
		if err := ref.AutoRotate(); err != nil {
			return Image{}, nil, vipsErr("autorotate", err, "")
		}
	}
	if ref.Interpretation() != vips.InterpretationSRGB {
		if err := ref.ToColorSpace(vips.InterpretationSRGB); err != nil {
			return Image{}, nil, vipsErr("colour conversion", err, "")
		}
	}
	if ref.HasAlpha() || ref.Bands() == 4 {
		if err := ref.Flatten(&vips.Color{R: 255, G: 255, B: 255}); err != nil {
			return Image{}, nil, vipsErr("alpha compositing", err, "")
		}
	}
	if ref.BandFormat() != vips.BandFormatUchar {
		if err := ref.Cast(vips.BandFormatUchar); err != nil {
			return Image{}, nil, vipsErr("conversion to 8 bits", err, "")
		}
	}
	if ref.Bands() != 3 {
		return Image{}, nil, fmt.Errorf("cannot convert %d bands to RGB", ref.Bands())
	}
	w, h := ref.Width(), ref.Height()
	buf, msg := libvips.WriteToMemory(ref)
	if buf == nil {
		// libvips numbers the page its own way ("unable to load page 3"
		// for a PDF's second page): the error names the page already.
		msg = loaderPage.ReplaceAllString(msg, "unable to load the page")
		return Image{}, nil, fmt.Errorf("cannot decode pixels: %s", oneLine(msg, "corrupt or truncated "+formatName(d.typ)+" data"))
	}
	free = buf.Close
	if size := len(buf.Bytes()); size != w*h*3 {
		free()
		return Image{}, nil, fmt.Errorf("decoded %d bytes, want %d×%d×3", size, w, h)
	}
	return Image{Pix: buf.Bytes(), W: w, H: h}, free, nil
}

// params are the loader options of page (0-based) at dpi (PDF only).
func (d *Doc) params(page, dpi int) *vips.ImportParams {
	p := vips.NewImportParams() // fail on the first warning, as PIL does on truncation
	switch d.typ {
	case vips.ImageTypePDF:
		p.Page.Set(page)
		p.NumPages.Set(1)
		p.Density.Set(dpi)
	case vips.ImageTypeTIFF:
		p.Page.Set(page)
		p.NumPages.Set(1)
	}
	return p
}

func (d *Doc) load(page, dpi int) (*vips.ImageRef, error) {
	if d.popplerPages != nil && page < len(d.popplerPages) {
		if page = d.popplerPages[page]; page < 0 {
			return nil, errBrokenPage
		}
	}
	if d.bigTIFF != nil {
		return d.loadBigTIFF(page)
	}
	ref, err := vips.LoadImageFromBuffer(d.data, d.params(page, dpi))
	if err != nil {
		if errors.Is(err, vips.ErrUnsupportedImageFormat) {
			return nil, fmt.Errorf("%w (no libvips loader)", ErrUnsupportedFormat)
		}
		return nil, vipsErr("cannot read header", err, "corrupt "+formatName(d.typ)+" data")
	}
	return ref, nil
}

func (o Options) checkSize(ref *vips.ImageRef) error {
	return o.checkPixels(int64(ref.Width()), int64(ref.Height()))
}

// checkPixels refuses a w×h page with no pixels or more than MaxPixels.
func (o Options) checkPixels(w, h int64) error {
	if w <= 0 || h <= 0 {
		return fmt.Errorf("invalid size %d×%d", w, h)
	}
	if w*h > o.MaxPixels {
		return fmt.Errorf("%w: %d×%d = %d pixels, limit %d", ErrTooManyPixels, w, h, w*h, o.MaxPixels)
	}
	return nil
}

// vipsErr turns a govips error into "what: libvips message", dropping the
// Go stack trace govips appends; fallback replaces an empty message.
func vipsErr(what string, err error, fallback string) error {
	msg := err.Error()
	if i := strings.Index(msg, "\nStack:"); i >= 0 {
		msg = msg[:i]
	}
	return fmt.Errorf("%s: %s", what, oneLine(msg, fallback))
}

// formatName names an accepted format for messages.
func formatName(t vips.ImageType) string {
	switch t {
	case vips.ImageTypePNG:
		return "PNG"
	case vips.ImageTypeJPEG:
		return "JPEG"
	case vips.ImageTypeTIFF:
		return "TIFF"
	case vips.ImageTypeWEBP:
		return "WebP"
	case vips.ImageTypeJP2K:
		return "JPEG 2000"
	case vips.ImageTypePDF:
		return "PDF"
	}
	return "image"
}

// oneLine joins the non-empty lines of a libvips message with "; ", or
// returns fallback (or "libvips failed") when there are none.
// loaderPage is a loader's own page number in its error ("unable to load
// page 3"), which need not be the page named.
var loaderPage = regexp.MustCompile(`unable to load page \d+`)

func oneLine(msg, fallback string) string {
	var parts []string
	for _, l := range strings.Split(msg, "\n") {
		if l = strings.TrimSpace(l); l != "" {
			parts = append(parts, l)
		}
	}
	if len(parts) == 0 {
		if fallback == "" {
			fallback = "libvips failed"
		}
		return fallback
	}
	return strings.Join(parts, "; ")
}

var startOnce sync.Once

// startup starts libvips once: one libvips thread per operation (callers
// parallelise across pages), no operation cache (pages are decoded once, so
// caching only holds memory), tiles of TileHeight lines, and libvips
// messages routed to log/slog: warnings at Debug level, errors at Warn
// level, the rest dropped. Decoding problems reach callers as returned
// errors, so nothing else is printed.
func startup() {
	startOnce.Do(func() {
		vips.LoggingSettings(func(domain string, level vips.LogLevel, msg string) {
			switch level {
			case vips.LogLevelError, vips.LogLevelCritical:
				slog.Warn("libvips", "domain", domain, "msg", msg)
			case vips.LogLevelWarning:
				slog.Debug("libvips", "domain", domain, "msg", msg)
			}
		}, vips.LogLevelWarning)
		vips.Startup(&vips.Config{ConcurrencyLevel: 1, MaxCacheFiles: 0, MaxCacheMem: 0, MaxCacheSize: 0})
		if err := libvips.SetTileHeight(TileHeight); err != nil {
			slog.Warn("libvips: cannot set the tile height", "lines", TileHeight, "error", err)
		}
	})
}

// TileHeight is the height in lines of libvips' tiles, 16 instead of its
// default 128. libvips sizes the line buffers of a pipeline from it (seven
// tiles high: 896 lines by default), so shrinking a 13000-pixel-wide PNG
// held 56 MiB of lines, 24 MiB at 16, and ran no slower (the thumbnail of
// a 13000×13000 PNG: 7.3–7.5 s against 8.5–9.2 s, load average 11). The
// pixels are the same: every operation computes each output pixel from
// the same inputs whatever the tiling.
const TileHeight = 16

// vipsMemHighwater is libvips' peak of tracked memory (its pixel buffers)
// since the process started (for tests).
func vipsMemHighwater() int64 { return libvips.MemHighwater() }

// contentSays is what data shows itself to be when that is no page image,
// for the error of a file that is none (a server's HTML error page answered
// for an image said only "unsupported image format"): "; it is text/html",
// "; it is a PNM image" (a white binary PPM was called text/plain) ("" when
// its first bytes say nothing).
func contentSays(data []byte) string {
	if other := filekind.OtherImage(data); other != "" {
		return "; it is a " + other + " image: convert it to PNG or TIFF"
	}
	kind, _, _ := strings.Cut(http.DetectContentType(data), ";")
	if kind == "application/octet-stream" || strings.HasPrefix(kind, "image/") {
		return ""
	}
	return "; it is " + kind
}
