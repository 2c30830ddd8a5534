// Package progress reports the progress of long batch work.
//
// On a terminal the Bar redraws one line, at most ten times a second:
//
//	pageclass [=========>          ] 92/184 50% 15.3 pages/s ETA 6s
//
// The line is measured in display columns (a CJK character or an emoji
// takes two) and never cut inside a character: when it is too long the
// figures least needed go first (the rate, the ETA, the percentage, then
// the bar itself), and the item's name keeps its end ("...0017.tif").
//
// When the writer is not a terminal (a log file, CI), or is one that
// cannot redraw (TERM=dumb), nothing is redrawn; a plain line is written
// every Options.Interval instead (none when the interval is negative).
// Finish always writes one summary line:
//
//	pageclass: 184 pages in 12.0s (15.3 pages/s), of them 2 failed
//
// A Bar is safe for concurrent use.
package progress

import (
	"fmt"
	"io"
	"math"
	"os"
	"strings"
	"sync"
	"time"
	"unicode"

	"golang.org/x/term"
	"golang.org/x/text/width"

	"archivekit/internal/utf8name"
)

// Options configure a Bar.
type Options struct {
	// Label starts every line, e.g. the command name.
	Label string
	// Unit names what is counted; "" means "pages".
	Unit string
	// Interval is the period of the plain log lines written when the
	// writer is not a terminal; 0 means 10 seconds, negative means none.
	Interval time.Duration
	// Log, when set, receives those plain lines and the summary line in
	// place of the writer when it is not a terminal, with their figures as
	// Fields, for example to pass them through a JSON logger so the stream
	// stays one record per line (f.Args gives the figures as attributes,
	// for a monitor that reads records, not prose). It is called without
	// the Bar's lock held, so it may write to the Bar.
	Log func(line string, f Fields)
}

// Fields are the figures of a progress or summary line.
type Fields struct {
	// Done, Failed and Total count this run's items (Failed are among
	// Done); Left those among Done left to do after a passing failure
	// (Leave), not among Failed; Kept counts those done before it (Keep),
	// not in Total.
	Done, Failed, Left, Total, Kept int
	// Item is the item being worked on (SetItem); "" in the summary.
	Item string
	// Rate is items per second over the run so far; ETA the time left
	// (0 when not known yet).
	Rate float64
	ETA  time.Duration
	// Final marks the summary line (Finish).
	Final bool
}

// Args are f as slog attribute pairs: done, total, failed, kept (when
// any), file (when set), rate_per_s, eta_s (when known) and final.
func (f Fields) Args() []any {
	a := []any{"done", f.Done, "total", f.Total, "failed", f.Failed}
	if f.Left > 0 {
		a = append(a, "left", f.Left)
	}
	if f.Kept > 0 {
		a = append(a, "kept", f.Kept)
	}
	if f.Item != "" {
		a = append(a, "file", f.Item)
	}
	a = append(a, "rate_per_s", math.Round(f.Rate*100)/100)
	if f.ETA > 0 {
		a = append(a, "eta_s", math.Round(f.ETA.Seconds()*10)/10)
	}
	if f.Final {
		a = append(a, "final", true)
	}
	return a
}

// Bar counts finished items against a total that may grow.
type Bar struct {
	mu      sync.Mutex
	w       io.Writer
	opt     Options
	tty     bool
	redraws bool // a terminal that can redraw (not TERM=dumb)
	width   func() int
	now     func() time.Time
	// after runs f after d (time.AfterFunc): the redraw of an item named
	// too soon after the last one (SetItem).
	after    func(d time.Duration, f func())
	pending  bool // a redraw is scheduled
	start    time.Time
	last     time.Time // last redraw or log line
	total    int
	done     int
	failed   int
	left     int  // finished in passing, left to do (Leave): among done, not failed
	kept     int  // done before this run (Keep): not in total, done or the rate
	drawn    bool // a bar line is on screen
	finished bool
	item     string // the item being worked on (SetItem)

	// first and firstDone: when the first items finished and how many;
	// the ETA is the pace since then, so a start-up (models loading, the
	// first batch) does not stretch it.
	first     time.Time
	firstDone int
}

// redraw is the shortest time between two redraws on a terminal.
const redraw = 100 * time.Millisecond

