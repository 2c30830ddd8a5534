package imageio

import (
	"archivekit/internal/testenv"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"testing"
	"time"

	"archivekit/internal/pageclass/imageio/hostile"
)

// maxExtraMiB is the goal: any accepted file costs at most this
// much memory above the process before it.
const maxExtraMiB = 600

// hostileCases are inputs small on the wire and huge in pixels.
func hostileCases() []struct {
	name string
	data func() []byte
} {
	return []struct {
		name string
		data func() []byte
	}{
		{"png-13000x13000", func() []byte { return hostile.PNG(13000, 13000) }},
		{"pdf-85in-page", func() []byte { return hostile.PDF(1, 85, 85) }},
		// the 16-page PDF is in cmd/pageclass-api's test, through the service
	}
}

// peakMiB runs f and returns the peak resident memory above the start, in
// MiB; it skips t where the peak cannot be read.
func peakMiB(t *testing.T, f func()) float64 {
	t.Helper()
	runtime.GC()
	debug.FreeOSMemory()
	if err := testenv.ResetPeak(); err != nil {
		t.Skip(err)
	}
	base, err := testenv.RSSKiB()
	if err != nil {
		t.Skip(err)
	}
	f()
	peak, _ := testenv.PeakRSSKiB()
	return float64(peak-base) / 1024
}

// TestHostileInputsBoundedMemory decodes each hostile input (every page,
// its pixels touched) and checks the peak resident memory above the start
// against the 600 MiB goal; the figures are logged (go test -v).
func TestHostileInputsBoundedMemory(t *testing.T) {
	if testing.Short() {
		t.Skip("decodes 170-million-pixel inputs")
	}
	for _, tc := range hostileCases() {
		t.Run(tc.name, func(t *testing.T) {
			data := tc.data()
			start := time.Now()
			var pages int
			var sum uint64
			extra := peakMiB(t, func() {
				d, err := Decode(data, tc.name)
				if err != nil {
					t.Fatal(err)
				}
				pages = d.Pages()
				for i := 0; i < d.Pages(); i++ {
					err := d.Use(context.Background(), i, func(img Image) error {
						if int64(img.W)*int64(img.H) > DefaultMaxDecodePixels {
							t.Errorf("page %d decoded to %d×%d, over the budget", i+1, img.W, img.H)
						}
						for _, v := range img.Pix {
							sum += uint64(v)
						}
						return nil
					})
					if err != nil {
						t.Fatal(err)
					}
				}
			})
			t.Logf("%s: %d bytes, %d page(s): peak %.0f MiB above start, %.1f s", tc.name, len(data), pages, extra, time.Since(start).Seconds())
			if extra > maxExtraMiB {
				t.Errorf("peak %.0f MiB above start, goal %d", extra, maxExtraMiB)
			}
			if sum == 0 {
				t.Error("all pixels black: nothing was rendered")
			}
		})
	}
}

// TestShrinkKeepsAspect: an image over the decode budget is decoded to at
// most the budget, its aspect kept; a PDF page over it is rendered at a
// lower DPI; both within one pixel of the exact scale.
func TestShrinkKeepsAspect(t *testing.T) {
	o := Options{MaxDecodePixels: 100 * 100}
	for _, tc := range []struct {
		name string
		data []byte
		w, h int // full size
	}{
		{"wide.png", hostile.PNG(400, 100), 400, 100},
		{"tall.png", hostile.PNG(90, 360), 90, 360},
		{"page.pdf", hostile.PDF(1, 2, 4), 300, 600}, // 2×4 in at 150 dpi
	} {
		d, err := o.Decode(tc.data, tc.name)
		if err != nil {
			t.Fatal(err)
		}
		img, err := d.Page(0)
		if err != nil {
			t.Fatal(err)
		}
		if img.W*img.H > 100*100 {
			t.Errorf("%s: %d×%d, over the 10,000-pixel budget", tc.name, img.W, img.H)
		}
		// aspect within a pixel, and at least 90% of the budget used
		if d := img.W*tc.h - img.H*tc.w; d > tc.w+tc.h || -d > tc.w+tc.h {
			t.Errorf("%s: %d×%d does not keep the aspect of %d×%d", tc.name, img.W, img.H, tc.w, tc.h)
		}
		if img.W*img.H < 100*100*8/10 {
			t.Errorf("%s: %d×%d uses less than 80%% of the budget", tc.name, img.W, img.H)
		}
		// Full size when the budget is off.
		full, err := Options{MaxDecodePixels: -1}.Decode(tc.data, tc.name)
		if err != nil {
			t.Fatal(err)
		}
		fimg, err := full.Page(0)
		if err != nil {
			t.Fatal(err)
		}
		if fimg.W != tc.w || fimg.H != tc.h {
			t.Errorf("%s without budget: %d×%d, want %d×%d", tc.name, fimg.W, fimg.H, tc.w, tc.h)
		}
	}
}

