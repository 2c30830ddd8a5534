package jobs

import (
	"bufio"
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"mime/multipart"
	"net/http"
	"net/textproto"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/riverqueue/river"

	"archivekit/internal/fetch"
	"archivekit/internal/ledger"
	"archivekit/internal/service"
)

// work runs a job's items not yet done (runItems: ItemWorkers at once,
// one after the other where they join), then ends the job (finish).
func (q *Queue) work(ctx context.Context, id string) (err error) {
	state, f, _, err := q.jobState(ctx, id)
	if errors.Is(err, errNotFound) {
		return river.JobCancel(err)
	}
	if err != nil {
		return err
	}
	if state != Queued && state != Running {
		return nil // ended before (canceled, or finished before a stop)
	}
	if _, err := q.setState(ctx, id, Running, Queued); err != nil {
		return err
	}
	if _, err := q.exec(ctx, `UPDATE archivekit_job SET paused = NULL WHERE id = ? AND paused IS NOT NULL`, id); err != nil {
		return err
	}
	ctx = context.WithValue(ctx, scratchKey{}, &Scratch{q: q, id: id, used: -1})
	defer func() {
		// A job canceled keeps none of its scratch: this run, cut by the
		// cancel (in its book's reading, say), may have written to it
		// since (it kept a dozen fetched files).
		bg := context.WithoutCancel(ctx)
		if st, _, _, e := q.jobState(bg, id); e == nil && st == Canceled {
			if err := q.clearScratch(bg, id); err != nil {
				q.log.Warn("a canceled job's scratch is not removed; it is removed with the job", "job", id, "error", err)
			}
		}
	}()
	if f.Book != "" {
		if ok, err := q.readBook(ctx, id, f); err != nil || !ok {
			return err
		}
	}
	items, err := q.items(ctx, id)
	if err != nil {
		return err
	}
	joins := q.joiner(items)
	ahead := q.fetchAhead(ctx, items, joining(items, joins))
	held := map[int]*fetched{} // next items' files, fetched for the item before them (joins)
	defer func() {
		// A run that pauses (a stop, a passing failure) keeps what it
		// fetched for the items to come; one whose context ended (its
		// lease lost, the job canceled) does not.
		if err != nil && ctx.Err() == nil {
			q.keepAhead(ctx, id, ahead, held)
		}
		ahead.stop()
	}()
	n := q.ItemWorkers()
	if linked(items, joins) {
		n = 1 // joined items run one after the other, each knowing its neighbours
	}
	canceled, err := q.runItems(ctx, id, items, f, joins, ahead, held, n)
	for err == nil && !canceled {
		// Items withdrawn while this run went on are queued again
		// (Withdraw): they run before the job ends. Each withdrawal
		// costs a run of the item's UnavailableTries, so this ends.
		if items, err = q.items(ctx, id); err != nil {
			return err
		}
		if !slices.ContainsFunc(items, func(it item) bool { return it.State == Queued }) {
			break
		}
		canceled, err = q.runItems(ctx, id, items, f, joins, ahead, held, n)
	}
	if err != nil || canceled {
		return err
	}
	if err := ctx.Err(); err != nil {
		return err // the lease lost: nothing more is recorded
	}
	return q.finish(ctx, id)
}

// maxItemWorkers bounds JOBS_ITEM_WORKERS.
const maxItemWorkers = 64

// DefaultItemWorkers sets how many of a job's items run at once to n
// (1 to 64), unless JOBS_ITEM_WORKERS set it: for a service that knows
// its default once warm (pageclass-api: more on a GPU, whose batches the
// items fill). Call it before Start.
func (q *Queue) DefaultItemWorkers(n int) {
	if q != nil && !q.opts.itemWorkersSet {
		q.opts.ItemWorkers = min(max(n, 1), maxItemWorkers)
	}
}

// ItemWorkers is how many of a job's items run at once (at least 1; 0
// for a nil Queue).
func (q *Queue) ItemWorkers() int {
	if q == nil {
		return 0
	}
	return max(q.opts.ItemWorkers, 1)
}