// New returns a Bar writing to w (usually os.Stderr) for total items. w is
// treated as a terminal when it is an *os.File attached to one.
func New(w io.Writer, total int, opt Options) *Bar {
	if opt.Unit == "" {
		opt.Unit = "pages"
	}
	if opt.Interval == 0 {
		opt.Interval = 10 * time.Second
	}
	b := &Bar{w: w, opt: opt, total: total, now: time.Now, width: func() int { return 80 },
		after: func(d time.Duration, f func()) { time.AfterFunc(d, f) }}
	if f, ok := w.(*os.File); ok && term.IsTerminal(int(f.Fd())) {
		b.tty = true
		b.redraws = os.Getenv("TERM") != "dumb"
		b.width = func() int {
			if cols, _, err := term.GetSize(int(f.Fd())); err == nil && cols > 20 {
				return cols
			}
			return 80
		}
	}
	b.start = b.now()
	b.last = b.start
	return b
}

// AddTotal grows the total by n, e.g. when a PDF turns out to hold n+1
// pages where one item was counted.
func (b *Bar) AddTotal(n int) {
	b.mu.Lock()
	b.total += n
	b.mu.Unlock()
}

// SetItem names the item being worked on (a file); the lines show it after
// the counts until the next SetItem, so a stuck or slow run says where it
// is. On a terminal the line is redrawn with it (at most ten times a
// second: one named sooner is drawn when that time is up), so the bar shows
// from the first item on and names the item being worked on, not the one
// that just finished. Control characters in name are shown as "?".
func (b *Bar) SetItem(name string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.item = printable(name)
	if !b.redraws || b.finished {
		return
	}
	now := b.now()
	if since := now.Sub(b.last); since >= redraw || !b.drawn {
		b.draw(now)
	} else if !b.pending {
		b.pending = true
		b.after(redraw-since, func() {
			b.mu.Lock()
			defer b.mu.Unlock()
			b.pending = false
			if !b.finished {
				b.draw(b.now())
			}
		})
	}
}

// draw redraws the terminal line (b.mu held).
func (b *Bar) draw(now time.Time) {
	b.last = now
	fmt.Fprintf(b.w, "\r%s\x1b[K", b.line(now))
	b.drawn = true
}

// Keep takes n items of the total out of this run's count: they were done
// before it (a resumed run keeps them). The counts, the rate and the ETA
// are then this run's work; the summary says how many were kept.
func (b *Bar) Keep(n int) {
	b.mu.Lock()
	b.total -= n
	b.kept += n
	b.mu.Unlock()
}

// Add records n finished items.
func (b *Bar) Add(n int) { b.add(n, 0) }

// Fail records n finished items that failed; they count as done.
func (b *Bar) Fail(n int) { b.add(n, n) }

// Leave records n finished items left to do after a passing failure (the
// service or the network failed them, not their content): they count as
// done in this run, as left, not as failed ("3 failed" read as the inputs'
// failures while the run said they were to do again).
func (b *Bar) Leave(n int) {
	b.mu.Lock()
	b.left += n
	b.mu.Unlock()
	b.add(n, 0)
}

// Withdraw counts n items already recorded as finished as failed: found
// wrong after they finished (they stay done).
func (b *Bar) Withdraw(n int) {
	b.mu.Lock()
	b.failed += n
	b.mu.Unlock()
}

func (b *Bar) add(n, failed int) {
	b.mu.Lock()
	if b.done == 0 && n > 0 {
		b.first, b.firstDone = b.now(), n
	}
	b.done += n
	b.failed += failed
	if b.finished {
		b.mu.Unlock()
		return
	}
	now := b.now()
	var logLine string
	var fields Fields
	switch {
	case b.redraws && (now.Sub(b.last) >= redraw || b.done >= b.total):
		b.draw(now)
	case !b.redraws && b.opt.Interval > 0 && now.Sub(b.last) >= b.opt.Interval:
		b.last = now
		if b.opt.Log != nil {
			logLine, fields = b.status(now), b.fields(now)
		} else {
			fmt.Fprintln(b.w, b.status(now))
		}
	}
	b.mu.Unlock()
	if logLine != "" {
		b.opt.Log(logLine, fields)
	}
}

// fields are the figures of the lines at now.
func (b *Bar) fields(now time.Time) Fields {
	f := Fields{Done: b.done, Failed: b.failed, Left: b.left, Total: b.total, Kept: b.kept, Item: b.item, ETA: b.eta(now)}
	if el := now.Sub(b.start); el > 0 {
		f.Rate = float64(b.done) / el.Seconds()
	}
	if b.finished {
		f.Item, f.Final, f.ETA = "", true, 0
	}
	return f
}

