package progress

import (
	"bytes"
	"fmt"
	"math"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"archivekit/internal/logging"
)

type clock struct{ t time.Time }

func (c *clock) now() time.Time             { return c.t }
func (c *clock) step(d time.Duration)       { c.t = c.t.Add(d) }
func fixed(b *Bar, c *clock) *Bar           { b.now = c.now; b.start = c.t; b.last = c.t; return b }
func lines(s string) []string               { return strings.Split(strings.TrimSuffix(s, "\n"), "\n") }
func newClock() *clock                      { return &clock{t: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)} }
func plain(w *bytes.Buffer, o Options) *Bar { return New(w, 100, o) }

func TestLogLinesWithoutTerminal(t *testing.T) {
	var out bytes.Buffer
	c := newClock()
	b := fixed(plain(&out, Options{Label: "pageclass", Interval: 5 * time.Second}), c)
	for i := 0; i < 40; i++ { // one page a quarter second: 4 pages/s
		c.step(250 * time.Millisecond)
		if i == 10 {
			b.Fail(1)
		} else {
			b.Add(1)
		}
	}
	b.AddTotal(20)
	got := b.Finish()
	want := []string{
		"pageclass: 20/100 20% 4.0 pages/s ETA 20.0s 1 failed",
		"pageclass: 40/100 40% 4.0 pages/s ETA 15.0s 1 failed",
		"pageclass: 40 pages in 10.0s (4.0 pages/s), of them 1 failed",
	}
	if l := lines(out.String()); strings.Join(l, "\n") != strings.Join(want, "\n") {
		t.Errorf("output:\n%s\nwant:\n%s", out.String(), strings.Join(want, "\n"))
	}
	if got != want[2] {
		t.Errorf("Finish() = %q", got)
	}
	if strings.Contains(out.String(), "\r") || strings.Contains(out.String(), "\x1b") {
		t.Error("control characters written to a non-terminal")
	}
	if b.Finish() != "" {
		t.Error("second Finish wrote again")
	}
}

func TestQuietWithoutTerminal(t *testing.T) {
	var out bytes.Buffer
	c := newClock()
	b := fixed(plain(&out, Options{Interval: -1, Unit: "files"}), c)
	for i := 0; i < 100; i++ {
		c.step(time.Second)
		b.Add(1)
	}
	b.Write([]byte("a log line\n"))
	if got := b.Finish(); out.String() != "a log line\n"+got+"\n" || got != "100 files in 1m40s (1.0 files/s)" {
		t.Errorf("output %q, Finish %q", out.String(), got)
	}
}

func TestTerminalRedraw(t *testing.T) {
	var out bytes.Buffer
	c := newClock()
	b := fixed(plain(&out, Options{Label: "pageclass"}), c)
	b.tty, b.redraws = true, true
	b.width = func() int { return 100 }
	c.step(50 * time.Millisecond)
	b.Add(10) // within 100 ms of the start: not drawn
	if out.Len() != 0 {
		t.Fatalf("redrawn too early: %q", out.String())
	}
	c.step(950 * time.Millisecond)
	b.Add(40)
	frame := out.String()
	// 40 pages in the 0.95 s since the first 10: 1.2 s for the last 50
	want := "\rpageclass [======>       ] 50/100 50% 50.0 pages/s ETA 1.2s\x1b[K"
	if frame != want {
		t.Errorf("frame\n%q\nwant\n%q", frame, want)
	}
	if n := len(strings.TrimSuffix(strings.TrimPrefix(frame, "\r"), "\x1b[K")); n > 99 {
		t.Errorf("line of %d columns on a 100-column terminal", n)
	}
	out.Reset()
	b.Write([]byte("level=WARN msg=skipped\n"))
	if want := "\r\x1b[Klevel=WARN msg=skipped\n" + strings.TrimPrefix(frame, "\r"); out.String() != want {
		t.Errorf("log line through the bar: %q, want %q", out.String(), want)
	}
	out.Reset()
	c.step(time.Second)
	b.Add(50) // complete: always drawn, the bar as wide as before
	if !strings.Contains(out.String(), "pageclass [==============] 100/100 100% 50.0 pages/s\x1b[K") {
		t.Errorf("final frame %q", out.String())
	}
	out.Reset()
	sum := b.Finish()
	if out.String() != "\r\x1b[K"+sum+"\n" || sum != "pageclass: 100 pages in 2.0s (50.0 pages/s)" {
		t.Errorf("finish wrote %q", out.String())
	}
}