// runItems runs a job's queued items n at once, started in item order,
// each with its file fetched ahead (or held for it: joins) and its links
// to its neighbours (itemLink; n is 1 where items join). When the service
// stops, the job is canceled, or an item pauses the run (a passing
// failure) or fails it, no further item starts; the items running go on
// to their end, and then the first such error is returned (canceled true,
// and no error, for a canceled job). The files of items that will run
// again are put in held, for keepAhead.
func (q *Queue) runItems(ctx context.Context, id string, items []item, f *form, joins func(a, b int) bool, a *ahead, held map[int]*fetched, n int) (canceled bool, err error) {
	var (
		wg    sync.WaitGroup
		mu    sync.Mutex // held, first
		first error
		slots = make(chan struct{}, n)
	)
	fail := func(err error) {
		mu.Lock()
		defer mu.Unlock()
		if first == nil {
			first = err
		}
	}
	failed := func() bool {
		mu.Lock()
		defer mu.Unlock()
		return first != nil
	}
	for k, it := range items {
		if it.State != Queued {
			continue
		}
		slots <- struct{}{} // an item ended, or fewer than n run
		if failed() || ctx.Err() != nil {
			break
		}
		if q.stopping() {
			q.log.Info("job paused by the stop; it resumes at the next start or on another replica", "job", id, "item", it.Index)
			fail(river.JobSnooze(q.pauseFor()))
			break
		}
		st, _, _, err := q.jobState(ctx, id)
		if err != nil {
			fail(err)
			break
		}
		if st == Canceled {
			canceled = true
			break
		}
		mu.Lock()
		got := held[it.Index]
		delete(held, it.Index)
		if got == nil {
			got = a.take(it.Index)
		}
		// Only joined items (n 1, none running) have links.
		l, err := q.itemLink(ctx, id, items, k, joins, a, held)
		if err != nil && got != nil {
			held[it.Index] = got // kept with the others
		}
		mu.Unlock()
		if err != nil {
			fail(err)
			break
		}
		wg.Add(1)
		go func() {
			defer func() { <-slots; wg.Done() }()
			if err := q.runItem(ctx, id, it, f, got, l); err != nil {
				mu.Lock()
				if got != nil {
					held[it.Index] = got // the item runs again: kept with the others
				}
				mu.Unlock()
				fail(err)
			}
		}()
	}
	wg.Wait()
	if first != nil {
		if st, _, _, _ := q.jobState(context.WithoutCancel(ctx), id); st == Canceled {
			return true, nil
		}
	}
	return canceled, first
}

// finish ends a job whose items are all done: failed when none succeeded
// (every item failed or was skipped; when every item was skipped, the
// job's error says so), else succeeded.
func (q *Queue) finish(ctx context.Context, id string) error {
	st, err := q.status(ctx, id)
	if err != nil {
		return err
	}
	end := Succeeded
	if st.Items.Total > 0 && st.Items.Failed+st.Items.Skipped == st.Items.Total {
		end = Failed
	}
	if end == Failed && st.Items.Failed == 0 {
		why := fmt.Sprintf("every item was skipped: none of the %d had anything to run", st.Items.Total)
		if _, err := q.exec(ctx, `UPDATE archivekit_job SET error = ? WHERE id = ?`, why, id); err != nil {
			return err
		}
	}
	if err := q.clearScratch(ctx, id); err != nil {
		q.log.Warn("what the job's items did not take of its scratch is not removed; it is removed with the job", "job", id, "error", err)
	}
	ended, err := q.setState(ctx, id, end, Running, Queued)
	if ended && st.StartedAt != nil && q.opts.Metrics != nil {
		q.opts.Metrics.Observe(metricDuration, time.Since(*st.StartedAt).Seconds())
	}
	level := slog.LevelInfo
	if st.Items.Failed > 0 {
		level = slog.LevelWarn // an operator reading the log sees the failures
	}
	q.log.Log(ctx, level, "job ended", "job", id, "state", end, "items", st.Items.Total, "failed", st.Items.Failed, "skipped", st.Items.Skipped)
	return err
}