// TestPixelBudgetBoundsUse: while Use callbacks hold pages, others wait,
// and a cancelled wait returns the context's error and leaves the budget
// as it was.
func TestPixelBudgetBoundsUse(t *testing.T) {
	b := newPixelBudget(100)
	ctx := context.Background()
	if err := b.acquire(ctx, 60); err != nil {
		t.Fatal(err)
	}
	got := make(chan error, 1)
	go func() { got <- b.acquire(ctx, 60) }()
	select {
	case err := <-got:
		t.Fatalf("second acquire of 60 of 100 returned %v while the first held 60", err)
	case <-time.After(50 * time.Millisecond):
	}
	cctx, cancel := context.WithCancel(ctx)
	cancelled := make(chan error, 1)
	go func() { cancelled <- b.acquire(cctx, 50) }() // more than the 40 free: it waits, however the 60 is queued
	cancel()
	if err := <-cancelled; !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled acquire: %v", err)
	}
	b.release(60)
	if err := <-got; err != nil {
		t.Fatal(err)
	}
	if n := b.inUse(); n != 60 {
		t.Errorf("in use %d after release and grant, want 60", n)
	}
	// A request larger than the budget waits until it is alone, then runs.
	done := make(chan error, 1)
	go func() { done <- b.acquire(ctx, 1000) }()
	b.release(60)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if n := b.inUse(); n != 100 {
		t.Errorf("oversized request holds %d, want the whole budget 100", n)
	}
	b.release(1000)
	if n := b.inUse(); n != 0 {
		t.Errorf("in use %d at the end", n)
	}
	// A context done before the call takes nothing, even from a free
	// budget.
	if err := b.acquire(cctx, 10); !errors.Is(err, context.Canceled) || b.inUse() != 0 {
		t.Errorf("acquire with a cancelled context: %v, in use %d", err, b.inUse())
	}
}

// TestNotRegularFile: a device (here /dev/zero, which would grow without
// end) is refused before it is read.
func TestNotRegularFile(t *testing.T) {
	_, err := Open("/dev/zero")
	if !errors.Is(err, ErrNotRegular) {
		t.Fatalf("Open(/dev/zero) = %v, want ErrNotRegular", err)
	}
	t.Log(err)
}

