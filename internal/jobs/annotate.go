package jobs

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
)

// MaxSummary bounds an item's summary (Annotate), in bytes of JSON.
const MaxSummary = 64 << 10

// ErrSummaryTooLarge is Annotate's error for a summary over MaxSummary:
// it is not stored.
var ErrSummaryTooLarge = errors.New("jobs: item summary over 64 KiB")

// annotation holds the summary the handler of one job item attaches to it
// (Annotate); the queue puts it in the item request's context and stores
// the summary with the item's answer.
type annotation struct {
	mu      sync.Mutex
	summary []byte
	err     error
}

type annotationKey struct{}

// Annotate attaches v, encoded as JSON, to the job item whose request has
// context ctx (the handler's r.Context()): a small summary of the item's
// work (a few counts), which the queue stores with the item and hands to
// the job's run metadata when the job ends (ItemRecorder). A later call
// replaces an earlier one. Outside a job item (a synchronous request) it
// does nothing and returns nil. A summary that cannot be encoded, or is
// over MaxSummary bytes (ErrSummaryTooLarge), is not stored: the item has
// none, and the queue logs why.
func Annotate(ctx context.Context, v any) error {
	return annotate(ctx, annotationKey{}, v)
}

// annotate keeps v as JSON in the annotation ctx holds under key (nothing
// when it holds none, or v cannot be encoded or is over MaxSummary bytes:
// the error says why).
func annotate(ctx context.Context, key any, v any) error {
	a, _ := ctx.Value(key).(*annotation)
	if a == nil {
		return nil
	}
	b, err := json.Marshal(v)
	if err == nil && len(b) > MaxSummary {
		err = fmt.Errorf("%w: %d bytes", ErrSummaryTooLarge, len(b))
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	a.summary, a.err = b, err
	if err != nil {
		a.summary = nil
	}
	return err
}

type bookKey struct{}

// AnnotateBook attaches v, encoded as JSON, to the book job whose book
// BookInput.Items is reading with context ctx (Items' ctx): a small record
// of the whole book (its language detected over its files, say), which
// the queue keeps with the job and gives to every item's request
// (BookNote) and to the job's run metadata (RunJob.BookNote). A later call
// replaces an earlier one. Outside Items it does nothing and returns nil;
// a record that cannot be encoded or is over MaxSummary bytes is not kept
// (ErrSummaryTooLarge) and the job has none.
func AnnotateBook(ctx context.Context, v any) error {
	return annotate(ctx, bookKey{}, v)
}

// BookNote is the record of its book that BookInput.Items attached to the
// book job (AnnotateBook), given in the context of each of the job's item
// requests (the handler's r.Context()); nil outside a book job's item or
// when none was attached.
func BookNote(ctx context.Context) []byte {
	b, _ := ctx.Value(bookNoteKey{}).([]byte)
	return b
}

type bookNoteKey struct{}

// link is what a book item's request is given of its neighbours when
// BookInput.Joins says they join: the next item's file and the summary
// the item before it attached (nil when none).
type link struct {
	next, prev []byte
}

type linkKey struct{}

// NextFile is, in a book job's item request (the handler's
// r.Context()), the file of the next item when BookInput.Joins says it
// continues this one; nil otherwise, or when it could not be fetched.
func NextFile(ctx context.Context) []byte {
	l, _ := ctx.Value(linkKey{}).(link)
	return l.next
}

// PrevSummary is, in a book job's item request, the summary (Annotate)
// of the item before it when BookInput.Joins says this one continues it
// and it succeeded; nil otherwise.
func PrevSummary(ctx context.Context) []byte {
	l, _ := ctx.Value(linkKey{}).(link)
	return l.prev
}

// get is the summary attached (nil for none) and why one was not stored.
func (a *annotation) get() ([]byte, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.summary, a.err
}

// ItemRecorder is a RunRecord that takes the items' summaries: at a job's
// end, the queue hands it each succeeded item's summary (Annotate), in
// item order, with the item's file name. An error is recorded as a
// warning of the run metadata.
type ItemRecorder interface {
	AddItem(name string, summary []byte) error
}

// summaries reads the summaries of job id's succeeded items, by index.
func (q *Queue) summaries(ctx context.Context, id string) (map[int][]byte, error) {
	rows, err := q.query(ctx, `SELECT idx, summary FROM archivekit_item WHERE job_id = ? AND state = ? AND summary IS NOT NULL`, id, Succeeded)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := map[int][]byte{}
	for rows.Next() {
		var i int
		var s string
		if err := rows.Scan(&i, &s); err != nil {
			return nil, err
		}
		out[i] = []byte(s)
	}
	return out, rows.Err()
}