// runItem sends item it to the synchronous handler and records its answer
// (got: a book item's file fetched ahead, nil when it was not). An item
// cut by ctx records nothing and runs again later.
func (q *Queue) runItem(ctx context.Context, id string, it item, f *form, got *fetched, l link) error {
	// Withdraw may name this run while it runs; one not recorded (a
	// pause, a stop) leaves the item's next run free.
	q.runs(itemRef{id, it.Index}, true)
	defer q.runs(itemRef{id, it.Index}, false)
	if _, err := q.exec(ctx, `UPDATE archivekit_item SET runs = runs + 1 WHERE job_id = ? AND idx = ?`, id, it.Index); err != nil {
		return err
	}
	ictx, cancel := ctx, context.CancelFunc(func() {})
	if q.opts.ItemTimeout > 0 {
		// A file fetched ahead took part of the item's time already.
		ictx, cancel = context.WithTimeout(ctx, q.opts.ItemTimeout-got.duration())
	}
	defer cancel()
	open, err := q.itemInput(ictx, id, &it, got)
	var in io.ReadCloser
	if err == nil {
		in, err = open()
	}
	if ctx.Err() != nil {
		return ctx.Err()
	}
	var fetchErr *fetchError
	var bad *badFile
	var skip *SkipError
	switch {
	case errors.As(err, &skip):
		return q.record(ctx, id, it.Index, outcome{state: Skipped, detail: skip.Reason})
	case errors.As(err, &fetchErr):
		if wait, ok := q.fetchLater(fetchErr.err, it.Runs+1); ok {
			q.log.Warn("item's file not fetched (its server failed for now): the job pauses and runs it again", "job", id, "item", it.Index,
				"name", it.Name, "error", fetchErr.err.Error(), "run", it.Runs+1, "of", q.unavailableTries(), "wait", wait.String())
			q.pause(ctx, id, "its file not fetched: "+fetchErr.err.Error(), &it, wait)
			return river.JobSnooze(wait)
		}
		// A book's file that cannot be fetched: the item fails, as a
		// synchronous request fails when its upstream does.
		return q.failUnrun(ctx, id, it.Index, http.StatusBadGateway, service.ReasonFetchFailed, fetchErr.Error())
	case errors.As(err, &bad):
		return q.failUnrun(ctx, id, it.Index, http.StatusUnprocessableEntity, service.ReasonBadBook, bad.Error())
	}
	if err != nil {
		return fmt.Errorf("item %d: %w", it.Index, err)
	}
	defer in.Close()
	body, err := q.newBody(id, it.Index)
	if err != nil {
		return err
	}
	defer body.discard()

	r, file := q.route(&it, in, open)
	target, h := r.Path, r.Handler
	pr, pw := io.Pipe()
	mw := multipart.NewWriter(pw)
	go func() { pw.CloseWithError(writeForm(mw, q.itemForm(f, r), q.opts.ItemField, it, file)) }()
	if f.Query != "" {
		target += "?" + f.Query
	}
	ann := &annotation{}
	rctx := context.WithValue(context.WithValue(ictx, annotationKey{}, ann), itemKey{}, itemRef{id, it.Index})
	if f.BookNote != nil {
		rctx = context.WithValue(rctx, bookNoteKey{}, f.BookNote)
	}
	if l.next != nil || l.prev != nil {
		rctx = context.WithValue(rctx, linkKey{}, l)
	}
	req, err := http.NewRequestWithContext(rctx, http.MethodPost, target, pr)
	if err != nil {
		pr.Close()
		return err
	}
	req.Header.Set("Content-Type", mw.FormDataContentType())
	req.RemoteAddr = "jobs"
	a := &answer{header: http.Header{}, body: body.w}
	h.ServeHTTP(a, req)
	pr.Close()
	if err := ctx.Err(); err != nil {
		return err
	}
	if ictx.Err() != nil && a.status == 0 {
		// Cut by the item deadline without an answer, as the service
		// answers a request past REQUEST_TIMEOUT_S.
		a.header.Set("Content-Type", "application/json")
		a.status = http.StatusGatewayTimeout
		_, _ = body.w.Write(problemBody(a.status, service.ReasonTimeout, fmt.Sprintf("the item took longer than %v (each item's time limit, REQUEST_TIMEOUT_S) and its work was stopped", q.opts.ItemTimeout)))
	}
	if a.err != nil {
		return fmt.Errorf("item %d: writing the answer: %w", it.Index, a.err)
	}
	if err := q.holdAnswer(ctx, id, it, body); err != nil {
		return err
	}
	status := a.code()
	if wait, ok := q.retryLater(status, a.header, body.peek, it.Runs+1); ok {
		detail, reason := errorDetail(body.peek())
		q.log.Warn("item answered unavailable: the job pauses and runs it again", "job", id, "item", it.Index,
			"name", it.Name, "status", status, "reason", string(reason), "detail", detail, "run", it.Runs+1, "of", q.unavailableTries(), "wait", wait.String())
		q.pause(ctx, id, fmt.Sprintf("%d %s: %s", status, reason, detail), &it, wait)
		return river.JobSnooze(wait)
	}
	out, err := body.keep()
	if err != nil {
		return err
	}
	o := outcome{state: Succeeded, status: status, ctype: a.header.Get("Content-Type"), disposition: a.header.Get("Content-Disposition"), headers: answerHeaders(a.header), out: out}
	if o.status < 200 || o.status > 299 {
		o.state = Failed
		o.detail, o.reason = errorDetail(out)
	}
	var annErr error
	o.summary, annErr = ann.get()
	if annErr != nil {
		q.log.Warn("item summary not stored", "job", id, "item", it.Index, "error", annErr.Error())
	}
	// A withdrawal (Withdraw) sees the item either before its end is
	// recorded, and is applied here, or after.
	q.withdrawing.RLock()
	defer q.withdrawing.RUnlock()
	if o, err = q.withdrawOnEnd(id, it.Index, o); err != nil {
		return err
	}
	if o.again {
		return nil // taken back: it stays queued, and work runs it again
	}
	return q.record(ctx, id, it.Index, o)
}

