package imageio

import (
	"context"
	"errors"
	"runtime"
	"runtime/debug"
	"testing"
	"time"

	"archivekit/pkg/imageio/hostile"
	"archivekit/pkg/procstat"
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
			runtime.GC()
			debug.FreeOSMemory()
			if err := procstat.ResetPeak(); err != nil {
				t.Skip(err)
			}
			base, err := procstat.RSSKiB()
			if err != nil {
				t.Skip(err)
			}
			start := time.Now()
			d, err := Decode(data, tc.name)
			if err != nil {
				t.Fatal(err)
			}
			var sum uint64
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
			peak, _ := procstat.PeakRSSKiB()
			extra := float64(peak-base) / 1024
			t.Logf("%s: %d bytes, %d page(s): peak %.0f MiB above start, %.1f s", tc.name, len(data), d.Pages(), extra, time.Since(start).Seconds())
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
	go func() { cancelled <- b.acquire(cctx, 30) }() // queued behind the 60
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