func TestNarrowTerminal(t *testing.T) {
	var out bytes.Buffer
	c := newClock()
	b := fixed(plain(&out, Options{Label: "pageclass"}), c)
	b.tty, b.redraws = true, true
	b.width = func() int { return 30 }
	c.step(time.Second)
	b.Add(5)
	line := strings.TrimSuffix(strings.TrimPrefix(out.String(), "\r"), "\x1b[K")
	if len(line) > 29 || strings.Contains(line, "[") || !strings.HasPrefix(line, "pageclass 5/100") {
		t.Errorf("narrow line %q", line)
	}
}

func TestPipeIsNotTerminal(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer w.Close()
	if New(w, 1, Options{}).tty {
		t.Error("a pipe was taken for a terminal")
	}
}

// With Options.Log the plain lines go to it, not to the writer, and it may
// write to the Bar itself (a logger routed through the Bar) without
// deadlocking.
func TestLogOptionTakesThePlainLines(t *testing.T) {
	var out bytes.Buffer
	c := newClock()
	var b *Bar
	var logged []string
	b = fixed(plain(&out, Options{Label: "pageclass", Interval: time.Second, Log: func(s string, _ Fields) {
		logged = append(logged, s)
		b.Write([]byte(`{"msg":"` + s + `"}` + "\n"))
	}}), c)
	for i := 0; i < 4; i++ {
		c.step(500 * time.Millisecond)
		b.Add(1)
	}
	b.Finish()
	if len(logged) != 3 || !strings.HasPrefix(logged[2], "pageclass: 4 pages in") {
		t.Fatalf("logged %q", logged)
	}
	for _, l := range lines(out.String()) {
		if !strings.HasPrefix(l, `{"msg":"`) {
			t.Errorf("line outside a log record: %q", l)
		}
	}
}

// The lines name the item being worked on; the summary does not.
func TestLinesNameTheCurrentItem(t *testing.T) {
	var out bytes.Buffer
	c := newClock()
	b := fixed(New(&out, 4, Options{Label: "pageclass", Interval: time.Second}), c)
	b.SetItem("box1/0001.png")
	c.step(2 * time.Second)
	b.Add(1)
	b.SetItem("box1/0002.pdf")
	c.step(2 * time.Second)
	b.Add(1)
	b.Finish()
	want := []string{
		"pageclass: 1/4 25% 0.5 pages/s box1/0001.png", // no pace yet: no ETA
		"pageclass: 2/4 50% 0.5 pages/s ETA 4.0s box1/0002.pdf",
		"pageclass: 2 pages in 4.0s (0.5 pages/s)",
	}
	if l := lines(out.String()); strings.Join(l, "\n") != strings.Join(want, "\n") {
		t.Errorf("output:\n%s\nwant:\n%s", out.String(), strings.Join(want, "\n"))
	}
}

// The ETA is the pace since the first items finished: a start-up of 20 s
// (models loading, the first batch) before 10 pages a second does not
// make it twenty times too long, as the whole run's rate did.
func TestETAIgnoresStartUp(t *testing.T) {
	var out bytes.Buffer
	c := newClock()
	b := fixed(New(&out, 1000, Options{Label: "pageclass", Interval: 5 * time.Second}), c)
	c.step(20 * time.Second)
	b.Add(16) // the first batch
	for i := 0; i < 10; i++ {
		c.step(1600 * time.Millisecond)
		b.Add(16)
	}
	want := []string{
		"pageclass: 16/1000 1% 0.8 pages/s",
		"pageclass: 80/1000 8% 3.0 pages/s ETA 1m32s", // 920 pages at 10 a second (the whole run's rate: 5m4s)
		"pageclass: 144/1000 14% 4.4 pages/s ETA 1m26s",
	}
	if l := lines(out.String()); strings.Join(l, "\n") != strings.Join(want, "\n") {
		t.Errorf("output:\n%s\nwant:\n%s", out.String(), strings.Join(want, "\n"))
	}
}