// outcome is how an item ended: its state, the answer's status, content
// type and disposition, a failed item's error detail and reason code, the
// answer, and the summary its handler attached (Annotate; nil for none).
type outcome struct {
	state                      string
	status                     int
	ctype, disposition, detail string
	// headers are the answer's other headers kept (answerHeaders).
	headers      string
	reason       service.Reason
	out, summary []byte
	// again marks a withdrawal (Withdraw) of an item with runs left: it
	// is not recorded, and runs again.
	again bool
}

// outcomeUpdate is the one statement that records item i's outcome while
// it is in state from (queued: it runs no more; succeeded: Withdraw): an
// item recorded done has its answer (in its row on PostgreSQL; already in
// its file on SQLite).
func (q *Queue) outcomeUpdate(id string, i int, o outcome, from string) (string, []any) {
	var summary, reason, headers any
	if o.headers != "" {
		headers = o.headers
	}
	if o.summary != nil {
		summary = string(o.summary)
	}
	if o.reason != "" {
		reason = string(o.reason)
	}
	set, args := "", []any{o.state, o.status, o.ctype, o.disposition, headers, o.detail, reason, summary}
	if q.pool != nil {
		set, args = ", output = ?", append(args, o.out)
	}
	return `UPDATE archivekit_item SET state = ?, status = ?, out_type = ?, out_disposition = ?, out_headers = ?, error = ?, reason = ?, summary = ?` + set + ` WHERE job_id = ? AND idx = ? AND state = ?`,
		append(args, id, i, from)
}

// record records item i's outcome.
func (q *Queue) record(ctx context.Context, id string, i int, o outcome) error {
	query, args := q.outcomeUpdate(id, i, o, Queued)
	_, err := q.exec(ctx, query, args...)
	if err == nil {
		q.count(metricItems, o.state)
		q.notify()
	}
	return err
}

// writeAnswer writes item i's answer file (SQLite), synced and renamed
// into place.
func (q *Queue) writeAnswer(id string, i int, b []byte) error {
	body, err := q.newBody(id, i)
	if err != nil {
		return err
	}
	defer body.discard()
	if _, err := body.w.Write(b); err != nil {
		return err
	}
	_, err = body.keep()
	return err
}

