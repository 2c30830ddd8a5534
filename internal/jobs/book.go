package jobs

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"slices"
	"time"

	"github.com/riverqueue/river"

	"archivekit/internal/ledger"
	"archivekit/internal/service"
)

// BookInput lets POST /jobs name a book (a METS file, a IIIF manifest or
// collection) by its http(s) URL instead of uploading files: the job is
// queued at once with no items; its first run reads the book (Items) and
// records one item a page or text file, each with the book's identifiers
// (a page with nothing to run among them, skipped: BookItem.Skip);
// every item's file is fetched by the worker (Fetch) when the item runs,
// so an item done is never fetched again. A book that cannot be read fails
// the job with the reader's error.
type BookInput struct {
	// Field is the form field of the book's URL ("book", "book_url"); it
	// is not sent to the endpoint.
	Field string
	// Fields are the other form fields the book reader takes (pageclass'
	// pages); a book job does not send them to the endpoint.
	Fields []string
	// Items reads the book at location with the job's form fields (the
	// first value of each, Fields included) and lists its items in order;
	// it may attach a record of the book to the job (AnnotateBook with its
	// ctx), kept with it and given to each item (BookNote). It runs once
	// a job: a job whose items are recorded does not read its book again.
	Items func(ctx context.Context, location string, fields map[string]string) ([]BookItem, error)
	// Fetch fetches an item's Source with the service's bounds and host
	// allow-list; contentType "" keeps the item's Type.
	Fetch func(ctx context.Context, source string) (data []byte, contentType string, err error)
	// Check, when not nil, checks an item's file once fetched against what
	// the book said of it (ref, Source included): the ref it returns is
	// recorded as the item's (a text file's format told by its content
	// where the book only declared it), and an error fails the item (422
	// bad_book, the error its detail) without running it; a *SkipError
	// ends it skipped instead (a file the book did not declare that has
	// nothing for the endpoint).
	Check func(data []byte, ref BookRef) (BookRef, error)
	// Joins, when not nil, says whether item b's file continues item a's,
	// b being the item after a, each the only item of its page (a word
	// hyphenated across two text files of a book): a's request is then
	// given b's file (NextFile), fetched before a runs and kept for b, and
	// b's request the summary a's handler attached (PrevSummary) when a
	// succeeded, in this run or an earlier one. b's file is then held
	// while a runs, among the Fetchers files (one fewer is fetched ahead;
	// below 2 Fetchers, a's run fetches both files).
	Joins func(a, b BookRef) bool
	// Fetchers is how many items' files a job's run fetches at once, in
	// item order, ahead of the item that runs (the running item's own
	// included; at most that many files in memory), so that the next
	// items' fetches overlap an item's run; below 2 each item's file is
	// fetched when the item runs.
	Fetchers int
}

// SkipError, returned by BookInput.Check, ends the item skipped (Skipped)
// with Reason instead of failed: its file, fetched, has nothing for the
// endpoint, and that is no fault of the book (a file the book did not
// declare as one the endpoint takes, whose content shows it is not).
type SkipError struct{ Reason string }

func (e *SkipError) Error() string { return "skipped: " + e.Reason }

// BookItem is one item of a book: a page's image or a text file, or a
// page with nothing to run (Skip).
type BookItem struct {
	// Name is the file name the endpoint is sent; Type its declared
	// content type.
	Name, Type string
	// Source is the URL the worker fetches.
	Source string
	// Skip, when not empty, is why the item has nothing to run (a page
	// without a text file, or without an image): it is recorded skipped
	// (Skipped) with it,
	// nothing is fetched, and the job lists the page all the same.
	Skip string
	Ref  BookRef
}

// BookRef is what identifies an item in its book, in the item's results
// and errors so that they join back to the catalogue.
type BookRef struct {
	// Page is the page's position in the book, from 1.
	Page int `json:"page"`
	// ID is the METS physical div's ID or the canvas id; Order the METS
	// ORDER; Label the ORDERLABEL or canvas label; Manifest, for a
	// collection, the manifest of the canvas.
	ID       string `json:"id,omitempty"`
	Order    string `json:"order,omitempty"`
	Label    string `json:"label,omitempty"`
	Manifest string `json:"manifest,omitempty"`
	// Path is a text file's path in the book, Format its format (ALTO,
	// PAGE, hOCR).
	Path   string `json:"path,omitempty"`
	Format string `json:"format,omitempty"`
	// Source is the file fetched.
	Source string `json:"source,omitempty"`
}

// checkBookURL is the problem of a book field's value ("" when none).
func checkBookURL(v string) string {
	u, err := url.Parse(v)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Sprintf("%q: want the http(s) URL of a METS file or a IIIF manifest or collection", v)
	}
	return ""
}

// fields are the form's fields, the first value of each.
func (f *form) fields() map[string]string {
	out := map[string]string{}
	for _, p := range f.Parts {
		if _, seen := out[p.Field]; !seen && p.FileName == "" {
			out[p.Field] = string(p.Data)
		}
	}
	return out
}

// checked is what Options.CheckFields is given: each field's first value
// as the items are sent it, the form's over the query's (as the
// synchronous endpoints read them), uploads other than the items included
// (a document_json file), the book URL aside.
func (f *form) checked() map[string]string {
	out := map[string]string{}
	for _, p := range f.Parts {
		if _, seen := out[p.Field]; !seen {
			out[p.Field] = string(p.Data)
		}
	}
	if q, err := url.ParseQuery(f.Query); err == nil {
		for k, vs := range q {
			if _, seen := out[k]; !seen && len(vs) > 0 {
				out[k] = vs[0]
			}
		}
	}
	return out
}

