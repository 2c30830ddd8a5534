// Package pdfium is the cgo boundary to PDFium, the PDF renderer of
// Chromium (BSD-3-Clause and Apache-2.0), used instead of libvips' poppler
// (GPL) when an operator asks for a permissively licensed renderer
// (PDF_RENDERER=pdfium). The library is loaded at run time with dlopen
// (Load), so the binaries link nothing of it and run without it.
//
// PDFium is not thread-safe: every call holds one process-wide lock. Each
// Doc wraps one native document (and its own copy of the file's bytes)
// and must be closed.
package pdfium

/*
#cgo LDFLAGS: -ldl
#include <dlfcn.h>
#include <stdlib.h>

// The few entry points of PDFium's public C API (fpdfview.h, fpdf_doc.h)
// used here, resolved with dlsym.
typedef void *doc_t, *page_t, *bitmap_t, *form_t;
static struct {
	void (*init)(void);
	doc_t (*load)(const void *, size_t, const char *);
	unsigned long (*last_error)(void);
	int (*page_count)(doc_t);
	int (*page_size)(doc_t, int, double *, double *);
	page_t (*load_page)(doc_t, int);
	void (*close_page)(page_t);
	void (*close_doc)(doc_t);
	bitmap_t (*bitmap_create)(int, int, int);
	int (*bitmap_fill)(bitmap_t, int, int, int, int, unsigned long);
	void (*render)(bitmap_t, page_t, int, int, int, int, int, int);
	void *(*bitmap_buffer)(bitmap_t);
	int (*bitmap_stride)(bitmap_t);
	void (*bitmap_destroy)(bitmap_t);
	unsigned long (*page_label)(doc_t, int, void *, unsigned long);
	// The form layer (fpdf_formfill.h), optional: form fields drawn as a
	// reader draws them, also those without an appearance stream.
	form_t (*form_init)(doc_t, void *);
	void (*form_exit)(form_t);
	void (*form_after_load)(page_t, form_t);
	void (*form_before_close)(page_t, form_t);
	void (*form_draw)(form_t, bitmap_t, page_t, int, int, int, int, int, int);
} api;

static const char *missing;

#define SYM(field, name) if (!(*(void **)(&api.field) = dlsym(lib, name))) { missing = name; return "a symbol is missing"; }

// pd_load opens the library at path and resolves the entry points; NULL
// on success, else what went wrong (dlerror's text or a missing symbol,
// named by pd_missing).
static const char *pd_load(const char *path) {
	void *lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	if (!lib) return dlerror();
	SYM(init, "FPDF_InitLibrary")
	SYM(load, "FPDF_LoadMemDocument64")
	SYM(last_error, "FPDF_GetLastError")
	SYM(page_count, "FPDF_GetPageCount")
	SYM(page_size, "FPDF_GetPageSizeByIndex")
	SYM(load_page, "FPDF_LoadPage")
	SYM(close_page, "FPDF_ClosePage")
	SYM(close_doc, "FPDF_CloseDocument")
	SYM(bitmap_create, "FPDFBitmap_Create")
	SYM(bitmap_fill, "FPDFBitmap_FillRect")
	SYM(render, "FPDF_RenderPageBitmap")
	SYM(bitmap_buffer, "FPDFBitmap_GetBuffer")
	SYM(bitmap_stride, "FPDFBitmap_GetStride")
	SYM(bitmap_destroy, "FPDFBitmap_Destroy")
	SYM(page_label, "FPDF_GetPageLabel")
	// A library without the form layer draws no field that lacks an
	// appearance stream: Forms tells.
	*(void **)(&api.form_init) = dlsym(lib, "FPDFDOC_InitFormFillEnvironment");
	*(void **)(&api.form_exit) = dlsym(lib, "FPDFDOC_ExitFormFillEnvironment");
	*(void **)(&api.form_after_load) = dlsym(lib, "FORM_OnAfterLoadPage");
	*(void **)(&api.form_before_close) = dlsym(lib, "FORM_OnBeforeClosePage");
	*(void **)(&api.form_draw) = dlsym(lib, "FPDF_FFLDraw");
	if (!api.form_init || !api.form_exit || !api.form_after_load || !api.form_before_close || !api.form_draw) api.form_init = NULL;
	api.init();
	return NULL;
}

static const char *pd_missing(void) { return missing; }

static doc_t pd_open(const void *data, size_t size, unsigned long *err) {
	doc_t d = api.load(data, size, NULL);
	if (!d) *err = api.last_error();
	return d;
}

static int pd_forms(void) { return api.form_init != NULL; }

// pd_form_open starts the form layer of d with info, an FPDF_FORMFILLINFO
// of version 1 and no callbacks (PDFium checks each before it calls it;
// no JavaScript platform): zeroed memory of FORMINFO_SIZE bytes, larger
// than the structure, that lives as long as the form. NULL without the
// layer, or when PDFium refuses.
#define FORMINFO_SIZE 1024
static form_t pd_form_open(doc_t d, void *info) {
	if (!api.form_init) return NULL;
	*(int *)info = 1;
	return api.form_init(d, info);
}

static void pd_form_close(form_t f) { if (f) api.form_exit(f); }

static int pd_count(doc_t d) { return api.page_count(d); }
static int pd_size(doc_t d, int i, double *w, double *h) { return api.page_size(d, i, w, h); }
static void pd_close(doc_t d) { api.close_doc(d); }
static unsigned long pd_label(doc_t d, int i, void *buf, unsigned long len) { return api.page_label(d, i, buf, len); }

// pd_render draws page i on a white w×h bitmap (annotations included, as
// a reader shows them, and with form f, when not NULL, its fields: what
// FPDF_FFLDraw adds, as PDFium's own pdfium_test draws a page) and writes
// it to out as 8-bit RGB; 0 on success.
static int pd_render(doc_t d, form_t f, int i, int w, int h, unsigned char *out) {
	page_t p = api.load_page(d, i);
	if (!p) return 1;
	bitmap_t b = api.bitmap_create(w, h, 0);
	if (!b) { api.close_page(p); return 2; }
	api.bitmap_fill(b, 0, 0, w, h, 0xFFFFFFFFUL);
	api.render(b, p, 0, 0, w, h, 0, 0x01);
	if (f) {
		api.form_after_load(p, f);
		api.form_draw(f, b, p, 0, 0, w, h, 0, 0x01);
		api.form_before_close(p, f);
	}
	const unsigned char *src = api.bitmap_buffer(b);
	int stride = api.bitmap_stride(b);
	for (int y = 0; y < h; y++) {
		const unsigned char *s = src + (size_t)y * stride;
		unsigned char *o = out + (size_t)y * w * 3;
		for (int x = 0; x < w; x++, s += 4, o += 3) { o[0] = s[2]; o[1] = s[1]; o[2] = s[0]; }
	}
	api.bitmap_destroy(b);
	api.close_page(p);
	return 0;
}
*/
import "C"