// failUnrun records item i failed without running it, with the answer
// the service writes for such an error (problemBody).
func (q *Queue) failUnrun(ctx context.Context, id string, i, status int, reason service.Reason, detail string) error {
	out := problemBody(status, reason, detail)
	if q.pool == nil {
		if err := q.writeAnswer(id, i, out); err != nil {
			return err
		}
	}
	return q.record(ctx, id, i, outcome{state: Failed, status: status, ctype: "application/json", detail: detail, reason: reason, out: out})
}

// fetchError is a book item's file that could not be fetched.
type fetchError struct{ err error }

func (e *fetchError) Error() string { return "not fetched: " + e.err.Error() }

// badFile is a book item's file, fetched, that BookInput.Check refused.
type badFile struct{ err error }

func (e *badFile) Error() string { return e.err.Error() }

// itemInput returns what opens item it's file: the stored upload, or a
// book's page, fetched once: ahead (got), else here (it.InType becomes the
// type its server gave).
func (q *Queue) itemInput(ctx context.Context, id string, it *item, got *fetched) (func() (io.ReadCloser, error), error) {
	if it.Source == "" {
		i := it.Index
		return func() (io.ReadCloser, error) { return q.input(ctx, id, i) }, nil
	}
	if q.opts.Book == nil {
		return nil, &fetchError{errors.New("this service takes no book")}
	}
	if got == nil {
		got = q.fetch(ctx, it.Source)
	}
	data, err := got.data, got.err
	if err != nil {
		return nil, &fetchError{err}
	}
	if got.ctype != "" {
		it.InType = got.ctype
	}
	if q.opts.Book.Check != nil {
		if err := q.checkFile(ctx, id, it, data); err != nil {
			return nil, err
		}
	}
	return func() (io.ReadCloser, error) { return bytesFile{bytes.NewReader(data)}, nil }, nil
}

// checkFile checks a book item's fetched file (BookInput.Check) and
// records the ref Check returns when it differs from the item's.
func (q *Queue) checkFile(ctx context.Context, id string, it *item, data []byte) error {
	var ref BookRef
	if r := bookRef(it.Ref); r != nil {
		ref = *r
	}
	got, err := q.opts.Book.Check(data, ref)
	if skip := (*SkipError)(nil); errors.As(err, &skip) {
		return skip
	}
	if err != nil {
		return &badFile{err}
	}
	if got == ref {
		return nil
	}
	b, err := json.Marshal(got)
	if err != nil {
		return err
	}
	if _, err := q.exec(ctx, `UPDATE archivekit_item SET ref = ? WHERE job_id = ? AND idx = ?`, string(b), id, it.Index); err != nil {
		return err
	}
	it.Ref = string(b)
	return nil
}

// route is the route that runs item it, Options.Pick's choice by the
// item's file in (open reads it again) where Pick is set, else Path and
// Handler, and the reader to send in the place of in; it.InType becomes
// the content type Pick gives.
func (q *Queue) route(it *item, in io.Reader, open func() (io.ReadCloser, error)) (Route, io.Reader) {
	def := Route{Path: q.opts.Path, Handler: q.opts.Handler}
	if q.opts.Pick == nil {
		return def, in
	}
	br := bufio.NewReaderSize(in, PickHead)
	// A file shorter than PickHead gives its whole self; a read error
	// comes back to the form's copy.
	head, _ := br.Peek(PickHead)
	r := q.opts.Pick(ItemFile{ContentType: it.InType, Name: it.Name, Head: bytes.Clone(head), Open: open})
	if r.ContentType != "" {
		it.InType = r.ContentType
	}
	if r.Handler == nil {
		def.Omit = r.Omit
		return def, br
	}
	return r, br
}

// itemBody is where an item's answer goes as the handler writes it: a
// file beside its final place in the state folder (SQLite), or memory,
// for the database (PostgreSQL). What the file refuses (a full disk) is
// held in memory, up to maxHeld bytes, and written when there is room
// (holdAnswer): the item's work is not done again for it.
type itemBody struct {
	w    io.Writer
	file partFile
	path string // the answer's final place (SQLite)
	buf  *bytes.Buffer
	// held is the end of the answer the file refused, werr its error
	// (nil: all is in the file).
	held []byte
	werr error
}

