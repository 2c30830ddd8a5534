package imageio

import (
	"bufio"
	"cmp"
	"context"
	"encoding/gob"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"regexp"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/davidbyttow/govips/v2/vips"

	"archivekit/bindings/pdfium"
)

// DefaultDecodeTimeout is the longest one decoding may take in a decoder
// process (Isolation.Timeout): the header read of a file, or the decoding
// of one page. A page within the budget takes well under a second; a
// 169-megapixel PNG master, the slowest case measured, 7 to 8 seconds on a
// loaded machine.
const DefaultDecodeTimeout = 2 * time.Minute

// DefaultDecodeMemory is Isolation.MaxMemory when unset: 2 GiB. A
// decoder process of pageclass holds about 320 MiB of data memory
// (libtorch's libraries are mapped in it too) and a page at the full
// decode budget (4096×4096) about 150 MiB more.
const DefaultDecodeMemory = 2 << 30

// MinDecodeMemory is the least MaxMemory the commands accept: 512 MiB. A
// decoder process is the whole program, and its libraries and runtime
// take data memory before any page (it did not start under 280 MiB on a
// 2-CPU machine; more CPUs, more threads).
const MinDecodeMemory = 512 << 20

// envWorkerMemory passes Isolation.MaxMemory to a decoder process.
const envWorkerMemory = "ARCHIVEKIT_DECODE_WORKER_MEMORY"

// EnvWorker is the environment variable that makes a program that calls
// ServeIfWorker a decoder process. Isolation sets it on the processes it
// starts; nobody else should.
const EnvWorker = "ARCHIVEKIT_DECODE_WORKER"

// Errors of isolated decoding, for errors.Is.
var (
	// ErrDecoderCrashed: the decoder process ended while it decoded the
	// file (a crash in a C decoder, or its memory exhausted).
	ErrDecoderCrashed = errors.New("the decoder crashed")
	// ErrDecodeTimeout: the decoding took longer than Isolation.Timeout
	// and its process was stopped.
	ErrDecodeTimeout = errors.New("decoding took too long")
)

// Isolation decodes in child processes instead of the calling process
// (Options.Isolation). The image and PDF decoders are C libraries (libvips
// with libjpeg, libpng, libtiff, libwebp, OpenJPEG and poppler; PDFium): a
// file that makes one of them crash would end the whole run or service,
// and one that makes it loop would hold a worker for ever. In a child
// process, a crash fails that file with ErrDecoderCrashed and a decoding
// over Timeout is stopped with ErrDecodeTimeout, each naming the file; the
// process is replaced and the next file is decoded as usual.
//
// The children are the running program itself, started again with
// EnvWorker set: its main must call ServeIfWorker first. Each child decodes
// one page or header at a time, keeps the last documents it read (so the
// pages of a document are not sent again), and sends the decoded pixels
// back over a pipe. Use the same Isolation for every Options of a process
// and Close it at the end.
type Isolation struct {
	// Timeout bounds one decoding; 0 means DefaultDecodeTimeout.
	Timeout time.Duration
	// MaxMemory caps each decoder process's data memory (RLIMIT_DATA: its
	// heaps and other private writable memory), in bytes: a file that
	// makes a decoder allocate past it fails as a crash ("out of memory")
	// instead of taking the machine's memory. 0 means DefaultDecodeMemory;
	// negative, no cap. Set it before the first decoding.
	MaxMemory int64

	procs  chan struct{} // a token per child allowed
	idle   chan *child
	ids    atomic.Uint64
	mu     sync.Mutex
	all    map[*child]bool
	closed bool
	// started counts the children started (for tests).
	started atomic.Int64
	// exe and env start a child: the running program (in a test, the
	// test binary), with EnvWorker set.
	exe string
	env []string
}

// NewIsolation returns an Isolation of at most procs decoder processes (0
// or less: one per CPU), started when first needed.
func NewIsolation(procs int, timeout time.Duration) (*Isolation, error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, fmt.Errorf("decoder processes: cannot find the program to start: %w", err)
	}
	if procs <= 0 {
		procs = runtime.GOMAXPROCS(0)
	}
	if timeout <= 0 {
		timeout = DefaultDecodeTimeout
	}
	p := &Isolation{
		Timeout: timeout,
		procs:   make(chan struct{}, procs),
		idle:    make(chan *child, procs),
		all:     map[*child]bool{},
		exe:     exe,
		env:     append(os.Environ(), EnvWorker+"=1"),
	}
	return p, nil
}