import (
	"errors"
	"fmt"
	"runtime"
	"sync"
	"unicode/utf16"
	"unsafe"

	"archivekit/bindings/internal/handles"
)

var (
	mu      sync.Mutex // PDFium is not thread-safe
	loaded  string     // the path loaded, "" until Load succeeds
	loadErr error
	counter handles.Counter
)

// Load loads PDFium from path (a file name such as libpdfium.so is looked
// up as dlopen does: LD_LIBRARY_PATH, the executable's run path, the
// system's folders) and initialises it. The first successful call wins:
// later calls return nil, or the first call's error.
func Load(path string) error {
	mu.Lock()
	defer mu.Unlock()
	if loaded != "" || loadErr != nil {
		return loadErr
	}
	cpath := C.CString(path)
	defer C.free(unsafe.Pointer(cpath))
	if msg := C.pd_load(cpath); msg != nil {
		if m := C.pd_missing(); m != nil {
			return fmt.Errorf("pdfium: %s has no %s: not a PDFium library", path, C.GoString(m))
		}
		// A failed dlopen is not remembered: another path may be tried.
		return fmt.Errorf("pdfium: cannot load %s: %s", path, C.GoString(msg))
	}
	loaded = path
	return nil
}

// Loaded returns the path PDFium was loaded from, "" when it is not.
func Loaded() string {
	mu.Lock()
	defer mu.Unlock()
	return loaded
}

// LiveHandles is the number of documents open (for tests of Close).
func LiveHandles() int64 { return counter.Live() }

// Doc is one open PDF document.
type Doc struct {
	doc  C.doc_t
	data unsafe.Pointer // the file's bytes, which PDFium reads on demand
	// form is the document's form layer (nil without one), and info the
	// C memory of its FPDF_FORMFILLINFO, which must outlive it.
	form C.form_t
	info unsafe.Pointer
}

// Forms reports whether the library loaded draws form fields (its form
// layer, FPDF_FFLDraw), so that a field without an appearance stream is
// drawn as a reader draws it; false before Load.
func Forms() bool {
	mu.Lock()
	defer mu.Unlock()
	return loaded != "" && C.pd_forms() != 0
}

