package imageio

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sync/errgroup"

	"archivekit/internal/ledger"
	"archivekit/internal/testenv"
)

// TestMain lets the test binary be a decoder process (Isolation starts
// the running program). In it, a file whose name holds "crash" kills the
// process as a crashing C decoder would, and one whose name holds "hang"
// never finishes, as a decoder in a loop.
func TestMain(m *testing.M) {
	if os.Getenv(EnvWorker) == "1" {
		TestHookBeforeDecode = func(name string) {
			switch {
			case strings.Contains(name, "crash"):
				_ = syscall.Kill(os.Getpid(), syscall.SIGSEGV)
				time.Sleep(time.Minute) // the signal ends the process first
			case strings.Contains(name, "nothreads"):
				// As the Go runtime ends a process that cannot make a
				// thread (ulimit -u reached).
				fmt.Fprintln(os.Stderr, "runtime/cgo: pthread_create failed: Resource temporarily unavailable")
				_ = syscall.Kill(os.Getpid(), syscall.SIGABRT)
				time.Sleep(time.Minute)
			case strings.Contains(name, "hang"):
				time.Sleep(time.Hour)
			case strings.Contains(name, "hog"):
				// A decoder that allocates without end.
				for {
					b := make([]byte, 64<<20)
					for i := range b {
						b[i] = 1
					}
					hogged = append(hogged, b)
				}
			}
		}
		ServeIfWorker()
	}
	os.Exit(m.Run())
}

// hogged keeps what a "hog" file's decoder allocates.
var hogged [][]byte

func isolation(t testing.TB, procs int, timeout time.Duration) *Isolation {
	t.Helper()
	iso, err := NewIsolation(procs, timeout)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { iso.Close() })
	return iso
}