// partFile is an answer's file while it is written (an *os.File).
type partFile interface {
	io.WriteCloser
	Sync() error
	Name() string
}

// maxHeld bounds the part of an answer held in memory while its file
// cannot be written (per item at work).
const maxHeld = 64 << 20

// holdWaitDefault is the first wait before a held answer is written again;
// the waits double up to holdWaitMax, for holdFor in all.
const (
	holdWaitDefault = time.Second
	holdWaitMax     = 30 * time.Second
	holdFor         = 15 * time.Minute
)

func (q *Queue) newBody(id string, i int) (*itemBody, error) {
	if q.pool != nil {
		buf := &bytes.Buffer{}
		return &itemBody{w: buf, buf: buf}, nil
	}
	out := q.outPath(id, i)
	if err := os.MkdirAll(filepath.Dir(out), 0o777); err != nil {
		return nil, err
	}
	create := q.opts.createPart
	if create == nil {
		create = func(path string) (partFile, error) { return os.Create(path) }
	}
	tmp, err := create(out + ".part")
	if err != nil {
		return nil, err
	}
	b := &itemBody{file: tmp, path: out}
	b.w = heldWriter{b}
	return b, nil
}

// heldWriter writes an answer to its file, holding what the file refuses.
type heldWriter struct{ b *itemBody }

func (w heldWriter) Write(p []byte) (int, error) {
	b, n := w.b, len(p)
	if b.werr == nil {
		k, err := b.file.Write(p)
		if err == nil {
			return n, nil
		}
		b.werr, p = err, p[k:]
	}
	if len(b.held)+len(p) > maxHeld {
		return 0, fmt.Errorf("%w (and more than the %d MiB of the answer held until there is room)", b.werr, maxHeld>>20)
	}
	b.held = append(b.held, p...)
	return n, nil
}

// flush writes the held end of the answer to its file.
func (b *itemBody) flush() error {
	k, err := b.file.Write(b.held)
	b.held = b.held[k:]
	if err != nil {
		b.werr = err
		return err
	}
	b.held, b.werr = nil, nil
	return nil
}

// holdAnswer writes the end of item it's answer its file refused while
// the handler wrote it (the job folder full), trying again after waits
// that double from Options.holdWait up to holdWaitMax, for holdFor at most:
// a translate-api item whose answer could not be written translated its
// document again on each of the job's retries (billed each time). The
// answer stays held in memory meanwhile (maxHeld); it is lost, and the
// item runs again, if the process stops first.
func (q *Queue) holdAnswer(ctx context.Context, id string, it item, body *itemBody) error {
	if body.werr == nil {
		return nil
	}
	wait := q.opts.holdWait
	if wait <= 0 {
		wait = holdWaitDefault
	}
	q.log.Warn("item's answer cannot be written (is the job folder full?): its end is held in memory and written when there is room; the item's work is not done again",
		"job", id, "item", it.Index, "name", it.Name, "error", body.werr.Error(), "held_bytes", len(body.held))
	give := time.Now().Add(holdFor)
	for {
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return ctx.Err()
		case <-t.C:
		}
		err := body.flush()
		if err == nil {
			q.log.Info("item's held answer written", "job", id, "item", it.Index, "name", it.Name)
			return nil
		}
		if time.Now().After(give) {
			return fmt.Errorf("item %d: writing the answer: %w (held for %v)", it.Index, err, holdFor)
		}
		wait = min(2*wait, holdWaitMax)
	}
}

// keep puts the answer at its place (its file synced and renamed) and
// returns it.
func (b *itemBody) keep() ([]byte, error) {
	if b.file == nil {
		return b.buf.Bytes(), nil
	}
	if err := b.file.Sync(); err != nil {
		return nil, err
	}
	if err := os.Rename(b.file.Name(), b.path); err != nil {
		return nil, err
	}
	return os.ReadFile(b.path)
}

