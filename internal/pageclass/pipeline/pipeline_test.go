package pipeline

import (
	"context"
	"errors"
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"archivekit/internal/ledger"
	"archivekit/internal/pageclass/imageio"
	"archivekit/internal/testenv"
)

// quadrants is a deterministic preprocessing: the mean of each channel in
// each quadrant of the page, scaled to 0..1, as a 3×2×2 CHW tensor.
func quadrants(img imageio.Image) ([]float32, error) {
	out := make([]float32, 12)
	var cnt [4]float32
	for y := 0; y < img.H; y++ {
		for x := 0; x < img.W; x++ {
			q := 0
			if x >= img.W/2 {
				q++
			}
			if y >= img.H/2 {
				q += 2
			}
			cnt[q]++
			r, g, b := img.At(x, y)
			out[q] += float32(r)
			out[4+q] += float32(g)
			out[8+q] += float32(b)
		}
	}
	for i := range out {
		if cnt[i%4] > 0 {
			out[i] /= cnt[i%4] * 255
		}
	}
	return out, nil
}

// fakeModel returns, per page, its 12 inputs plus one, normalised to sum 1,
// so every row depends on its own page's pixels only.
type fakeModel struct {
	mu    sync.Mutex
	sizes []int
	fail  error
	gate  chan struct{} // when set, every call waits for it until it is closed
	calls chan int      // when set, receives each call's batch size as it starts
}

func (m *fakeModel) Probabilities(data []float32, n, c, h, w int) ([][]float32, error) {
	m.mu.Lock()
	m.sizes = append(m.sizes, n)
	m.mu.Unlock()
	if m.calls != nil {
		m.calls <- n
	}
	// Every call waits, not only the first to arrive: calls launched
	// together may reach the model in any order, and a later batch let
	// through would let the oldest land.
	if m.gate != nil {
		<-m.gate
	}
	if m.fail != nil {
		return nil, m.fail
	}
	if len(data) != n*c*h*w {
		return nil, fmt.Errorf("got %d floats for %d×%d×%d×%d", len(data), n, c, h, w)
	}
	out := make([][]float32, n)
	for i := range out {
		row := make([]float32, c*h*w)
		var sum float32
		for j := range row {
			row[j] = data[i*c*h*w+j] + 1
			sum += row[j]
		}
		for j := range row {
			row[j] /= sum
		}
		out[i] = row
	}
	return out, nil
}

func cfg(workers, batch int, pre Preprocess) Config {
	return Config{Workers: workers, Batch: batch, Channels: 3, Height: 2, Width: 2, Preprocess: pre}
}

// realPages returns n page paths from shared/data/pages, read in place
// (testenv.Data: $ARCHIVEKIT_SHARED, else found above the package).
func realPages(t testing.TB, n int) []string {
	t.Helper()
	root := testenv.Data(t, "pages")
	files, _ := filepath.Glob(filepath.Join(root, "*", "*.png"))
	sort.Strings(files)
	if len(files) < n {
		t.Fatalf("found %d pages under %s, want %d", len(files), root, n)
	}
	return files[:n]
}

func fixture(name string) string { return filepath.Join("..", "imageio", "testdata", name) }

// expected computes the row a single input page must get, decoding it on
// its own.
func expected(t *testing.T, path string, page int) []float32 {
	t.Helper()
	d, err := imageio.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	img, err := d.Page(page)
	if err != nil {
		t.Fatal(err)
	}
	x, _ := quadrants(img)
	p, err := (&fakeModel{}).Probabilities(x, 1, 3, 2, 2)
	if err != nil {
		t.Fatal(err)
	}
	return p[0]
}

type wantRow struct {
	name    string
	page    int
	pages   int
	errText string // "" for a good row
}