// placed returns verrs with the location of a field the form lacks and
// the query gives said to be the query (CheckFields names each field as
// the body's, where the synchronous endpoints read both).
func (f *form) placed(verrs []service.ValidationError) []service.ValidationError {
	q, _ := url.ParseQuery(f.Query)
	for i, v := range verrs {
		if len(v.Loc) != 2 || v.Loc[0] != "body" {
			continue
		}
		name, _ := v.Loc[1].(string)
		if q.Has(name) && !slices.ContainsFunc(f.Parts, func(p part) bool { return p.Field == name }) {
			verrs[i].Loc = []any{"query", name}
		}
	}
	return verrs
}

// itemForm is the form an item is sent with: a book job's leaves out the
// fields its book reader took, and an item's route those it does not take
// (Route.Omit).
func (q *Queue) itemForm(f *form, r Route) *form {
	omit := r.Omit
	if f.Book != "" && q.opts.Book != nil {
		omit = append(slices.Clip(omit), q.opts.Book.Fields...)
	}
	if len(omit) == 0 {
		return f
	}
	g := *f
	g.Parts = nil
	for i, p := range f.Parts {
		if i == f.At {
			g.At = len(g.Parts)
		}
		if !slices.Contains(omit, p.Field) {
			g.Parts = append(g.Parts, p)
		}
	}
	if f.At >= len(f.Parts) {
		g.At = len(g.Parts)
	}
	return &g
}

// readBook reads a book job's book and records its items, once: a job
// that has items has read its book. It reports false when the job failed
// because its book could not be read.
func (q *Queue) readBook(ctx context.Context, id string, f *form) (bool, error) {
	var n int
	if err := q.queryRow(ctx, `SELECT COUNT(*) FROM archivekit_item WHERE job_id = ?`, id).Scan(&n); err != nil || n > 0 {
		return err == nil, err
	}
	var items []BookItem
	var err error
	note := &annotation{}
	if q.opts.Book == nil {
		err = fmt.Errorf("this service takes no book")
	} else {
		items, err = q.opts.Book.Items(context.WithValue(ctx, bookKey{}, note), f.Book, f.fields())
	}
	if err == nil && len(items) == 0 {
		err = fmt.Errorf("the book has no item to run")
	}
	if err != nil {
		if ctx.Err() != nil {
			return false, ctx.Err()
		}
		if wait, ok, rerr := q.readLater(ctx, id, err); rerr != nil || ok {
			if ok {
				q.log.Warn("book not read (its server failed for now): the job waits and reads it again", "job", id, "book", f.Book, "error", err.Error(), "wait", wait.String())
				q.pause(ctx, id, "its book not read: "+err.Error(), nil, wait)
				rerr = river.JobSnooze(wait)
			}
			return false, rerr
		}
		q.log.Warn("book not read", "job", id, "book", f.Book, "error", err.Error())
		if _, err := q.exec(ctx, `UPDATE archivekit_job SET error = ? WHERE id = ?`, "book "+f.Book+": "+err.Error(), id); err != nil {
			return false, err
		}
		_, err := q.setState(ctx, id, Failed, Running, Queued)
		return false, err
	}
	nb, nerr := note.get()
	if nerr != nil {
		q.log.Warn("book's record not kept", "job", id, "error", nerr.Error())
	}
	err = q.inTx(ctx, func(tx txn) error {
		if nb != nil {
			if _, err := tx.exec(ctx, `UPDATE archivekit_job SET book_note = ? WHERE id = ?`, string(nb), id); err != nil {
				return err
			}
		}
		for i, it := range items {
			ref := it.Ref
			ref.Source = it.Source
			rb, err := json.Marshal(ref)
			if err != nil {
				return err
			}
			if _, err := tx.exec(ctx, `INSERT INTO archivekit_item (job_id, idx, name, name_key, content_type, source, ref) VALUES (?, ?, ?, ?, ?, ?, ?)`,
				id, i, it.Name, searchKey(it.Name), it.Type, it.Source, string(rb)); err != nil {
				return err
			}
			if it.Skip == "" {
				continue
			}
			query, args := q.outcomeUpdate(id, i, outcome{state: Skipped, detail: it.Skip}, Queued)
			if _, err := tx.exec(ctx, query, args...); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return false, err
	}
	f.BookNote = nb
	q.log.Info("book read", "job", id, "book", f.Book, "items", len(items))
	q.notify()
	return true, nil
}

// readLater says whether a book that could not be read (err) is read
// again later, and after how long: a passing failure of its server or the
// network (as fetchLater tells) while the job has tries left
// (UnavailableTries, counted in the job's book_reads).
func (q *Queue) readLater(ctx context.Context, id string, err error) (time.Duration, bool, error) {
	if !ledger.Transient(err) {
		return 0, false, nil
	}
	var reads int
	if err := q.queryRow(ctx, `SELECT COALESCE(book_reads, 0) FROM archivekit_job WHERE id = ?`, id).Scan(&reads); err != nil {
		return 0, false, err
	}
	reads++
	if reads >= q.unavailableTries() {
		return 0, false, nil
	}
	if _, err := q.exec(ctx, `UPDATE archivekit_job SET book_reads = ? WHERE id = ?`, reads, id); err != nil {
		return 0, false, err
	}
	return q.backoff(reads), true, nil
}

// problemBody is the answer recorded for an item that could not run, as
// the service writes an error (service.ErrorBody).
func problemBody(status int, reason service.Reason, detail string) []byte {
	b, _ := json.Marshal(service.ErrorBody{Status: status, Reason: reason, Detail: service.ClipURLs(detail)})
	return append(b, '\n')
}

// bookRef decodes an item's book identifiers (nil for an uploaded file).
func bookRef(s string) *BookRef {
	if s == "" {
		return nil
	}
	var r BookRef
	if json.Unmarshal([]byte(s), &r) != nil {
		return nil
	}
	return &r
}