// peek is the start of the answer written so far (64 KiB at most), to
// read an error answer's reason.
func (b *itemBody) peek() []byte {
	if b.file == nil {
		return b.buf.Bytes()
	}
	f, err := os.Open(b.file.Name())
	if err != nil {
		return nil
	}
	defer f.Close()
	head, _ := io.ReadAll(io.LimitReader(f, 64<<10))
	return head
}

// discard closes the answer's file and removes it if it was not kept.
func (b *itemBody) discard() {
	if b.file != nil {
		b.file.Close()
		os.Remove(b.file.Name())
	}
}

// input opens item i's file.
func (q *Queue) input(ctx context.Context, id string, i int) (io.ReadCloser, error) {
	if q.pool == nil {
		return os.Open(q.inPath(id, i))
	}
	var b []byte
	var dropped bool
	if err := q.queryRow(ctx, `SELECT input, input IS NULL FROM archivekit_item WHERE job_id = ? AND idx = ?`, id, i).Scan(&b, &dropped); err != nil {
		return nil, err
	}
	if dropped {
		// An item a cancel left unrun (dropUnrun): its file is gone, as
		// on disk (it was answered as an empty file).
		return nil, os.ErrNotExist
	}
	return bytesFile{bytes.NewReader(b)}, nil
}

// bytesFile is an item's file held in memory as its opener gives it: like
// an *os.File, it also reads at an offset and seeks (ItemFile.Open);
// closing it does nothing.
type bytesFile struct{ *bytes.Reader }

func (bytesFile) Close() error { return nil }

// output reads item i's answer.
func (q *Queue) output(ctx context.Context, id string, i int) ([]byte, error) {
	if q.pool == nil {
		return os.ReadFile(q.outPath(id, i))
	}
	var b []byte
	err := q.queryRow(ctx, `SELECT output FROM archivekit_item WHERE job_id = ? AND idx = ?`, id, i).Scan(&b)
	return b, err
}

// writeForm writes the job's form with one item's file at its place.
func writeForm(mw *multipart.Writer, f *form, field string, it item, file io.Reader) error {
	put := func() error {
		h := textproto.MIMEHeader{}
		h.Set("Content-Disposition", multipartDisposition(field, it.Name))
		if it.InType != "" {
			h.Set("Content-Type", it.InType)
		}
		w, err := mw.CreatePart(h)
		if err == nil {
			_, err = io.Copy(w, file)
		}
		return err
	}
	for i, p := range f.Parts {
		if i == f.At {
			if err := put(); err != nil {
				return err
			}
		}
		h := textproto.MIMEHeader{}
		if p.FileName != "" {
			h.Set("Content-Disposition", multipartDisposition(p.Field, p.FileName))
		} else {
			h.Set("Content-Disposition", fmt.Sprintf(`form-data; name=%q`, p.Field))
		}
		if p.ContentType != "" {
			h.Set("Content-Type", p.ContentType)
		}
		w, err := mw.CreatePart(h)
		if err == nil {
			_, err = w.Write(p.Data)
		}
		if err != nil {
			return err
		}
	}
	if f.At >= len(f.Parts) {
		if err := put(); err != nil {
			return err
		}
	}
	return mw.Close()
}

var quoteEscaper = strings.NewReplacer("\\", "\\\\", `"`, "\\\"")

func multipartDisposition(field, file string) string {
	return fmt.Sprintf(`form-data; name="%s"; filename="%s"`, quoteEscaper.Replace(field), quoteEscaper.Replace(file))
}

// Defaults of Options.UnavailableTries and UnavailableBackoff.
const (
	defaultUnavailableTries   = 10
	defaultUnavailableBackoff = 2 * time.Second
	maxUnavailableWait        = time.Minute
)

func (q *Queue) unavailableTries() int {
	return cmp.Or(q.opts.UnavailableTries, defaultUnavailableTries)
}