// eta is the time left at the pace since the first items finished, 0
// until more have finished after them.
func (b *Bar) eta(now time.Time) time.Duration {
	if since := now.Sub(b.first); b.done > b.firstDone && b.total > b.done && since > 0 {
		return time.Duration(float64(since) * float64(b.total-b.done) / float64(b.done-b.firstDone))
	}
	return 0
}

// Write writes p (whole lines, e.g. from a log handler) to the Bar's
// writer without garbling the bar: on a terminal the bar line is cleared
// first and redrawn after. It lets a logger share the terminal with the
// bar (slog.NewTextHandler(bar, nil)).
func (b *Bar) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if !b.drawn || b.finished {
		return b.w.Write(p)
	}
	if _, err := io.WriteString(b.w, "\r\x1b[K"); err != nil {
		return 0, err
	}
	n, err := b.w.Write(p)
	if err == nil {
		_, err = fmt.Fprintf(b.w, "%s\x1b[K", b.line(b.now()))
	}
	return n, err
}

// Terminal reports whether the Bar draws on a terminal; it implements
// logging.Terminal, so a logger writing through the Bar picks the text
// format there, as the command's own logger does, instead of JSON.
func (b *Bar) Terminal() bool { return b.tty }

// Finish clears the bar and writes the summary line; it returns that line
// (without the newline). Later calls do nothing and return "".
func (b *Bar) Finish() string {
	b.mu.Lock()
	if b.finished {
		b.mu.Unlock()
		return ""
	}
	b.finished = true
	el := b.now().Sub(b.start)
	unit := b.opt.Unit
	if b.done == 1 {
		unit = strings.TrimSuffix(unit, "s") // "1 file", not "1 files"
	}
	s := fmt.Sprintf("%s %d %s in %s (%s %s/s)", b.prefix(":"), b.done, unit, dur(el), rate(b.done, el), b.opt.Unit)
	// The failed and those left to do are among the count: "of them"
	// (a run of 12 pages classified and 1 failed said "13 pages …, 1
	// failed" above a summary of 12 pages classified).
	var among []string
	if b.failed > 0 {
		among = append(among, fmt.Sprintf("%d failed", b.failed))
	}
	if b.left > 0 {
		among = append(among, fmt.Sprintf("%d left to do", b.left))
	}
	if len(among) > 0 {
		s += ", of them " + strings.Join(among, " and ")
	}
	if b.kept > 0 {
		s += fmt.Sprintf(", %d done before", b.kept)
	}
	s = strings.TrimSpace(s)
	if b.drawn {
		fmt.Fprint(b.w, "\r\x1b[K")
	}
	if b.tty || b.opt.Log == nil {
		fmt.Fprintln(b.w, s)
		b.mu.Unlock()
		return s
	}
	f := b.fields(b.now())
	b.mu.Unlock()
	b.opt.Log(s, f)
	return s
}

func (b *Bar) prefix(sep string) string {
	if b.opt.Label == "" {
		return ""
	}
	return b.opt.Label + sep
}

// counts is "92/184 50% 15.3 pages/s ETA 6s" (countFields joined).
func (b *Bar) counts(now time.Time) string {
	f := b.countFields(now)
	return strings.Join(append(f.all(), f.item), " ")
}

// countParts are the parts of the counts; rate, eta and percent are "" when
// not shown.
type countParts struct {
	done, percent, rate, eta, failed, left, item string
}

// all are the parts shown, in order, the item left out.
func (c countParts) all() []string {
	var out []string
	for _, s := range []string{c.done, c.percent, c.rate, c.eta, c.failed, c.left} {
		if s != "" {
			out = append(out, s)
		}
	}
	return out
}

// countFields are the counts' parts: the rate is the whole run's; the ETA
// is the pace since the first items finished, shown once more have
// finished after them.
func (b *Bar) countFields(now time.Time) countParts {
	el := now.Sub(b.start)
	c := countParts{done: fmt.Sprintf("%d/%d", b.done, b.total), rate: fmt.Sprintf("%s %s/s", rate(b.done, el), b.opt.Unit)}
	if b.total > 0 {
		c.percent = fmt.Sprintf("%d%%", min(100, 100*b.done/b.total))
	}
	if eta := b.eta(now); eta > 0 {
		c.eta = "ETA " + dur(eta)
	}
	if b.failed > 0 {
		c.failed = fmt.Sprintf("%d failed", b.failed)
	}
	if b.left > 0 {
		c.left = fmt.Sprintf("%d left", b.left)
	}
	if !b.finished {
		c.item = b.item
	}
	return c
}

// minItem is the fewest columns the item's name keeps before the bar
// itself makes way for it.
const minItem = 16