// Close stops the decoder processes. Decoding after Close fails. Closing
// a nil Isolation does nothing.
func (p *Isolation) Close() error {
	if p == nil {
		return nil
	}
	p.mu.Lock()
	p.closed = true
	all := p.all
	p.all = map[*child]bool{}
	p.mu.Unlock()
	for c := range all {
		c.stop()
	}
	return nil
}

// child is one decoder process and its pipes.
type child struct {
	cmd   *exec.Cmd
	enc   *gob.Encoder
	dec   *gob.Decoder
	r     *bufio.Reader // under dec: the raw pixels are read from it
	w     io.Writer     // the request pipe: gob messages and raw document bytes
	in    io.Closer     // the request pipe's end of this process
	out   io.Closer     // the reply pipe's end of this process
	done  chan struct{}
	state *os.ProcessState
	// crash is the first line of its output that tells a crash (a
	// signal, a fatal error), written before done is closed.
	crash string
	// why says why the process was stopped (ErrDecodeTimeout, or the
	// context's error); nil while it was not stopped on purpose.
	why atomic.Pointer[error]
}

// get returns an idle child, or starts one while fewer than procs exist,
// or waits for one until ctx is done.
func (p *Isolation) get(ctx context.Context) (*child, error) {
	for {
		select {
		case c := <-p.idle:
			return c, nil
		default:
		}
		select {
		case c := <-p.idle:
			return c, nil
		case p.procs <- struct{}{}:
			c, err := p.start()
			if err != nil {
				<-p.procs
				return nil, err
			}
			return c, nil
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}

// put gives back a child after a call: to the idle ones when it can go on,
// else it is stopped and its slot freed.
func (p *Isolation) put(c *child, ok bool) {
	if c.why.Load() != nil {
		ok = false // stopped just after its reply
	}
	p.mu.Lock()
	closed := p.closed
	if !ok || closed {
		delete(p.all, c)
	}
	p.mu.Unlock()
	if ok && !closed {
		p.idle <- c
		return
	}
	c.stop()
	<-p.procs
}

func (p *Isolation) start() (*child, error) {
	p.mu.Lock()
	closed := p.closed
	p.mu.Unlock()
	if closed {
		return nil, errors.New("decoder processes: closed")
	}
	reqR, reqW, err := os.Pipe()
	if err != nil {
		return nil, fmt.Errorf("decoder processes: %w", err)
	}
	repR, repW, err := os.Pipe()
	if err != nil {
		reqR.Close()
		reqW.Close()
		return nil, fmt.Errorf("decoder processes: %w", err)
	}
	cmd := exec.Command(p.exe)
	cmd.Env = p.env
	if limit := cmp.Or(p.MaxMemory, DefaultDecodeMemory); limit > 0 {
		cmd.Env = append(slices.Clip(cmd.Env), fmt.Sprintf("%s=%d", envWorkerMemory, limit))
	}
	errR, errW, err := os.Pipe()
	if err != nil {
		reqR.Close()
		reqW.Close()
		repR.Close()
		repW.Close()
		return nil, fmt.Errorf("decoder processes: %w", err)
	}
	cmd.Stderr = errW
	cmd.ExtraFiles = []*os.File{reqR, repW} // fds 3 and 4 of the child
	// Its own process group: Ctrl-C stops the run, which then stops its
	// decoders, instead of reaching them first (their pages would fail).
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL, Setpgid: true}
	err = startOnOneThread(cmd)
	reqR.Close()
	repW.Close()
	errW.Close()
	if err != nil {
		reqW.Close()
		repR.Close()
		errR.Close()
		return nil, fmt.Errorf("decoder processes: cannot start %s: %w", p.exe, err)
	}
	p.started.Add(1)
	// The replies are read through one buffer, so that the raw pixels
	// that follow a reply are read from where gob stopped.
	br := bufio.NewReaderSize(repR, 1<<16)
	c := &child{cmd: cmd, enc: gob.NewEncoder(reqW), dec: gob.NewDecoder(br), r: br, w: reqW, in: reqW, out: repR, done: make(chan struct{})}
	stderrDone := make(chan struct{})
	go func() {
		c.readStderr(errR)
		close(stderrDone)
	}()
	go func() {
		<-stderrDone // all of its output read before its end is told
		_ = cmd.Wait()
		c.state = cmd.ProcessState
		close(c.done)
	}()
	p.mu.Lock()
	p.all[c] = true
	p.mu.Unlock()
	return c, nil
}

// kill stops the process, recording why (a later read error is then
// reported as why).
func (c *child) kill(why error) {
	c.why.CompareAndSwap(nil, &why)
	_ = c.cmd.Process.Kill()
}

// stop ends the process and closes its pipes.
func (c *child) stop() {
	_ = c.cmd.Process.Kill()
	c.in.Close()
	<-c.done
	c.out.Close()
}

// failure is the error of a call whose pipe broke: why the process was
// stopped, or how it ended.
func (c *child) failure(err error) error {
	if why := c.why.Load(); why != nil {
		return *why
	}
	select {
	case <-c.done:
	case <-time.After(5 * time.Second):
		c.kill(nil)
		<-c.done
	}
	if c.state != nil && !c.state.Success() {
		if threadLine.MatchString(c.crash) {
			return &noThreads{fmt.Errorf("%w (%s: %s): %w", ErrDecoderCrashed, c.state, c.crash, ErrNoThreads)}
		}
		if c.crash != "" {
			return fmt.Errorf("%w (%s: %s)", ErrDecoderCrashed, c.state, c.crash)
		}
		return fmt.Errorf("%w (%s)", ErrDecoderCrashed, c.state)
	}
	return fmt.Errorf("%w (%v)", ErrDecoderCrashed, err)
}

// watch stops c when the timeout passes or ctx is done, until the
// returned function is called. That function returns only once a stop
// already under way has been made (c.why set): else a stop begun as the
// call ended could land after c was given back, killing the process under
// the next call, which then failed with this call's "context canceled".
func (p *Isolation) watch(ctx context.Context, c *child) (done func()) {
	timeout := cmp.Or(p.Timeout, DefaultDecodeTimeout)
	stopped := make(chan struct{}, 2)
	timer := time.AfterFunc(timeout, func() {
		c.kill(fmt.Errorf("%w: over %s; its decoder process was stopped", ErrDecodeTimeout, timeout))
		stopped <- struct{}{}
	})
	stop := context.AfterFunc(ctx, func() {
		c.kill(ctx.Err())
		stopped <- struct{}{}
	})
	return func() {
		if !timer.Stop() {
			<-stopped // it fired: wait for its kill
		}
		if !stop() {
			<-stopped // ctx was done: wait for its kill
		}
	}
}

// call is one exchange with a child under the timeout and ctx: send req
// (when not nil), then read one reply. A broken pipe, a timeout or ctx
// done stops the child and returns the reason; the child must then not
// be used again.
func (p *Isolation) call(ctx context.Context, c *child, req *request, rep *reply) error {
	defer p.watch(ctx, c)()
	if req != nil {
		if err := c.enc.Encode(req); err != nil {
			return c.failure(err)
		}
		if _, err := c.w.Write(req.data); err != nil {
			return c.failure(err)
		}
	}
	*rep = reply{}
	if err := c.dec.Decode(rep); err != nil {
		return c.failure(err)
	}
	return nil
}

// raw asks the child for the pixels of the page it decoded and reads them
// into pix, under the timeout and ctx as call. They follow the request as
// raw bytes, not gob: a page is up to 48 MiB, which gob would copy twice.
func (p *Isolation) raw(ctx context.Context, c *child, pix []byte) error {
	defer p.watch(ctx, c)()
	if err := c.enc.Encode(&request{Op: opSend}); err != nil {
		return c.failure(err)
	}
	if _, err := io.ReadFull(c.r, pix); err != nil {
		return c.failure(err)
	}
	return nil
}

// Protocol operations, parent to child.
const (
	opOpen   = iota + 1 // read a document's header (Decode)
	opPage              // decode a page (Use) and say its size
	opSend              // send the pixels of the page just decoded
	opCancel            // drop them
)

// request is a message from the parent.
type request struct {
	Op   int
	ID   uint64 // the document, numbered by the parent
	Name string
	// DataLen is the length of the document's bytes, which follow the
	// request raw (not gob: a master of 200 MB would be copied twice and
	// its copy kept in the encoder's buffer): with opOpen, or when asked
	// (NeedData); 0 otherwise.
	DataLen int
	data    []byte // the bytes sent after the request
	// Opts are the caller's Options as they cross (sendable): every
	// decoding setting, so that a setting added to Options reaches the
	// child without a copy to keep in step.
	Opts Options
	// PDFium is the PDFium library this process loaded, for a child to
	// load the same ("" when none).
	PDFium string
	Page   int
}

// reply is a message from a child.
type reply struct {
	Err      *wireError
	NeedData bool // the child no longer holds the document: send Data
	// opOpen
	Pages    int
	Type     int
	Labels   []string
	LabelErr string
	// Broken are a PDF's broken pages (Doc.BrokenPages); BrokenPDFium
	// says that PDFium renders it for them.
	Broken       []int
	BrokenPDFium bool
	// opPage: the size of the decoded page (opSend is answered with its
	// W×H×3 bytes, raw)
	W, H int
}

// request is a request of op for document id of o, named name: o's
// settings travel without what stays in this process (gob skips the
// OnLabelError and OnBrokenPages funcs; a nil Isolation is left out, so
// the child decodes in itself).
func (o Options) request(op int, id uint64, name string) *request {
	req := &request{Op: op, ID: id, Name: name, Opts: o}
	req.Opts.Isolation, req.Opts.OnLabelError, req.Opts.OnBrokenPages = nil, nil, nil
	// The PDFium this process loaded, for PDFium's pages or for the second
	// look at a page poppler draws flat (Doc.Use).
	req.PDFium = pdfium.Loaded()
	return req
}

// wireError is a decoding error crossing the pipe: its message, without
// the file's name (the parent adds it), and which of the package's errors
// it is, so that errors.Is still tells them apart.
type wireError struct {
	Msg  string
	Kind string
}

// kinds are the errors errors.Is must still find after the pipe.
var kinds = map[string]error{
	"pixels": ErrTooManyPixels, "format": ErrUnsupportedFormat, "range": ErrPageRange,
	"canceled": context.Canceled, "deadline": context.DeadlineExceeded, "flat": ErrFlatRender,
}

func toWire(err error) *wireError {
	var e *Error
	if errors.As(err, &e) {
		err = e.Err
	}
	w := &wireError{Msg: err.Error()}
	for k, sentinel := range kinds {
		if errors.Is(err, sentinel) {
			w.Kind = k
		}
	}
	return w
}

// remoteError is a wireError back in the parent.
type remoteError struct{ wireError }

func (e *remoteError) Error() string { return e.Msg }

// Is reports whether the error was target in the child.
func (e *remoteError) Is(target error) bool { return e.Kind != "" && kinds[e.Kind] == target }

func (w *wireError) err() error {
	if w == nil {
		return nil
	}
	return &remoteError{*w}
}

// decodeIsolated is Decode in a child process: the header is read there,
// and the Doc keeps data to send with its pages.
func (o Options) decodeIsolated(data []byte, name string) (*Doc, error) {
	p := o.Isolation
	d := &Doc{name: name, data: data, pages: 1, opts: o, isolated: p.ids.Add(1)}
	c, err := p.get(context.Background())
	if err != nil {
		return nil, &Error{Name: name, Err: err}
	}
	var rep reply
	req := o.request(opOpen, d.isolated, name)
	req.DataLen, req.data = len(data), data
	err = p.call(context.Background(), c, req, &rep)
	p.put(c, err == nil)
	if err == nil {
		err = rep.Err.err()
	}
	if err != nil {
		return nil, &Error{Name: name, Err: err}
	}
	d.pages, d.typ, d.labels, d.broken = rep.Pages, vips.ImageType(rep.Type), rep.Labels, rep.Broken
	if rep.LabelErr != "" {
		d.labelErr = errors.New(rep.LabelErr)
		if o.OnLabelError != nil {
			o.OnLabelError(name, d.labelErr)
		}
	}
	d.tellBroken(rep.BrokenPDFium)
	return d, nil
}

// useIsolated is Use in a child process: the child decodes the page and
// says its size, the page takes its slot of the pixel budget here, then
// its pixels cross the pipe into memory of this process.
func (d *Doc) useIsolated(ctx context.Context, i int, fn func(Image) error) error {
	if i < 0 || i >= d.pages {
		return d.wrap(i, fmt.Errorf("%w: %d of %d", ErrPageRange, i+1, d.pages))
	}
	if err := ctx.Err(); err != nil {
		return d.wrap(i, err)
	}
	p := d.opts.Isolation
	c, err := p.get(ctx)
	if err != nil {
		return d.wrap(i, err)
	}
	ok := false
	defer func() { p.put(c, ok) }()
	start := time.Now()
	req := d.opts.request(opPage, d.isolated, d.name)
	req.Page = i
	var rep reply
	if err := p.call(ctx, c, req, &rep); err != nil {
		return d.wrap(i, err)
	}
	if rep.NeedData {
		req.DataLen, req.data = len(d.data), d.data
		if err := p.call(ctx, c, req, &rep); err != nil {
			return d.wrap(i, err)
		}
	}
	d.rendering.Add(int64(time.Since(start)))
	if rep.Err != nil {
		ok = true
		return d.wrap(i, rep.Err.err())
	}
	n := int64(rep.W) * int64(rep.H)
	if err := inFlight.acquire(ctx, n); err != nil {
		ok = c.enc.Encode(&request{Op: opCancel}) == nil
		return d.wrap(i, err)
	}
	defer inFlight.release(n)
	w, h := rep.W, rep.H
	pix := make([]byte, w*h*3)
	if err := p.raw(ctx, c, pix); err != nil {
		return d.wrap(i, err)
	}
	ok = true
	return fn(Image{Pix: pix, W: w, H: h})
}

// crashLine matches the line in which the Go runtime or a C library says
// why a process ends: "SIGSEGV: segmentation violation", "fatal error:
// ...", "panic: ...", glibc's "free(): invalid pointer" and the like.
var crashLine = regexp.MustCompile(`^(SIG[A-Z]+: |fatal error: |panic: |[a-z_]+\(\): |double free|corrupted )|GLib-ERROR|failed to allocate|out of memory`)

// memoryLine matches a line that says memory ran out (the cap of
// Isolation.MaxMemory): Go's runtime, GLib, C++ and glibc word it apart.
var memoryLine = regexp.MustCompile(`out of memory|failed to allocate|cannot allocate memory|bad_alloc|memory exhausted`)

// threadLine matches a line that says a thread could not be made (the Go
// runtime's "runtime/cgo: pthread_create failed: Resource temporarily
// unavailable", GLib's "Error creating thread"): the machine's process or
// thread limit (ulimit -u), not the file, ended the process.
var threadLine = regexp.MustCompile(`pthread_create failed|Error creating thread`)

// ErrNoThreads: a decoder process ended because it could not make a
// thread. A run leaves such a file to do (it is not the file's failure:
// ledger.Transient), and --resume decodes it again.
var ErrNoThreads = errors.New("the decoder process could not start a thread: the limit of processes or threads of this user (ulimit -u) or this machine's memory is exhausted, not the file's fault")

// noThreads is a decoder crash for want of threads: both ErrDecoderCrashed
// and ErrNoThreads, and a passing failure.
type noThreads struct{ err error }

func (e *noThreads) Error() string   { return e.err.Error() }
func (e *noThreads) Unwrap() []error { return []error{e.err, ErrNoThreads} }
func (e *noThreads) Transient() bool { return true }

// readStderr reads the decoder process's error output until it ends. The
// process's log records (JSON lines) are logged again here, named as the
// decoder's; the first line that tells a crash is kept as its reason; the
// rest (a crash's goroutine dump) is logged at debug level only, so that a
// crash costs the user one clear failure, not a page of traces.
func (c *child) readStderr(r io.ReadCloser) {
	defer r.Close()
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		var rec struct {
			Level string `json:"level"`
			Msg   string `json:"msg"`
		}
		if json.Unmarshal([]byte(line), &rec) == nil && rec.Msg != "" {
			var attrs map[string]any
			_ = json.Unmarshal([]byte(line), &attrs)
			args := []any{"process", "decoder"}
			for k, v := range attrs {
				if k != "level" && k != "msg" && k != "time" {
					args = append(args, k, v)
				}
			}
			var level slog.Level
			_ = level.UnmarshalText([]byte(rec.Level))
			slog.Log(context.Background(), level, rec.Msg, args...)
			continue
		}
		switch {
		case threadLine.MatchString(line) && !memoryLine.MatchString(c.crash) && !threadLine.MatchString(c.crash):
			// Said before the signal it ends with.
			c.crash = line
		case memoryLine.MatchString(line) && !memoryLine.MatchString(c.crash):
			// Out of memory says more than the signal it ends with,
			// whichever thread met the cap first.
			c.crash = line
		case c.crash == "" && crashLine.MatchString(line):
			c.crash = line
		}
		slog.Debug("decoder process output", "line", line)
	}
}

// startOnOneThread starts cmd from one OS thread that never ends. The
// children ask to be killed when their parent ends (Pdeathsig), and Linux
// counts the thread that started a child as its parent: a child started
// from a thread the Go runtime later ends would be killed with it.
func startOnOneThread(cmd *exec.Cmd) error {
	starter.once.Do(func() {
		starter.reqs = make(chan *exec.Cmd)
		starter.errs = make(chan error)
		go func() {
			runtime.LockOSThread() // never unlocked: the thread lives as long as the process
			for c := range starter.reqs {
				starter.errs <- c.Start()
			}
		}()
	})
	starter.mu.Lock()
	defer starter.mu.Unlock()
	starter.reqs <- cmd
	return <-starter.errs
}

var starter struct {
	once sync.Once
	mu   sync.Mutex
	reqs chan *exec.Cmd
	errs chan error
}
