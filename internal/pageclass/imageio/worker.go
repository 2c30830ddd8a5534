package imageio

import (
	"bufio"
	"context"
	"encoding/gob"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"runtime/debug"
	"strconv"
	"strings"
	"syscall"

	"github.com/davidbyttow/govips/v2/vips"

	"archivekit/bindings/libvips"
)

// ServeIfWorker makes the program a decoder process of an Isolation when
// EnvWorker is set, and then never returns: it serves the parent's
// requests and exits when the parent goes. Otherwise it returns at once.
// A program that uses Isolation calls it first in main, before it parses
// flags or writes anything.
func ServeIfWorker() {
	if os.Getenv(EnvWorker) != "1" {
		return
	}
	slog.SetDefault(slog.New(slog.NewJSONHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn})))
	// A stop is the parent's to handle: `pkill pageclass-api`, or systemd
	// stopping its unit, sends SIGTERM to every process of that name or
	// unit, decoders too; a decoder that ended then failed its page as
	// crashed while the parent drained. It ends when the parent closes
	// its requests, or with the parent (Pdeathsig).
	signal.Ignore(syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP)
	if err := capMemory(os.Getenv(envWorkerMemory)); err != nil {
		fmt.Fprintln(os.Stderr, "decoder process:", err)
		os.Exit(2)
	}
	startup()
	in, out := os.NewFile(3, "requests"), os.NewFile(4, "replies")
	if in == nil || out == nil {
		fmt.Fprintln(os.Stderr, "decoder process: started without its pipes")
		os.Exit(2)
	}
	err := serveWorker(in, out, TestHookBeforeDecode)
	if !errors.Is(err, io.EOF) { // the parent closed the requests: done
		fmt.Fprintln(os.Stderr, "decoder process:", err)
		os.Exit(1)
	}
	os.Exit(0)
}

// TestHookBeforeDecode, when a test sets it in a decoder process before
// ServeIfWorker, is called with each file's name before its header is read
// and with name#page before a page is decoded: tests of programs that use
// Isolation make a file crash or hang its decoder with it. Nil otherwise.
var TestHookBeforeDecode func(name string)

// maxHeld is the most document bytes a decoder process keeps between
// requests (at least the last document, whatever its size).
const maxHeld = 256 << 20

// worker is the decoder process's state: the documents it read last.
type worker struct {
	w    io.Writer     // the replies: gob messages and raw pixels
	r    *bufio.Reader // the requests: gob messages and raw document bytes
	enc  *gob.Encoder
	dec  *gob.Decoder
	docs map[uint64]*Doc
	lru  []uint64 // oldest first
	hook func(string)
	// pdfium is set once PDFium is loaded in this process.
	pdfium bool
}

// serveWorker answers requests from r on w until r ends (io.EOF) or an
// error.
func serveWorker(r io.Reader, w io.Writer, hook func(string)) error {
	br := bufio.NewReaderSize(r, 1<<16) // under dec: the raw bytes after a request are read from it
	wk := &worker{w: w, r: br, enc: gob.NewEncoder(w), dec: gob.NewDecoder(br), docs: map[uint64]*Doc{}, hook: hook}
	for {
		var req request
		if err := wk.dec.Decode(&req); err != nil {
			return err
		}
		if req.DataLen > 0 {
			req.data = make([]byte, req.DataLen)
			if _, err := io.ReadFull(wk.r, req.data); err != nil {
				return err
			}
		}
		var err error
		switch req.Op {
		case opOpen:
			err = wk.open(&req)
		case opPage:
			err = wk.page(&req)
		default:
			err = fmt.Errorf("unexpected request %d", req.Op)
		}
		if err != nil {
			return err
		}
	}
}

// doc returns the document of req, reading it from req.data when the
// worker does not hold it; nil when it needs the data.
func (wk *worker) doc(req *request) (*Doc, error) {
	if d := wk.docs[req.ID]; d != nil {
		return d, nil
	}
	if req.data == nil {
		return nil, nil
	}
	if wk.hook != nil {
		wk.hook(req.Name)
	}
	if (req.Opts.Renderer == RendererPDFium || req.PDFium != "" && IsPDF(req.data)) && !wk.pdfium {
		// The library the parent loaded (its settings may not be in the
		// environment this process inherited), for PDFium's pages or for
		// the second look at a PDF page poppler renders flat (Doc.Use);
		// a process that decodes no PDF does not load it.
		lib := func(k string) string {
			if k == EnvPDFium && req.PDFium != "" {
				return req.PDFium
			}
			return os.Getenv(k)
		}
		if _, err := LoadPDFium(lib); err != nil {
			return nil, &Error{Name: req.Name, Err: err}
		}
		wk.pdfium = true
	}
	o := req.Opts
	o.Isolation = nil // decoded here, whatever arrived
	// The parent tells broken pages, from the reply (Doc.BrokenPages).
	o.OnBrokenPages = func(string, error) {}
	d, err := o.Decode(req.data, req.Name)
	if err != nil {
		return nil, err
	}
	wk.keep(req.ID, d)
	return d, nil
}