// retryLater says whether an item's answer is a passing failure, and how
// long the job waits before running the item again: an answer 503 (the
// service's backend not available, its memory budget taken, ...) or a
// failed backend (reason backend_error) with a Retry-After (a backend that
// refuses the service's credentials, 401, answers backend_error without
// one: waiting does not mend it, and the job retried it ten times) that
// is not yet the item's last try (run of UnavailableTries). The wait doubles from
// UnavailableBackoff with each run, at most a minute, and is at least
// the answer's Retry-After (fetch.RetryAfter) up to that minute.
func (q *Queue) retryLater(status int, header http.Header, body func() []byte, run int) (time.Duration, bool) {
	if run >= q.unavailableTries() || status != http.StatusServiceUnavailable && status != http.StatusInternalServerError {
		return 0, false
	}
	var e service.ErrorBody
	if status != http.StatusServiceUnavailable && (header.Get("Retry-After") == "" || json.Unmarshal(body(), &e) != nil || e.Reason != service.ReasonBackendError) {
		return 0, false
	}
	wait := max(q.backoff(run), fetch.RetryAfter(header.Get("Retry-After"), time.Now()))
	return min(wait, maxUnavailableWait), true
}

// fetchLater says whether a book item's file that could not be fetched is
// a passing failure, and how long the job waits before running the item
// again: the server answered 429 or 5xx (fetch.StatusError.Transient), or
// the network failed or timed out (ledger.Transient), after the fetcher's
// own retries, and the item has tries left (as retryLater).
func (q *Queue) fetchLater(err error, run int) (time.Duration, bool) {
	if !ledger.Transient(err) || run >= q.unavailableTries() {
		return 0, false
	}
	return q.backoff(run), true
}

// backoff is the wait before an item's next run after its run run was a
// passing failure: UnavailableBackoff doubled with each run, at most a
// minute.
func (q *Queue) backoff(run int) time.Duration {
	wait := cmp.Or(q.opts.UnavailableBackoff, defaultUnavailableBackoff)
	for i := 1; i < run && wait < maxUnavailableWait; i++ {
		wait *= 2
	}
	return min(wait, maxUnavailableWait)
}

// errorDetail is the detail and reason of a failed item's answer: the
// "detail" of a JSON error body (service.ErrorBody), else its start, and
// its "reason" code ("" for none).
func errorDetail(b []byte) (detail string, reason service.Reason) {
	var e struct {
		Detail any            `json:"detail"`
		Reason service.Reason `json:"reason"`
	}
	if json.Unmarshal(b, &e) == nil && e.Detail != nil {
		if s, ok := e.Detail.(string); ok {
			return s, e.Reason
		}
		d, _ := json.Marshal(e.Detail)
		return string(d), e.Reason
	}
	if len(b) > 500 {
		b = b[:500]
	}
	return string(b), e.Reason
}

// answer is the http.ResponseWriter of an item: its body goes to a file.
type answer struct {
	header http.Header
	status int
	body   io.Writer
	err    error
}

func (a *answer) Header() http.Header { return a.header }

func (a *answer) WriteHeader(code int) {
	if a.status == 0 {
		a.status = code
	}
}

func (a *answer) Write(b []byte) (int, error) {
	a.WriteHeader(http.StatusOK)
	n, err := a.body.Write(b)
	if err != nil && a.err == nil {
		a.err = err
	}
	return n, err
}

func (a *answer) code() int {
	if a.status == 0 {
		return http.StatusOK
	}
	return a.status
}

// pause records why job id waits until wait has passed (Status.Paused):
// reason, and the item (nil for a book read again) whose next run comes
// then. A failure to record it is logged only: the pause goes on.
func (q *Queue) pause(ctx context.Context, id, reason string, it *item, wait time.Duration) {
	p := Paused{Reason: reason, Until: time.Now().Add(wait).UTC().Truncate(time.Second)}
	if it != nil {
		idx := it.Index
		p.Item, p.Run, p.Of = &idx, it.Runs+2, q.unavailableTries()
	}
	b, _ := json.Marshal(p)
	if _, err := q.exec(context.WithoutCancel(ctx), `UPDATE archivekit_job SET paused = ? WHERE id = ?`, string(b), id); err != nil {
		q.log.Warn("why the job pauses is not recorded", "job", id, "error", err.Error())
	}
}