// line is the terminal line: label, bar, counts and item, in the
// terminal's width (display columns). The bar's width follows the
// terminal's, not the counts' (it changed as the rate, the ETA and the
// file name did). When the line is too long the rate, the ETA and the
// percentage go first, whole, until the item's name keeps minItem columns
// (or all of its own); the bar (from about 85 columns up, as wide as the
// terminal allows) is left out when the name would keep fewer; the name
// keeps its end.
func (b *Bar) line(now time.Time) string {
	w := b.width() - 1
	head := b.prefix(" ")
	c := b.countFields(now)
	counts := strings.Join(c.all(), " ")
	need := 0 // the columns the item's name keeps at least
	if c.item != "" {
		need = 1 + min(cells(c.item), minItem)
	}
	for _, drop := range []*string{&c.rate, &c.eta, &c.percent} {
		if cells(head)+cells(counts)+need <= w {
			break
		}
		*drop = ""
		counts = strings.Join(c.all(), " ")
	}
	avail := w - cells(head) - cells(counts)
	bar := ""
	if room := min(40, (w-cells(head)-45)/3); room >= 10 && avail-room-3 >= need {
		fill := 0
		if b.total > 0 {
			fill = min(room, room*b.done/b.total)
		}
		arrow := ""
		if fill < room && fill > 0 {
			fill--
			arrow = ">"
		}
		bar = "[" + strings.Repeat("=", fill) + arrow + strings.Repeat(" ", room-fill-len(arrow)) + "] "
		avail -= room + 3
	}
	s := head + bar + counts
	if c.item != "" && avail >= 2 {
		s += " " + tail(c.item, avail-1)
	}
	return head + cut(strings.TrimPrefix(s, head), w-cells(head))
}

// cells is the width of s in display columns: two for East Asian wide and
// full-width characters (CJK, emoji), none for combining marks, joiners
// and other format characters, one for the rest.
func cells(s string) int {
	n := 0
	for _, r := range s {
		n += runeCells(r)
	}
	return n
}

func runeCells(r rune) int {
	switch {
	case unicode.In(r, unicode.Mn, unicode.Me, unicode.Cf):
		return 0
	case r >= 0x1F000 && r <= 0x1FAFF, r >= 0x2600 && r <= 0x27BF:
		// Emoji and pictographs: two columns where the terminal shows
		// them as emoji; counted two so the line never wraps.
		return 2
	}
	switch width.LookupRune(r).Kind() {
	case width.EastAsianWide, width.EastAsianFullwidth:
		return 2
	}
	return 1
}

// tail is s cut to at most n columns keeping its end, marked "..." where
// cut; the cut falls between characters, and a character joined to the
// one before it (a combining mark, an emoji after a zero-width joiner) is
// not left at its start.
func tail(s string, n int) string {
	if cells(s) <= n {
		return s
	}
	if n < 4 {
		return cut("...", n)
	}
	rs := []rune(s)
	i, used := len(rs), 0
	for i > 0 && used+runeCells(rs[i-1]) <= n-3 {
		used += runeCells(rs[i-1])
		i--
	}
	for i < len(rs) && (runeCells(rs[i]) == 0 || i > 0 && rs[i-1] == '\u200d') {
		i++
	}
	return "..." + string(rs[i:])
}

// cut is s cut to at most n columns, between characters.
func cut(s string, n int) string {
	used := 0
	for i, r := range s {
		if used += runeCells(r); used > n {
			return s[:i]
		}
	}
	return s
}

// printable is name with control characters (a newline in a file name)
// shown as "?", and the bidirectional controls, which would reorder the
// rest of the line, left out (utf8name.IsBidiControl).
func printable(name string) string {
	return strings.Map(func(r rune) rune {
		switch {
		case utf8name.IsBidiControl(r):
			return -1
		case unicode.IsControl(r):
			return '?'
		}
		return r
	}, name)
}

// status is the plain log line: "pageclass: 92/184 50% 15.3 pages/s ETA 6s".
func (b *Bar) status(now time.Time) string {
	return strings.TrimSpace(b.prefix(":") + " " + b.counts(now))
}

func rate(n int, el time.Duration) string {
	if el <= 0 {
		return "-"
	}
	return fmt.Sprintf("%.1f", float64(n)/el.Seconds())
}

// dur formats a duration to whole seconds above a minute, tenths below.
func dur(d time.Duration) string {
	if d < time.Minute {
		return fmt.Sprintf("%.1fs", d.Seconds())
	}
	return d.Round(time.Second).String()
}