// TestLoggerThroughBarOnTerminal: a logger writing through a Bar that draws
// on a terminal writes text lines, as the command's own logger does there,
// not JSON records between them; off a terminal it stays JSON.
func TestLoggerThroughBarOnTerminal(t *testing.T) {
	for _, tty := range []bool{true, false} {
		var buf bytes.Buffer
		b := New(&buf, 2, Options{Label: "translate"})
		b.tty = tty
		log, err := logging.New(b, "INFO", "")
		if err != nil {
			t.Fatal(err)
		}
		log.Info("document translated", "file", "a.xml")
		isJSON := strings.HasPrefix(strings.TrimLeft(buf.String(), "\r\x1b[K"), "{")
		if isJSON == tty || !strings.Contains(buf.String(), "document translated") {
			t.Errorf("tty=%v: %q", tty, buf.String())
		}
	}
}

// TestWithdraw: items found wrong after they finished count as failed,
// not twice as finished.
func TestWithdraw(t *testing.T) {
	var out bytes.Buffer
	c := newClock()
	b := fixed(New(&out, 3, Options{Label: "translate", Unit: "files"}), c)
	c.step(time.Second)
	b.Add(2)
	b.Fail(1)
	b.Withdraw(2)
	if got := b.Finish(); got != "translate: 3 files in 1.0s (3.0 files/s), of them 3 failed" {
		t.Errorf("Finish() = %q", got)
	}
}

// The figures of each line come with it as Fields; a resumed run's items
// done before it (Keep) are out of the counts, the rate and the ETA, and
// the summary says how many (a resumed translate run showed 62% and an
// ETA of 0.7 s with 15 s left, and "40 files" for 16 translated).
func TestFieldsAndKept(t *testing.T) {
	var out bytes.Buffer
	c := newClock()
	var got []Fields
	b := fixed(New(&out, 10, Options{Label: "translate", Unit: "files", Interval: time.Second, Log: func(_ string, f Fields) {
		got = append(got, f)
	}}), c)
	b.Keep(6) // of the 10 inputs, 6 done before
	for i, name := range []string{"a.xml", "b.xml", "c.xml"} {
		b.SetItem(name)
		c.step(2 * time.Second)
		if i == 1 {
			b.Fail(1)
		} else {
			b.Add(1)
		}
	}
	sum := b.Finish()
	if want := "translate: 3 files in 6.0s (0.5 files/s), of them 1 failed, 6 done before"; sum != want {
		t.Errorf("summary %q, want %q", sum, want)
	}
	want := []Fields{
		{Done: 1, Total: 4, Kept: 6, Item: "a.xml", Rate: 0.5},
		{Done: 2, Failed: 1, Total: 4, Kept: 6, Item: "b.xml", Rate: 0.5, ETA: 4 * time.Second},
		{Done: 3, Failed: 1, Total: 4, Kept: 6, Item: "c.xml", Rate: 0.5, ETA: 2 * time.Second},
		{Done: 3, Failed: 1, Total: 4, Kept: 6, Rate: 0.5, Final: true},
	}
	if len(got) != len(want) {
		t.Fatalf("fields %+v", got)
	}
	for i := range want {
		g := got[i]
		if math.Abs(g.Rate-want[i].Rate) > 1e-9 || math.Abs((g.ETA-want[i].ETA).Seconds()) > 1e-6 {
			t.Errorf("line %d: rate %v ETA %v, want %v %v", i, g.Rate, g.ETA, want[i].Rate, want[i].ETA)
		}
		g.Rate, g.ETA = want[i].Rate, want[i].ETA
		if g != want[i] {
			t.Errorf("line %d: %+v, want %+v", i, got[i], want[i])
		}
	}
	args := fmt.Sprint(got[1].Args()...)
	if want := "done2total4failed1kept6fileb.xmlrate_per_s0.5eta_s4"; strings.ReplaceAll(args, " ", "") != want {
		t.Errorf("Args %q, want %q", args, want)
	}
}