func TestRunOrderAndErrors(t *testing.T) {
	pages := realPages(t, 20)
	var paths []string
	var want []wantRow
	add := func(p string, rows ...wantRow) {
		paths = append(paths, p)
		want = append(want, rows...)
	}
	for i, p := range pages {
		switch i {
		case 5:
			add(fixture("corrupt.png"), wantRow{fixture("corrupt.png"), 0, 0, "corrupt PNG data"})
		case 9:
			add(fixture("two.pdf"), wantRow{fixture("two.pdf"), 1, 2, ""}, wantRow{fixture("two.pdf"), 2, 2, ""})
		case 12:
			add(fixture("truncated.png"), wantRow{fixture("truncated.png"), 1, 1, "cannot decode pixels"})
		case 15:
			add("no/such/file.png", wantRow{"no/such/file.png", 0, 0, "no such file"})
		}
		add(p, wantRow{p, 1, 1, ""})
	}

	// Random delays make workers finish out of order.
	var mu sync.Mutex
	rnd := rand.New(rand.NewSource(1))
	slow := func(img imageio.Image) ([]float32, error) {
		mu.Lock()
		d := time.Duration(rnd.Intn(3000)) * time.Microsecond
		mu.Unlock()
		time.Sleep(d)
		return quadrants(img)
	}

	for _, tc := range []struct{ workers, inFlight int }{{1, 1}, {3, 1}, {8, 1}, {3, 2}, {8, 3}} {
		workers := tc.workers
		t.Run(fmt.Sprintf("workers=%d/in-flight=%d", workers, tc.inFlight), func(t *testing.T) {
			m := &fakeModel{}
			var got []Result
			opened := map[string]int{}
			c := cfg(workers, 4, slow)
			c.InFlight = tc.inFlight
			c.OnOpen = func(in Input, n int) { opened[in.Name] = n }
			st, err := Run(context.Background(), Files(paths), m, c, func(r Result) error {
				got = append(got, r)
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != len(want) {
				t.Fatalf("%d rows, want %d", len(got), len(want))
			}
			for i, r := range got {
				w := want[i]
				if r.Row != i || r.Name != w.name || r.Page != w.page || r.Pages != w.pages {
					t.Errorf("row %d = {Row %d %s page %d/%d}, want %s page %d/%d", i, r.Row, r.Name, r.Page, r.Pages, w.name, w.page, w.pages)
					continue
				}
				if r.Name != paths[r.Input] {
					t.Errorf("row %d: Input %d is %s, want %s", i, r.Input, paths[r.Input], r.Name)
				}
				// The digest of the bytes read, also for a file that does
				// not decode; none for a file that cannot be read.
				if d, _ := ledger.Digest(w.name); r.Digest != d {
					t.Errorf("row %d (%s): digest %q, want %q", i, w.name, r.Digest, d)
				}
				if w.errText != "" {
					if r.Err == nil || !strings.Contains(r.Err.Error(), w.errText) || !strings.Contains(r.Err.Error(), w.name) || r.Probs != nil {
						t.Errorf("row %d (%s): err %v probs %v, want an error naming the file and %q", i, w.name, r.Err, r.Probs, w.errText)
					}
					continue
				}
				if r.Err != nil {
					t.Errorf("row %d (%s): %v", i, w.name, r.Err)
					continue
				}
				exp := expected(t, w.name, w.page-1)
				for j := range exp {
					if r.Probs[j] != exp[j] {
						t.Errorf("row %d (%s page %d): probs %v, want %v", i, w.name, w.page, r.Probs, exp)
						break
					}
				}
			}
			// Every model call but the last is a full batch (with several
			// in flight, the last may start before an earlier one); the bad
			// rows never reach the model.
			good := 0
			for _, w := range want {
				if w.errText == "" {
					good++
				}
			}
			total, short := 0, 0
			for _, n := range m.sizes {
				total += n
				if n != 4 {
					short++
				}
			}
			if short > 1 {
				t.Errorf("batches of %v pages: more than the last is not full", m.sizes)
			}
			if total != good {
				t.Errorf("model saw %d pages, want %d", total, good)
			}
			if st.Rows != len(want) || st.Failed != len(want)-good || st.Batches != len(m.sizes) || st.Inputs != len(paths) {
				t.Errorf("stats %+v", st)
			}
			if opened[fixture("two.pdf")] != 2 || opened[fixture("corrupt.png")] != 0 || opened[pages[0]] != 1 || len(opened) != len(paths) {
				t.Errorf("OnOpen saw %v", opened)
			}
		})
	}
}

func TestUploadsAndPageLimit(t *testing.T) {
	pdf, err := os.ReadFile(fixture("two.pdf"))
	if err != nil {
		t.Fatal(err)
	}
	in := []Input{{Name: "upload.pdf", Data: pdf}, {Name: fixture("two.pdf")}}
	c := cfg(2, 16, quadrants)
	c.MaxPages = 1
	var got []Result
	_, err = Run(context.Background(), in, &fakeModel{}, c, func(r Result) error { got = append(got, r); return nil })
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 {
		t.Fatalf("%d rows, want one error row per PDF", len(got))
	}
	for i, r := range got {
		if !errors.Is(r.Err, ErrTooManyPages) || !strings.Contains(r.Err.Error(), in[i].Name) {
			t.Errorf("row %d: %v, want ErrTooManyPages naming %s", i, r.Err, in[i].Name)
		}
	}

	c.MaxPages = 50
	got = nil
	if _, err := Run(context.Background(), in[:1], &fakeModel{}, c, func(r Result) error { got = append(got, r); return nil }); err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0].Page != 1 || got[1].Page != 2 || got[0].Err != nil || got[1].Err != nil {
		t.Fatalf("upload rows %+v", got)
	}
	// page 1 is red, page 2 blue: the red quadrant means lead in row 1, the blue ones in row 2.
	if !(got[0].Probs[0] > got[0].Probs[8] && got[1].Probs[8] > got[1].Probs[0]) {
		t.Errorf("page rows swapped: %v / %v", got[0].Probs, got[1].Probs)
	}
}

// TestBackpressure: while the first batch is held in the model, the
// decoders stop after the batches in flight and one window of rows; with
// InFlight 2 the second batch goes to the model while the first is held.
// It synchronises on events only: the model calls starting (after which the
// batcher takes no row, so no token comes back), the opener finding the
// window full once they have started (it has then stopped for good), and
// the workers having preprocessed every row numbered by then. A window of
// another size fails at once, not at go test's timeout: the opener's stop
// is seen either by the opener itself (the model holds its batches and the
// window is full) or, when it stopped just before the model calls started,
// by the test once they have.
func TestBackpressure(t *testing.T) {
	paths := make([]string, 200)
	for i := range paths {
		paths[i] = fixture("grey.png")
	}
	for _, inFlight := range []int{1, 2} {
		t.Run(fmt.Sprintf("in-flight=%d", inFlight), func(t *testing.T) {
			const workers, batch = 3, 8
			// Rows numbered when the model holds inFlight batches: those
			// batches and one window (Batch + Workers) behind them.
			limit := inFlight*batch + batch + workers
			var calls, total atomic.Int64
			reached, over := make(chan struct{}), make(chan struct{})
			gate := make(chan struct{})
			release := sync.OnceFunc(func() { close(gate) })
			t.Cleanup(release) // a failed test does not leave the run blocked
			m := &fakeModel{gate: gate, calls: make(chan int, 100)}
			held := func() bool { // the model holds inFlight batches
				m.mu.Lock()
				defer m.mu.Unlock()
				return len(m.sizes) >= inFlight
			}
			// stopped receives the rows numbered when the opener has
			// stopped for good: with the model holding its batches, the
			// batcher takes no row and the opener is the only one to
			// take tokens, so a full window stays full.
			stopped := make(chan int, 1)
			stop := func(rows int) {
				select {
				case stopped <- rows:
				default:
				}
			}
			var mu sync.Mutex
			var window chan struct{}
			windowFull = func(rows int, tokens chan struct{}) {
				mu.Lock()
				window = tokens
				mu.Unlock()
				if held() && len(tokens) == cap(tokens) {
					stop(rows)
				}
			}
			t.Cleanup(func() { windowFull = nil })
			count := func(img imageio.Image) ([]float32, error) {
				total.Add(1)
				select {
				case <-gate: // the model is released: no bound any more
				default:
					switch calls.Add(1) {
					case int64(limit):
						close(reached)
					case int64(limit) + 1:
						close(over)
					}
				}
				return quadrants(img)
			}
			c := cfg(workers, batch, count)
			c.InFlight = inFlight
			errc := make(chan error, 1)
			go func() {
				_, err := Run(context.Background(), Files(paths), m, c, func(Result) error { return nil })
				errc <- err
			}()
			for i := 0; i < inFlight; i++ { // every call is held until release
				select {
				case <-m.calls:
				case err := <-errc:
					t.Fatalf("run ended before %d model calls: %v", inFlight, err)
				}
			}
			// The opener may have found the window full just before the
			// last model call started, when its hook could not tell.
			// The batches in the model hold inFlight*batch rows taken by
			// the batcher; the window holds the others.
			mu.Lock()
			if window != nil && len(window) == cap(window) {
				stop(inFlight*batch + len(window))
			}
			mu.Unlock()
			select {
			case rows := <-stopped:
				if rows != limit {
					t.Fatalf("the opener stopped at %d rows while the model was blocked, want %d", rows, limit)
				}
			case <-over:
				t.Fatalf("more than %d pages preprocessed while the model was blocked", limit)
			case err := <-errc:
				t.Fatalf("run ended while the model was blocked: %v", err)
			}
			select {
			case <-reached: // every row numbered is preprocessed
			case <-over:
				t.Fatalf("more than %d pages preprocessed while the model was blocked", limit)
			}
			started := len(m.calls)
			n := calls.Load()
			release()
			if err := <-errc; err != nil {
				t.Fatal(err)
			}
			if started != 0 {
				t.Errorf("%d more model calls started while %d were in flight", started, inFlight)
			}
			if n != int64(limit) {
				t.Errorf("%d pages preprocessed while the model was blocked, want %d", n, limit)
			}
			if total.Load() != 200 {
				t.Errorf("%d pages preprocessed in all, want 200", total.Load())
			}
		})
	}
}

func TestStops(t *testing.T) {
	paths := realPages(t, 40)
	base := runtime.NumGoroutine()

	t.Run("cancel", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		rows := 0
		_, err := Run(ctx, Files(paths), &fakeModel{}, cfg(4, 4, quadrants), func(Result) error {
			rows++
			if rows == 5 {
				cancel()
			}
			return nil
		})
		if !errors.Is(err, context.Canceled) {
			t.Errorf("err = %v, want context.Canceled", err)
		}
		if rows >= len(paths) {
			t.Errorf("%d rows emitted after cancel", rows)
		}
	})
	t.Run("model error", func(t *testing.T) {
		_, err := Run(context.Background(), Files(paths), &fakeModel{fail: errors.New("out of memory")}, cfg(2, 4, quadrants), func(Result) error { return nil })
		if err == nil || !strings.Contains(err.Error(), "model failed on the batch from "+paths[0]+" page 1 to "+paths[3]+" page 1: out of memory") {
			t.Errorf("err = %v", err)
		}
	})
	t.Run("emit error", func(t *testing.T) {
		stop := errors.New("disk full")
		_, err := Run(context.Background(), Files(paths), &fakeModel{}, cfg(2, 4, quadrants), func(Result) error { return stop })
		if !errors.Is(err, stop) {
			t.Errorf("err = %v, want %v", err, stop)
		}
	})
	t.Run("bad preprocessing", func(t *testing.T) {
		short := func(imageio.Image) ([]float32, error) { return make([]float32, 5), nil }
		var got []Result
		_, err := Run(context.Background(), Files(paths[:2]), &fakeModel{}, cfg(2, 4, short), func(r Result) error { got = append(got, r); return nil })
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range got {
			if r.Err == nil || !strings.Contains(r.Err.Error(), "preprocessing gave 5 values, want 12") {
				t.Errorf("row %d: %v", r.Row, r.Err)
			}
		}
	})

	deadline := time.Now().Add(2 * time.Second)
	for runtime.NumGoroutine() > base && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if n := runtime.NumGoroutine(); n > base {
		t.Errorf("%d goroutines left running, %d before", n, base)
	}
}