func readTestdata(t *testing.T, name string) []byte {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// TestIsolatedSameResult: a document decoded in a decoder process has the
// pages, labels and pixels it has decoded in this process, with the
// default settings and with others (a PDF at 72 dpi, a JPEG shrunk on
// load by MinSide): the settings reach the child.
func TestIsolatedSameResult(t *testing.T) {
	iso := isolation(t, 2, 0)
	other := DefaultOptions
	other.DPI, other.MinSide = 72, 8
	for _, file := range []string{"grey.png", "rgba16.png", "exif6.jpg", "page.tif", "page.webp", "two.pdf", "exif6.jpg@other", "two.pdf@other"} {
		t.Run(file, func(t *testing.T) {
			dec := DefaultOptions
			if f, ok := strings.CutSuffix(file, "@other"); ok {
				file, dec = f, other
			}
			data := readTestdata(t, file)
			local, err := dec.Decode(data, file)
			if err != nil {
				t.Fatal(err)
			}
			o := dec
			o.Isolation = iso
			remote, err := o.Decode(data, file)
			if err != nil {
				t.Fatal(err)
			}
			samePages(t, local, remote)
		})
	}
	if n := iso.started.Load(); n < 1 || n > 2 {
		t.Errorf("%d decoder processes started, want 1 or 2", n)
	}
}

// TestIsolatedErrors: the errors of bad files still name the file and
// keep their kind after the pipe.
func TestIsolatedErrors(t *testing.T) {
	o := DefaultOptions
	o.Isolation = isolation(t, 1, 0)
	tests := []struct {
		file    string
		is      error
		problem string
		atOpen  bool
	}{
		{"corrupt.png", nil, "cannot read header: corrupt PNG data", true},
		{"notimage.png", ErrUnsupportedFormat, "unsupported image format", true},
		{"bomb.png", ErrTooManyPixels, "30000×30000 = 900000000 pixels", true},
		{"truncated.png", nil, "cannot decode pixels", false},
	}
	for _, tt := range tests {
		d, err := o.Decode(readTestdata(t, tt.file), tt.file)
		if err == nil && !tt.atOpen {
			_, err = d.Page(0)
		}
		if err == nil {
			t.Errorf("%s: no error", tt.file)
			continue
		}
		if msg := err.Error(); !strings.HasPrefix(msg, tt.file+": ") || !strings.Contains(msg, tt.problem) {
			t.Errorf("error %q does not name %s and %q", msg, tt.file, tt.problem)
		}
		if tt.is != nil && !errors.Is(err, tt.is) {
			t.Errorf("%s: error %v is not %v", tt.file, err, tt.is)
		}
	}
	if n := o.Isolation.started.Load(); n != 1 {
		t.Errorf("%d decoder processes started for errors of files, want 1 (a bad file does not cost its process)", n)
	}
	d, err := o.Decode(readTestdata(t, "two.pdf"), "two.pdf")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := d.Page(2); !errors.Is(err, ErrPageRange) {
		t.Errorf("page 3 of 2: %v, want ErrPageRange", err)
	}
}

// TestIsolatedNoThreads: a decoder process that ended for want of threads
// (ulimit -u) fails its file as a passing failure, which a run leaves to
// do, saying why; before, it was the file's crash, recorded failed, and
// --resume kept it failed. Another crash stays the file's.
func TestIsolatedNoThreads(t *testing.T) {
	o := DefaultOptions
	o.Isolation = isolation(t, 1, 0)
	data := readTestdata(t, "page.tif")
	_, err := o.Decode(data, "nothreads.tif")
	if !errors.Is(err, ErrDecoderCrashed) || !errors.Is(err, ErrNoThreads) || !ledger.Transient(err) || !strings.Contains(err.Error(), "ulimit -u") {
		t.Fatalf("decoder without threads: %v (transient %v); want ErrNoThreads, a passing failure", err, ledger.Transient(err))
	}
	if _, err := o.Decode(data, "crash.tif"); ledger.Transient(err) || errors.Is(err, ErrNoThreads) {
		t.Errorf("a crash: %v is taken for want of threads", err)
	}
	if _, err := o.Decode(data, "after.tif"); err != nil {
		t.Fatalf("the file after: %v", err)
	}
}

// TestIsolatedCrash: a decoder process that dies fails its file only,
// naming it; the files after it are decoded by a new process.
func TestIsolatedCrash(t *testing.T) {
	o := DefaultOptions
	o.Isolation = isolation(t, 1, 0)
	data := readTestdata(t, "page.tif")
	if _, err := o.Decode(data, "before.tif"); err != nil {
		t.Fatal(err)
	}
	_, err := o.Decode(data, "crash.tif")
	if !errors.Is(err, ErrDecoderCrashed) || !strings.HasPrefix(err.Error(), "crash.tif: ") || !strings.Contains(err.Error(), "SIGSEGV") && !strings.Contains(err.Error(), "segmentation fault") {
		t.Fatalf("crashing file: %v; want ErrDecoderCrashed naming crash.tif and its signal", err)
	}
	t.Log(err)
	d, err := o.Decode(data, "after.tif")
	if err != nil {
		t.Fatalf("the file after the crash: %v", err)
	}
	if img, err := d.Page(0); err != nil || img.W != 8 || img.H != 4 {
		t.Fatalf("the file after the crash: %d×%d, %v", img.W, img.H, err)
	}
	if n := o.Isolation.started.Load(); n != 2 {
		t.Errorf("%d decoder processes started, want 2 (one replaced)", n)
	}
}

// TestIsolatedTimeout: a decoding that does not end is stopped after the
// timeout, naming the file and the page; the next page is decoded.
func TestIsolatedTimeout(t *testing.T) {
	o := DefaultOptions
	o.Isolation = isolation(t, 1, 2*time.Second)
	d, err := o.Decode(readTestdata(t, "two.pdf"), "hang.pdf")
	if !errors.Is(err, ErrDecodeTimeout) || !strings.HasPrefix(err.Error(), "hang.pdf: ") {
		t.Fatalf("hanging file: %v (%v); want ErrDecodeTimeout naming hang.pdf", err, d)
	}
	t.Log(err)
	// The next file is decoded by the replacement process, given time a
	// loaded machine may need (each call reads the timeout anew).
	o.Isolation.Timeout = time.Minute
	if d, err = o.Decode(readTestdata(t, "two.pdf"), "two.pdf"); err != nil {
		t.Fatal(err)
	}
	if _, err := d.Page(1); err != nil {
		t.Fatal(err)
	}
}

// TestIsolatedCancel: a context done stops a decoding in progress
// at once, whatever the timeout.
func TestIsolatedCancel(t *testing.T) {
	o := DefaultOptions
	o.Isolation = isolation(t, 1, time.Hour)
	d, err := o.Decode(readTestdata(t, "page.tif"), "page.tif")
	if err != nil {
		t.Fatal(err)
	}
	d.name = "hang.tif" // the page request is made under this name
	ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
	defer cancel()
	if err := d.Use(ctx, 0, func(Image) error { return nil }); !errors.Is(err, context.DeadlineExceeded) || !strings.HasPrefix(err.Error(), "hang.tif: ") {
		t.Fatalf("Use past its deadline: %v, want context.DeadlineExceeded naming hang.tif", err)
	}
	d.name = "page.tif"
	if _, err := d.Page(0); err != nil {
		t.Fatalf("the page after a cancelled one: %v", err)
	}
}

// TestIsolatedResend: a decoder process that no longer holds a document
// (a new process, or the document dropped) is sent it again.
func TestIsolatedResend(t *testing.T) {
	o := DefaultOptions
	o.Isolation = isolation(t, 1, 0)
	pdf, err := o.Decode(readTestdata(t, "two.pdf"), "two.pdf")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := o.Decode(readTestdata(t, "page.tif"), "crash.tif"); !errors.Is(err, ErrDecoderCrashed) {
		t.Fatalf("crash.tif: %v", err)
	}
	for i := range 2 {
		if img, err := pdf.Page(i); err != nil || img.W == 0 {
			t.Fatalf("page %d after its process was replaced: %v", i+1, err)
		}
	}
}

// BenchmarkIsolation decodes the sample pages in this process and in
// decoder processes (Options.Isolation), two at a time either way, and
// reports the cost of isolation as a ratio of the two wall times of the
// same run (isolated/in-process).
func BenchmarkIsolation(b *testing.B) {
	root := testenv.Data(b, "pages")
	var files [][]byte
	filepath.WalkDir(root, func(p string, e os.DirEntry, err error) error {
		if err == nil && !e.IsDir() && Supported(p) && len(files) < 60 {
			if data, err := os.ReadFile(p); err == nil {
				files = append(files, data)
			}
		}
		return nil
	})
	iso := isolation(b, 2, 0)
	run := func(o Options) time.Duration {
		start := time.Now()
		var g errgroup.Group
		g.SetLimit(2)
		for i, data := range files {
			g.Go(func() error {
				d, err := o.Decode(data, fmt.Sprint(i))
				if err != nil {
					return err
				}
				return d.Use(context.Background(), 0, func(Image) error { return nil })
			})
		}
		if err := g.Wait(); err != nil {
			b.Fatal(err)
		}
		return time.Since(start)
	}
	isolated := DefaultOptions
	isolated.Isolation = iso
	run(isolated) // start the processes
	for b.Loop() {
		local, remote := run(DefaultOptions), run(isolated)
		b.ReportMetric(float64(len(files))/local.Seconds(), "pages/s-in-process")
		b.ReportMetric(float64(len(files))/remote.Seconds(), "pages/s-isolated")
		b.ReportMetric(remote.Seconds()/local.Seconds(), "isolated/in-process")
	}
}

// TestIsolatedPDFium: a decoder process renders with PDFium when asked,
// loading the library the parent loaded (from the environment it
// inherits), and gives the pixels PDFium gives in process.
func TestIsolatedPDFium(t *testing.T) {
	loadPDFium(t) // not from the environment: the child loads the library this process loaded
	t.Setenv(EnvPDFium, filepath.Join(t.TempDir(), "libpdfium.so"))
	local := DefaultOptions
	local.Renderer = RendererPDFium
	remote := local
	remote.Isolation = isolation(t, 1, 0)
	data := readTestdata(t, "two.pdf")
	a, err := local.Decode(data, "two.pdf")
	if err != nil {
		t.Fatal(err)
	}
	b, err := remote.Decode(data, "two.pdf")
	if err != nil {
		t.Fatal(err)
	}
	samePages(t, a, b)
}

// samePages checks that remote, decoded in a decoder process, has the
// pages, labels and pixels of local, decoded in this one.
func samePages(t *testing.T, local, remote *Doc) {
	t.Helper()
	if remote.Pages() != local.Pages() || remote.IsPDF() != local.IsPDF() {
		t.Fatalf("isolated: %d pages, PDF %v; in process: %d, %v", remote.Pages(), remote.IsPDF(), local.Pages(), local.IsPDF())
	}
	for i := range local.Pages() {
		if remote.Label(i) != local.Label(i) {
			t.Errorf("page %d label %q, in process %q", i+1, remote.Label(i), local.Label(i))
		}
		want, err := local.Page(i)
		if err != nil {
			t.Fatal(err)
		}
		got, err := remote.Page(i)
		if err != nil {
			t.Fatal(err)
		}
		if got.W != want.W || got.H != want.H || !bytes.Equal(got.Pix, want.Pix) {
			t.Errorf("page %d: isolated %d×%d differs from in process %d×%d", i+1, got.W, got.H, want.W, want.H)
		}
	}
}

// TestIsolatedMemoryCap: a decoder process that allocates past
// Isolation.MaxMemory ends (out of memory) and fails its file only, long
// before the machine's memory is used up; the next file is decoded.
func TestIsolatedMemoryCap(t *testing.T) {
	o := DefaultOptions
	o.Isolation = isolation(t, 1, time.Minute)
	o.Isolation.MaxMemory = 768 << 20
	data := readTestdata(t, "page.tif")
	_, err := o.Decode(data, "hog.tif")
	// The reason is what the process wrote as it ended at the cap: Go's
	// runtime "out of memory" mostly, under the race detector "failed to
	// allocate", and an abort when another thread met the cap first and
	// said nothing about memory. What matters: the file failed alone,
	// long before the machine's memory was used up.
	if !errors.Is(err, ErrDecoderCrashed) || !strings.HasPrefix(err.Error(), "hog.tif: ") {
		t.Fatalf("allocating file: %v; want ErrDecoderCrashed naming hog.tif", err)
	}
	t.Log(err)
	if _, err := o.Decode(data, "after.tif"); err != nil {
		t.Fatalf("the file after: %v", err)
	}
}

// TestIsolatedDamaged: a bilevel TIFF (CCITT Group 4, as archives keep
// text pages) with 40 bytes of its strip overwritten is refused in a
// decoder process, naming the decoder's first error: libtiff reports bad
// code words and goes on, and libvips gives a page with garbled rows and
// no error. The same TIFF undamaged decodes. (Both made with Pillow:
// 400×300 lines, compression "group4"; the damaged one has the 40 bytes a
// third into its strip set to 0xFF.)
func TestIsolatedDamaged(t *testing.T) {
	o := DefaultOptions
	o.Isolation = isolation(t, 1, 0)
	d, err := o.Decode(readTestdata(t, "g4.tif"), "g4.tif")
	if err != nil {
		t.Fatal(err)
	}
	if img, err := d.Page(0); err != nil || img.W != 400 || img.H != 300 {
		t.Fatalf("undamaged: %d×%d, %v", img.W, img.H, err)
	}
	d, err = o.Decode(readTestdata(t, "g4-damaged.tif"), "g4-damaged.tif")
	if err != nil {
		t.Fatal(err)
	}
	_, err = d.Page(0)
	if err == nil || !strings.HasPrefix(err.Error(), "g4-damaged.tif: damaged TIFF data: its decoder reported Fax4Decode: Bad code word at line 135") {
		t.Fatalf("damaged: %v; want it refused naming the decoder's first error", err)
	}
	t.Log(err)
	// The process goes on: the next page is decoded.
	d, _ = o.Decode(readTestdata(t, "g4.tif"), "again.tif")
	if _, err := d.Page(0); err != nil {
		t.Fatalf("after the damaged page: %v", err)
	}
}

// TestInProcessDamaged: decoded in this process (no decoder processes,
// --decode-in-process), the damaged Group 4 TIFF is refused as in a
// decoder process, naming its decoder's first error, while other files,
// good and broken, are decoded at the same time: their errors neither
// refuse the undamaged TIFF nor hide the damaged one's, and the damaged
// one's errors are in no other file's failure.
func TestInProcessDamaged(t *testing.T) {
	o := DefaultOptions
	files := []string{"g4.tif", "g4-damaged.tif", "truncated.png", "corrupt.png", "truncated.jpg", "grey.png", "page.tif", "page.webp"}
	data := map[string][]byte{}
	for _, f := range files {
		data[f] = readTestdata(t, f)
	}
	const rounds = 8
	errs := make(chan error, rounds*len(files))
	var wg sync.WaitGroup
	for r := range rounds {
		for _, f := range files {
			wg.Add(1)
			go func() {
				defer wg.Done()
				name := fmt.Sprintf("%d-%s", r, f)
				d, err := o.Decode(data[f], name)
				if err == nil {
					_, err = d.Page(0)
				}
				if err != nil {
					errs <- err
				}
				switch {
				case f == "g4-damaged.tif":
					if err == nil || !strings.HasPrefix(err.Error(), name+": damaged TIFF data: its decoder reported Fax4Decode: Bad code word at line 135") {
						t.Errorf("%s: %v; want it refused naming its decoder's first error", name, err)
					}
				case f == "g4.tif" || f == "grey.png" || f == "page.tif" || f == "page.webp":
					if err != nil {
						t.Errorf("%s: %v", name, err)
					}
				}
			}()
		}
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if msg := err.Error(); strings.Contains(msg, "Fax4Decode") && !strings.Contains(msg, "g4-damaged.tif") {
			t.Errorf("another file's failure holds the damaged TIFF's errors: %v", err)
		}
	}
}

// TestIsolatedStopSignals: a decoder process outlives SIGTERM, SIGINT and
// SIGHUP sent to it (as `pkill pageclass-api` or systemd stopping the
// service sends them to every process of the name or unit): the parent
// drains and decides, and the next file is decoded by the same process.
// Before, the page in flight failed as "the decoder crashed (signal:
// terminated)".
func TestIsolatedStopSignals(t *testing.T) {
	o := DefaultOptions
	o.Isolation = isolation(t, 1, 0)
	data := readTestdata(t, "page.tif")
	if _, err := o.Decode(data, "before.tif"); err != nil {
		t.Fatal(err)
	}
	o.Isolation.mu.Lock()
	var pids []int
	for c := range o.Isolation.all {
		pids = append(pids, c.cmd.Process.Pid)
	}
	o.Isolation.mu.Unlock()
	if len(pids) != 1 {
		t.Fatalf("%d decoder processes, want 1", len(pids))
	}
	for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP} {
		if err := syscall.Kill(pids[0], sig); err != nil {
			t.Fatal(err)
		}
		// The process waits in a read of its requests: a signal that
		// ends it does so before it reads the next one.
		d, err := o.Decode(data, fmt.Sprintf("after-signal-%d.tif", sig)) // (its name, "hangup", would hang the hook)
		if err != nil {
			t.Fatalf("after %v: %v", sig, err)
		}
		if img, err := d.Page(0); err != nil || img.W != 8 || img.H != 4 {
			t.Fatalf("after %v: %d×%d, %v", sig, img.W, img.H, err)
		}
	}
	if n := o.Isolation.started.Load(); n != 1 {
		t.Errorf("%d decoder processes started, want the one (none replaced)", n)
	}
}