// Items left to do after a passing failure are done in this run but not
// failed: the summary says how many are left (a run exiting 75 said "3
// failed" of inputs it left to do), and the figures carry them.
func TestLeave(t *testing.T) {
	var out bytes.Buffer
	c := newClock()
	var final Fields
	b := fixed(New(&out, 4, Options{Label: "translate", Unit: "files", Log: func(_ string, f Fields) { final = f }}), c)
	c.step(time.Second)
	b.Add(1)
	b.Fail(1)
	b.Leave(2)
	if got := b.Finish(); got != "translate: 4 files in 1.0s (4.0 files/s), of them 1 failed and 2 left to do" {
		t.Errorf("Finish() = %q", got)
	}
	if final.Done != 4 || final.Failed != 1 || final.Left != 2 || fmt.Sprint(final.Args()) != "[done 4 total 4 failed 1 left 2 rate_per_s 4 final true]" {
		t.Errorf("fields %+v, args %v", final, final.Args())
	}
}

// onTerminal makes b draw as on a terminal of the given width.
func onTerminal(b *Bar, cols int) *Bar {
	b.tty, b.redraws = true, true
	b.width = func() int { return cols }
	return b
}

// frameOf is the last line drawn in out.
func frameOf(out string) string {
	frames := strings.Split(out, "\r")
	return strings.TrimSuffix(frames[len(frames)-1], "\x1b[K")
}

// TestLineInColumns: names in CJK, Arabic and emoji (a family joined by
// zero-width joiners) and long names are cut to the terminal's width in
// display columns, between characters, keeping their end; the counts are
// never cut inside a figure (the bar cut names inside a UTF-8 sequence,
// counted bytes, and left "ETA 1.4" of "ETA 1.4s" at 40 columns).
func TestLineInColumns(t *testing.T) {
	names := []string{
		"DRAW/presentation_12_p3.png",
		"目录_中文资料/第一卷_扫描页_0001.png",
		"مخطوطة_عربية_الصفحة_الأولى.png",
		"📜🗺️👨‍👩‍👧‍👦_family_letters_0003.tif",
		strings.Repeat("very_long_folder_name_", 9) + "0017.tif",
	}
	for _, cols := range []int{30, 40, 60, 80, 120, 200} {
		for _, name := range names {
			var out bytes.Buffer
			c := newClock()
			b := onTerminal(fixed(New(&out, 184, Options{Label: "pageclass"}), c), cols)
			c.step(time.Second)
			b.Add(10)
			c.step(time.Second)
			b.Fail(2)
			c.step(time.Second)
			b.SetItem(name)
			line := frameOf(out.String())
			if !utf8.ValidString(line) {
				t.Errorf("%d columns, %s: not UTF-8: %q", cols, name, line)
			}
			if n := cells(line); n > cols-1 {
				t.Errorf("%d columns, %s: line of %d columns: %q", cols, name, n, line)
			}
			if strings.Contains(line, "ETA") && !regexp.MustCompile(`ETA [0-9hm.]+s( |$)`).MatchString(line) ||
				strings.Contains(line, ".0") && !strings.Contains(line, ".0 pages/s") {
				t.Errorf("%d columns, %s: a figure cut: %q", cols, name, line)
			}
			if !strings.HasPrefix(line, "pageclass 12/184") && !strings.HasPrefix(line, "pageclass [") {
				t.Errorf("%d columns, %s: the counts are not first: %q", cols, name, line)
			}
			if cols >= 60 {
				// The end of the name is always shown there (at least
				// the page number and extension), whole when it fits.
				end := name[len(name)-8:]
				if !strings.HasSuffix(line, end) {
					t.Errorf("%d columns, %s: the name's end %q not shown: %q", cols, name, end, line)
				}
				if (cells(name) <= 40 && cols >= 120 || cells(name) <= 28 && cols >= 80) && !strings.HasSuffix(line, " "+name) {
					t.Errorf("%d columns: the name %s not shown whole: %q", cols, name, line)
				}
			}
			if strings.Contains(line, "...") && (strings.Contains(line, "...\u200d") || strings.Contains(line, "...\ufe0f")) {
				t.Errorf("%d columns: the cut name starts with a joiner: %q", cols, line)
			}
		}
	}
	if got := tail("👨‍👩‍👧‍👦x", 5); got != "...x" {
		t.Errorf("tail of a joined emoji: %q, want ...x (no part of the family)", got)
	}
}