// TestOpenersAtOnce: inputs are fetched and opened by several openers at
// once (a slow server or disk does not pace the run one input at a
// time), never more than Config.Openers, and the rows keep input order.
func TestOpenersAtOnce(t *testing.T) {
	data, err := os.ReadFile(fixture("grey.png"))
	if err != nil {
		t.Fatal(err)
	}
	const openers, n = 3, 24
	var inside, most atomic.Int64
	all := make(chan struct{})
	var once sync.Once
	inputs := make([]Input, n)
	for i := range inputs {
		inputs[i] = Input{Name: fmt.Sprintf("page-%02d.png", i), Fetch: func(ctx context.Context) ([]byte, error) {
			k := inside.Add(1)
			defer inside.Add(-1)
			for {
				m := most.Load()
				if k <= m || most.CompareAndSwap(m, k) {
					break
				}
			}
			if k >= openers {
				once.Do(func() { close(all) })
			}
			// The first fetches wait until the openers are all busy (or
			// the run ends): one opener alone would never get there.
			select {
			case <-all:
			case <-ctx.Done():
			}
			return data, nil
		}}
	}
	c := cfg(2, 4, quadrants)
	c.Openers = openers
	var names []string
	_, err = Run(context.Background(), inputs, &fakeModel{}, c, func(r Result) error {
		if r.Err != nil {
			return r.Err
		}
		names = append(names, r.Name)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if got := most.Load(); got != openers {
		t.Errorf("at most %d inputs fetched at once, want %d", got, openers)
	}
	for i, name := range names {
		if want := inputs[i].Name; name != want {
			t.Fatalf("row %d is %s, want %s (input order)", i, name, want)
		}
	}
	if len(names) != n {
		t.Errorf("%d rows, want %d", len(names), n)
	}
}

// timedModel is fakeModel whose calls take time: the first call waits
// until the second has started (when overlap is set) and then both take
// slow; every other call takes 1 ms.
type timedModel struct {
	fakeModel
	overlap bool
	slow    time.Duration
	n       atomic.Int32
	second  chan struct{}
}

func (m *timedModel) Probabilities(data []float32, n, c, h, w int) ([][]float32, error) {
	switch k := m.n.Add(1); {
	case k == 1 && m.overlap:
		<-m.second
		time.Sleep(m.slow)
	case k == 1:
		time.Sleep(m.slow)
	case k == 2 && m.overlap:
		close(m.second)
		time.Sleep(m.slow)
	default:
		time.Sleep(time.Millisecond)
	}
	return m.fakeModel.Probabilities(data, n, c, h, w)
}

// Stats say where a run's time went: how long the host took to fill the
// first batch, the first model call, the calls summed, and the time with
// a batch in the model, two calls at once counted once.
func TestStatsTimes(t *testing.T) {
	const hostStart, slow = 25 * time.Millisecond, 30 * time.Millisecond
	files := realPages(t, 8)
	for _, c := range []struct {
		name     string
		inFlight int
	}{{"one batch at a time", 1}, {"two batches at once", 2}} {
		t.Run(c.name, func(t *testing.T) {
			var first atomic.Bool
			pre := func(img imageio.Image) ([]float32, error) {
				if first.CompareAndSwap(false, true) {
					time.Sleep(hostStart) // the host's start-up
				}
				return quadrants(img)
			}
			m := &timedModel{overlap: c.inFlight > 1, slow: slow, second: make(chan struct{})}
			conf := cfg(1, 2, pre)
			conf.InFlight = c.inFlight
			st, err := Run(context.Background(), Files(files), m, conf, func(Result) error { return nil })
			if err != nil {
				t.Fatal(err)
			}
			if st.Batches != 4 || st.Rows != 8 {
				t.Fatalf("%d batches, %d rows; want 4, 8", st.Batches, st.Rows)
			}
			calls := 2 * slow
			if !m.overlap {
				calls = slow + 3*time.Millisecond
			}
			if st.FirstBatch < hostStart || st.FirstForward < slow || st.Forward < calls {
				t.Errorf("first batch after %v (want >= %v), first call %v (want >= %v), calls %v (want >= %v)",
					st.FirstBatch, hostStart, st.FirstForward, slow, st.Forward, calls)
			}
			if st.ModelBusy > st.Elapsed || st.ModelBusy > st.Forward || st.ModelBusy < st.FirstForward {
				t.Errorf("model busy %v: want within [first call %v, min(calls %v, run %v)]", st.ModelBusy, st.FirstForward, st.Forward, st.Elapsed)
			}
			if overlap := st.Forward - st.ModelBusy; m.overlap && overlap < slow || !m.overlap && overlap != 0 {
				t.Errorf("calls %v, model busy %v: two calls at once for %v counted %v once", st.Forward, st.ModelBusy, slow, overlap)
			}
			if b := st.Busy(); b <= 0 || b > 1 {
				t.Errorf("busy fraction %v", b)
			}
			if got, want := st.ForwardMean(), (st.Forward-st.FirstForward)/3; got != want {
				t.Errorf("mean call after the first %v, want %v", got, want)
			}
		})
	}
}