// errors of FPDF_GetLastError.
var lastErrors = map[C.ulong]string{
	1: "unknown error", 2: "file not found or could not be opened", 3: "not a PDF or corrupted",
	4: "password required or incorrect", 5: "unsupported security scheme", 6: "page not found or content error",
}

// ErrNotLoaded is returned when Load has not succeeded.
var ErrNotLoaded = errors.New("pdfium: the library is not loaded")

// Open parses the PDF in data (copied: the caller may reuse data).
func Open(data []byte) (*Doc, error) {
	mu.Lock()
	defer mu.Unlock()
	if loaded == "" {
		return nil, ErrNotLoaded
	}
	if len(data) == 0 {
		return nil, errors.New("pdfium: empty document")
	}
	p := C.CBytes(data)
	var code C.ulong
	d := C.pd_open(p, C.size_t(len(data)), &code)
	if d == nil {
		C.free(p)
		msg := lastErrors[code]
		if msg == "" {
			msg = fmt.Sprintf("error %d", code)
		}
		return nil, fmt.Errorf("pdfium: %s", msg)
	}
	doc := &Doc{doc: d, data: p}
	if C.pd_forms() != 0 {
		doc.info = C.calloc(1, C.FORMINFO_SIZE)
		if doc.info != nil {
			if doc.form = C.pd_form_open(d, doc.info); doc.form == nil {
				C.free(doc.info)
				doc.info = nil
			}
		}
	}
	handles.Track(&counter, doc, (*Doc).Close)
	return doc, nil
}

// Close releases the document; later calls do nothing.
func (d *Doc) Close() error {
	mu.Lock()
	defer mu.Unlock()
	if d.doc == nil {
		return nil
	}
	C.pd_form_close(d.form) // before the document it belongs to
	C.pd_close(d.doc)
	C.free(d.data)
	if d.info != nil {
		C.free(d.info)
	}
	d.doc, d.data, d.form, d.info = nil, nil, nil, nil
	counter.Closed()
	runtime.SetFinalizer(d, nil)
	return nil
}

// Pages returns the document's page count.
func (d *Doc) Pages() int {
	mu.Lock()
	defer mu.Unlock()
	if d.doc == nil {
		return 0
	}
	return int(C.pd_count(d.doc))
}

// Size returns page i's (0-based) width and height in points (1/72 inch).
func (d *Doc) Size(i int) (w, h float64, err error) {
	mu.Lock()
	defer mu.Unlock()
	if d.doc == nil {
		return 0, 0, errors.New("pdfium: document closed")
	}
	var cw, ch C.double
	if C.pd_size(d.doc, C.int(i), &cw, &ch) == 0 {
		return 0, 0, fmt.Errorf("pdfium: page %d: no size (page not found)", i+1)
	}
	return float64(cw), float64(ch), nil
}

// Render draws page i at w×h pixels, white behind, into 8-bit RGB held in
// C memory that free releases (the pixels go back to the system at once).
func (d *Doc) Render(i, w, h int) (pix []byte, free func(), err error) {
	if w <= 0 || h <= 0 || int64(w)*int64(h) > 1<<30 {
		return nil, nil, fmt.Errorf("pdfium: page %d: %d×%d pixels cannot be rendered", i+1, w, h)
	}
	n := C.size_t(w) * C.size_t(h) * 3
	out := C.malloc(n)
	if out == nil {
		return nil, nil, fmt.Errorf("pdfium: page %d: out of memory for %d×%d pixels", i+1, w, h)
	}
	mu.Lock()
	rc := C.int(-1)
	if d.doc != nil {
		rc = C.pd_render(d.doc, d.form, C.int(i), C.int(w), C.int(h), (*C.uchar)(out))
	}
	mu.Unlock()
	if rc != 0 {
		C.free(out)
		return nil, nil, fmt.Errorf("pdfium: page %d cannot be rendered (code %d)", i+1, rc)
	}
	return unsafe.Slice((*byte)(out), int(n)), func() { C.free(out) }, nil
}

// Label returns page i's page label ("" when the document defines none).
func (d *Doc) Label(i int) string {
	mu.Lock()
	defer mu.Unlock()
	if d.doc == nil {
		return ""
	}
	n := C.pd_label(d.doc, C.int(i), nil, 0)
	if n <= 2 {
		return ""
	}
	buf := make([]uint16, (n+1)/2)
	C.pd_label(d.doc, C.int(i), unsafe.Pointer(&buf[0]), C.ulong(len(buf)*2))
	for len(buf) > 0 && buf[len(buf)-1] == 0 {
		buf = buf[:len(buf)-1]
	}
	return string(utf16.Decode(buf))
}