// TestUseDecodesOnce: Use hands fn the pixels libvips decoded, without a
// copy in the Go heap (a 4096×4096 page would add 48 MiB there, kept until
// the collector's next cycles), and Page returns a copy that outlives the
// libvips memory.
func TestUseDecodesOnce(t *testing.T) {
	const w, h = 2000, 1500
	doc, err := Decode(hostile.PNG(w, h), "lines.png")
	if err != nil {
		t.Fatal(err)
	}
	var before, after runtime.MemStats
	var got Image
	runtime.ReadMemStats(&before)
	err = doc.Use(context.Background(), 0, func(img Image) error {
		runtime.ReadMemStats(&after)
		got = img
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if got.W != w || got.H != h || len(got.Pix) != w*h*3 {
		t.Fatalf("Use gave %d×%d with %d bytes, want %d×%d×3", got.W, got.H, len(got.Pix), w, h)
	}
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > w*h*3/8 {
		t.Errorf("Use allocated %d bytes in the Go heap for a page of %d bytes", alloc, w*h*3)
	}
	page, err := doc.Page(0)
	if err != nil {
		t.Fatal(err)
	}
	runtime.GC()
	// hostile.PNG: a dark band (40) every 512 rows, 64 rows high; white between.
	for _, c := range []struct{ y, want int }{{0, 40}, {63, 40}, {64, 255}, {511, 255}, {512, 40}, {h - 1, 255}} {
		if r, g, b := page.At(w-1, c.y); int(r) != c.want || g != r || b != r {
			t.Errorf("Page: pixel (%d, %d) is %d,%d,%d, want %d", w-1, c.y, r, g, b, c.want)
		}
	}
}

// TestTileHeightBoundsLineBuffers: shrinking a very wide page while it is
// decoded holds a few dozen of its lines in libvips, not hundreds
// (TileHeight): a 13000-pixel-wide PNG took 50 MiB of line buffers with
// libvips' default tiles, 17 MiB with TileHeight. libvips' peak counts from
// the start of the process, so the decoding runs in a child process.
func TestTileHeightBoundsLineBuffers(t *testing.T) {
	const w, h = 13000, 3000 // 39 MP: over the decode budget, shrunk while decoding
	if os.Getenv("IMAGEIO_TILE_CHILD") == "1" {
		doc, err := Decode(hostile.PNG(w, h), "wide.png")
		if err != nil {
			t.Fatal(err)
		}
		err = doc.Use(context.Background(), 0, func(img Image) error {
			if img.W >= w {
				t.Errorf("decoded %d×%d: not shrunk", img.W, img.H)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		fmt.Printf("vips-highwater %d\n", vipsMemHighwater())
		return
	}
	cmd := exec.Command(os.Args[0], "-test.run", "^TestTileHeightBoundsLineBuffers$")
	cmd.Env = append(os.Environ(), "IMAGEIO_TILE_CHILD=1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("child: %v\n%s", err, out)
	}
	var got int64
	for _, l := range strings.Split(string(out), "\n") {
		if v, ok := strings.CutPrefix(l, "vips-highwater "); ok {
			if got, err = strconv.ParseInt(v, 10, 64); err != nil {
				t.Fatal(err)
			}
		}
	}
	const limit = 32 << 20
	if got <= 0 || got > limit {
		t.Errorf("libvips held %.1f MiB of pixel buffers decoding a %d-pixel-wide page, want more than 0 and at most %d MiB\n%s", float64(got)/(1<<20), w, limit>>20, out)
	} else {
		t.Logf("libvips held at most %.1f MiB", float64(got)/(1<<20))
	}
}

// TestPDFPageRenderBudget: a PDF page of 85 × 85 inches (12,750 pixels a
// side at 150 dpi; a few hundred bytes of PDF) is rendered at a DPI that
// fits 2560 × 2560 pixels, the render budget of a PDF page, not at the
// 4096 × 4096 decode budget of images: rendering costs time in proportion
// to the pixels, blank or not.
func TestPDFPageRenderBudget(t *testing.T) {
	d, err := Decode(hostile.PDF(3, 85, 85), "huge.pdf")
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	img, err := d.Page(2)
	if err != nil {
		t.Fatal(err)
	}
	n := img.W * img.H
	t.Logf("85-inch page rendered at %d×%d in %.2f s (render time counted %.2f s)", img.W, img.H, time.Since(start).Seconds(), d.RenderTime().Seconds())
	if n > 2560*2560 || n < 2560*2560*8/10 {
		t.Errorf("85-inch page rendered to %d×%d (%d pixels), want at most and near 2560×2560", img.W, img.H, n)
	}
	if d.RenderTime() <= 0 || d.RenderTime() > time.Since(start) {
		t.Errorf("render time %v, want within the %v the page took", d.RenderTime(), time.Since(start))
	}
	ReleaseMemory()
	// Larger than MaxPixels at 150 dpi (a 100-inch square: 225 MP; a
	// scroll of 24 × 400 inches): rendered at the DPI that fits too, not
	// refused as a decompression bomb.
	for _, size := range [][2]float64{{100, 100}, {24, 400}} {
		d, err := Decode(hostile.PDF(1, size[0], size[1]), "large.pdf")
		if err != nil {
			t.Fatal(err)
		}
		img, err := d.Page(0)
		if err != nil {
			t.Fatalf("%g × %g inches: %v", size[0], size[1], err)
		}
		if n := img.W * img.H; n > 2560*2560 || n < 2560*2560*7/10 {
			t.Errorf("%g × %g inches rendered to %d×%d", size[0], size[1], img.W, img.H)
		}
		ReleaseMemory()
	}
}