// TestSetItemDraws: the bar is drawn as soon as the first item is named
// (a run of one large file drew nothing until it had finished), and a name
// set within 100 ms of the last redraw is drawn when that time is up, so
// the line names the item being worked on, not the one just finished.
func TestSetItemDraws(t *testing.T) {
	var out bytes.Buffer
	c := newClock()
	b := onTerminal(fixed(New(&out, 2, Options{Label: "translate", Unit: "files"}), c), 100)
	var later []func()
	b.after = func(d time.Duration, f func()) {
		if d <= 0 || d > redraw {
			t.Errorf("redraw scheduled in %v", d)
		}
		later = append(later, f)
	}
	b.SetItem("book/0001.alto.xml")
	if got := frameOf(out.String()); !strings.Contains(got, "0/2") || !strings.HasSuffix(got, " book/0001.alto.xml") {
		t.Fatalf("first item not drawn at once: %q", out.String())
	}
	c.step(3 * time.Second)
	b.Add(1) // drawn: 1/2, still naming the first file
	c.step(time.Millisecond)
	b.SetItem("book/0002.alto.xml")
	b.SetItem("book/0002.alto.xml") // one redraw scheduled, not two
	if len(later) != 1 {
		t.Fatalf("%d redraws scheduled, want 1", len(later))
	}
	c.step(redraw)
	later[0]()
	if got := frameOf(out.String()); !strings.Contains(got, "1/2") || !strings.HasSuffix(got, " book/0002.alto.xml") {
		t.Errorf("the next file is not named: %q", got)
	}
	b.Add(1)
	if got := b.Finish(); got != "translate: 2 files in 3.1s (0.6 files/s)" {
		t.Errorf("summary %q", got)
	}
}

// TestOneItemSummary: "1 file", not "1 files".
func TestOneItemSummary(t *testing.T) {
	var out bytes.Buffer
	c := newClock()
	b := fixed(New(&out, 1, Options{Label: "translate", Unit: "files", Interval: -1}), c)
	c.step(2 * time.Second)
	b.Add(1)
	if got := b.Finish(); got != "translate: 1 file in 2.0s (0.5 files/s)" {
		t.Errorf("summary %q", got)
	}
}

// TestDumbTerminal: a terminal that cannot redraw (TERM=dumb) gets the
// plain lines, without escape sequences, and no redraw on SetItem.
func TestDumbTerminal(t *testing.T) {
	var out bytes.Buffer
	c := newClock()
	b := fixed(New(&out, 4, Options{Label: "pageclass", Interval: time.Second}), c)
	b.tty = true // a terminal, redraws false
	b.SetItem("a\nb.png")
	for i := 0; i < 4; i++ {
		c.step(600 * time.Millisecond)
		b.Add(1)
	}
	b.Finish()
	if strings.ContainsAny(out.String(), "\r\x1b") || len(lines(out.String())) != 3 || !strings.Contains(out.String(), "a?b.png") {
		t.Errorf("on a dumb terminal:\n%q", out.String())
	}
}