// keep holds d as document id, dropping the oldest ones over maxHeld.
func (wk *worker) keep(id uint64, d *Doc) {
	wk.docs[id] = d
	wk.lru = append(wk.lru, id)
	held := 0
	for _, k := range wk.lru {
		held += len(wk.docs[k].data)
	}
	for len(wk.lru) > 1 && held > maxHeld {
		held -= len(wk.docs[wk.lru[0]].data)
		delete(wk.docs, wk.lru[0])
		wk.lru = wk.lru[1:]
	}
}

func (wk *worker) open(req *request) error {
	d, err := wk.doc(req)
	if err != nil {
		return wk.enc.Encode(&reply{Err: toWire(err)})
	}
	rep := reply{Pages: d.pages, Type: int(d.typ), Labels: d.labels, Broken: d.broken, BrokenPDFium: d.broken != nil && d.opts.pdfium()}
	if d.labelErr != nil {
		rep.LabelErr = d.labelErr.Error()
	}
	return wk.enc.Encode(&rep)
}

// page decodes a page, says its size, then sends its pixels or drops them
// as the parent asks.
func (wk *worker) page(req *request) error {
	d, err := wk.doc(req)
	if err != nil {
		return wk.enc.Encode(&reply{Err: toWire(err)})
	}
	if d == nil {
		return wk.enc.Encode(&reply{NeedData: true})
	}
	if wk.hook != nil {
		wk.hook(fmt.Sprintf("%s#%d", req.Name, req.Page+1))
	}
	var pipeErr error
	err = d.Use(context.Background(), req.Page, func(img Image) error {
		if pipeErr = wk.enc.Encode(&reply{W: img.W, H: img.H}); pipeErr != nil {
			return pipeErr
		}
		var next request
		if pipeErr = wk.dec.Decode(&next); pipeErr != nil {
			return pipeErr
		}
		if next.Op == opSend {
			_, pipeErr = wk.w.Write(img.Pix)
		}
		return pipeErr
	})
	if pipeErr != nil {
		return pipeErr
	}
	if err != nil {
		return wk.enc.Encode(&reply{Err: toWire(err)})
	}
	return nil
}

// capMemory sets the process's data memory limit (RLIMIT_DATA) to limit
// bytes ("": none), and the Go heap's soft limit to three quarters of it, so that the
// collector works harder before the cap is reached.
func capMemory(limit string) error {
	if limit == "" {
		return nil
	}
	n, err := strconv.ParseUint(limit, 10, 64)
	if err != nil || n == 0 {
		return fmt.Errorf("%s=%q: not a number of bytes", envWorkerMemory, limit)
	}
	var cur syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_DATA, &cur); err == nil && cur.Max < n {
		n = cur.Max // already capped lower: an unprivileged process cannot raise it
	}
	if err := syscall.Setrlimit(syscall.RLIMIT_DATA, &syscall.Rlimit{Cur: n, Max: n}); err != nil {
		return fmt.Errorf("cannot cap its memory at %d bytes: %w", n, err)
	}
	debug.SetMemoryLimit(int64(n / 4 * 3))
	return nil
}

// damaged is the error of a page libvips decoded while its decoder
// reported errors: libtiff's Fax4 decoder, for one, reports bad code words
// and goes on, and libvips 8.14 gives the page (its rows garbled or
// blank) with no error, whatever fail-on asks; after OpenJPEG's first
// error it decodes no further part of a JPEG 2000 page and gives the rest
// black. It reads libvips' error buffer, which decodeChecked keeps this
// page's alone. Only TIFF and JPEG 2000 errors refuse a page: the other
// decoders stop at their errors.
func damaged(d *Doc) error {
	msg := libvips.LastError()
	if strings.TrimSpace(msg) == "" || (d.typ != vips.ImageTypeTIFF && d.typ != vips.ImageTypeJP2K) {
		return nil
	}
	lines := strings.Split(strings.TrimSpace(msg), "\n")
	more := ""
	if len(lines) > 1 {
		more = fmt.Sprintf(" (and %d more)", len(lines)-1)
	}
	return fmt.Errorf("damaged %s data: its decoder reported %s%s", formatName(d.typ), strings.TrimSpace(lines[0]), more)
}
