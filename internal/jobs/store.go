package jobs

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"golang.org/x/text/cases"
	"golang.org/x/text/unicode/norm"

	"archivekit/internal/service"
)

// schema is the queue's own tables beside River's: a job with its form
// (the request without its files) and one row an item (a file).
const schema = `
CREATE TABLE IF NOT EXISTS archivekit_job (
	seq INTEGER PRIMARY KEY AUTOINCREMENT,
	id TEXT NOT NULL UNIQUE,
	state TEXT NOT NULL,
	created_ms INTEGER NOT NULL,
	started_ms INTEGER,
	finished_ms INTEGER,
	form BLOB NOT NULL,
	idem_key TEXT UNIQUE,
	idem_hash TEXT,
	river_id INTEGER,
	callback_url TEXT
);
CREATE TABLE IF NOT EXISTS archivekit_item (
	job_id TEXT NOT NULL,
	idx INTEGER NOT NULL,
	name TEXT NOT NULL,
	content_type TEXT NOT NULL DEFAULT '',
	state TEXT NOT NULL DEFAULT 'queued',
	status INTEGER,
	out_type TEXT,
	out_disposition TEXT,
	error TEXT,
	runs INTEGER NOT NULL DEFAULT 0,
	PRIMARY KEY (job_id, idx)
);` + scratchTable + derivedTable

// form is a job's request without its files: the query, the other parts
// in order and where the file goes among them.
type form struct {
	Query string `json:"query,omitempty"`
	Parts []part `json:"parts"`
	// At is the index in Parts before which an item's file part goes.
	At int `json:"at"`
	// Callback is the callback URL (its field is not sent to the
	// endpoint).
	Callback string `json:"-"`
	// Book is a book job's URL (BookInput; its field is not sent to the
	// endpoint).
	Book string `json:"book,omitempty"`
	// BookNote is the book job's record of its book (AnnotateBook), kept
	// in its own column; nil when none.
	BookNote []byte `json:"-"`
}

// part is one multipart part that is not an item.
type part struct {
	Field       string `json:"field"`
	FileName    string `json:"filename,omitempty"`
	ContentType string `json:"content_type,omitempty"`
	Data        []byte `json:"data"`
}

// Status is the answer of GET /jobs/{id}.
type Status struct {
	ID         string     `json:"id"`
	State      string     `json:"state"`
	CreatedAt  time.Time  `json:"created_at"`
	StartedAt  *time.Time `json:"started_at,omitempty"`
	FinishedAt *time.Time `json:"finished_at,omitempty"`
	// Book is a book job's URL; its items are the book's pages or text
	// files, none until a worker has read the book.
	Book string `json:"book,omitempty"`
	// FirstItem is the name of the job's first item (its first file, a
	// book's first page or text file), by which a person tells jobs
	// apart; absent while it has none.
	FirstItem string `json:"first_item,omitempty"`
	Items     Counts `json:"items"`
	// Error is why the job failed as a whole (its book could not be
	// read, or every item was skipped); failed items are in Errors.
	Error  string      `json:"error,omitempty"`
	Errors []ItemError `json:"errors"`
	// Skipped are the items skipped (a book's pages without a text file
	// or an image), each with why; absent when none was.
	Skipped []ItemSkipped `json:"skipped,omitempty"`
	// Paused says why a running job waits, until when, and which run of
	// its item comes next, while it waits after a passing failure (its
	// backend unavailable, its book's server failing); absent otherwise.
	Paused  *Paused `json:"paused,omitempty"`
	Results string  `json:"results"`
}

// Paused is why a job waits before running an item again (Status.Paused).
type Paused struct {
	// Reason is the passing failure, as the item's answer or the fetch
	// said it.
	Reason string `json:"reason"`
	// Item is the item run again (absent for a book read again), Run the
	// number of its next run and Of the runs it has before its failure
	// is recorded.
	Item *int `json:"item,omitempty"`
	Run  int  `json:"run,omitempty"`
	Of   int  `json:"of,omitempty"`
	// Until is when the job runs again (about; a replica or a restart
	// may take it up later).
	Until time.Time `json:"until"`
}

// Counts are a job's items by state: Queued counts those not ended yet
// (queued or running), Skipped those that had nothing to run (Skipped).
type Counts struct {
	Total     int `json:"total"`
	Queued    int `json:"queued"`
	Succeeded int `json:"succeeded"`
	Failed    int `json:"failed"`
	Skipped   int `json:"skipped"`
	// Canceled counts the items a canceled job left unrun (the one in
	// flight at the cancel among them): none is queued any more.
	Canceled int `json:"canceled,omitempty"`
}

// ItemSkipped is a skipped item: why it had nothing to run.
type ItemSkipped struct {
	Item   int    `json:"item"`
	Name   string `json:"name"`
	Reason string `json:"reason"`
	// Book identifies the item in its book.
	Book *BookRef `json:"book,omitempty"`
}

// ItemError is a failed item: the synchronous endpoint's status, detail
// and reason code.
type ItemError struct {
	Item   int    `json:"item"`
	Name   string `json:"name"`
	Status int    `json:"status"`
	Error  string `json:"error"`
	// Reason is the stable reason code of the endpoint's error body
	// (service.Reason: unsupported_format, backend_error, ...); absent when
	// its answer had none.
	Reason service.Reason `json:"reason,omitempty"`
	// Book identifies a book job's item in its book.
	Book *BookRef `json:"book,omitempty"`
}

// item is an item row.
type item struct {
	Index       int
	Name        string
	InType      string
	State       string
	Status      int
	Type        string
	Disposition string
	// Headers are the other headers the answer carried (answerHeaders;
	// "" in rows written before them).
	Headers string
	// Error is a failed item's error detail, a skipped item's reason.
	Error  string
	Reason service.Reason
	Runs   int
	// Source and Ref are a book item's URL and identifiers (JSON).
	Source, Ref string
}

// errNotFound: no job has that id (or Idempotency-Key).
var errNotFound = errors.New("no such job")

// notFound is errNotFound naming the id asked for (clipped to 100
// bytes): what a 404 says.
type notFound struct{ id string }

func (e notFound) Error() string {
	id := e.id
	if len(id) > 100 {
		id = id[:100] + "..."
	}
	return fmt.Sprintf("no job has the id %q", id)
}

func (e notFound) Is(target error) bool { return target == errNotFound }

// newID is a job id: 16 random bytes in hex.
func newID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

func msTime(ms sql.NullInt64) *time.Time {
	if !ms.Valid {
		return nil
	}
	t := time.UnixMilli(ms.Int64).UTC()
	return &t
}

// status reads a job's status.
func (q *Queue) status(ctx context.Context, id string) (*Status, error) {
	st := &Status{ID: id, Errors: []ItemError{}, Results: q.opts.Root.Of("/jobs/" + id + "/results")}
	var created int64
	var started, finished sql.NullInt64
	var paused string
	err := q.queryRow(ctx, `SELECT state, created_ms, started_ms, finished_ms, COALESCE(book_url, ''), COALESCE(error, ''), COALESCE(paused, '') FROM archivekit_job WHERE id = ?`, id).
		Scan(&st.State, &created, &started, &finished, &st.Book, &st.Error, &paused)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, notFound{id}
	}
	if err != nil {
		return nil, err
	}
	st.CreatedAt = time.UnixMilli(created).UTC()
	st.StartedAt, st.FinishedAt = msTime(started), msTime(finished)
	if paused != "" && (st.State == Running || st.State == Queued) {
		var p Paused
		if json.Unmarshal([]byte(paused), &p) == nil {
			st.Paused = &p
		}
	}
	items, err := q.items(ctx, id)
	if err != nil {
		return nil, err
	}
	if len(items) > 0 {
		st.FirstItem = items[0].Name
	}
	for _, it := range items {
		st.Items.Total++
		switch it.State {
		case Succeeded:
			st.Items.Succeeded++
		case Failed:
			st.Items.Failed++
			st.Errors = append(st.Errors, ItemError{Item: it.Index, Name: it.Name, Status: it.Status, Error: it.Error, Reason: it.Reason, Book: bookRef(it.Ref)})
		case Skipped:
			st.Items.Skipped++
			st.Skipped = append(st.Skipped, ItemSkipped{Item: it.Index, Name: it.Name, Reason: it.Error, Book: bookRef(it.Ref)})
		default:
			if st.State == Canceled {
				st.Items.Canceled++ // never to run: the job was canceled
			} else {
				st.Items.Queued++
			}
		}
	}
	return st, nil
}

// items reads a job's items in order.
func (q *Queue) items(ctx context.Context, id string) ([]item, error) {
	rows, err := q.query(ctx, `SELECT idx, name, content_type, state, COALESCE(status, 0), COALESCE(out_type, ''), COALESCE(out_disposition, ''), COALESCE(out_headers, ''), COALESCE(error, ''), COALESCE(reason, ''), runs, COALESCE(source, ''), COALESCE(ref, '')
		FROM archivekit_item WHERE job_id = ? ORDER BY idx`, id)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []item
	for rows.Next() {
		var it item
		if err := rows.Scan(&it.Index, &it.Name, &it.InType, &it.State, &it.Status, &it.Type, &it.Disposition, &it.Headers, &it.Error, &it.Reason, &it.Runs, &it.Source, &it.Ref); err != nil {
			return nil, err
		}
		out = append(out, it)
	}
	return out, rows.Err()
}

// byKey finds the job submitted with an Idempotency-Key: its id and the
// hash of its request.
func (q *Queue) byKey(ctx context.Context, key string) (id, hash string, err error) {
	err = q.queryRow(ctx, `SELECT id, idem_hash FROM archivekit_job WHERE idem_key = ?`, key).Scan(&id, &hash)
	if errors.Is(err, sql.ErrNoRows) {
		return "", "", errNotFound
	}
	return id, hash, err
}

// insert records a job with its items and River's job in one transaction.
// On PostgreSQL the items' files (dir/in/N) go into their rows.
func (q *Queue) insert(ctx context.Context, id string, f *form, files []upload, dir, key, hash, callback string) error {
	fb, err := json.Marshal(f)
	if err != nil {
		return err
	}
	var k, h any
	if key != "" {
		k, h = key, hash
	}
	var cb, book any
	if callback != "" {
		cb = callback
	}
	if f.Book != "" {
		book = f.Book
	}
	var client any
	if c := service.ClientOf(ctx); c != "" {
		client = c
	}
	return q.inTx(ctx, func(tx txn) error {
		var bookKey any
		if f.Book != "" {
			bookKey = searchKey(f.Book)
		}
		if _, err := tx.exec(ctx, `INSERT INTO archivekit_job (id, state, created_ms, form, idem_key, idem_hash, callback_url, book_url, book_key, client) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
			id, Queued, time.Now().UnixMilli(), fb, k, h, cb, book, bookKey, client); err != nil {
			return err
		}
		for i, u := range files {
			if q.pool == nil {
				if _, err := tx.exec(ctx, `INSERT INTO archivekit_item (job_id, idx, name, name_key, content_type) VALUES (?, ?, ?, ?, ?)`, id, i, u.Name, searchKey(u.Name), u.Type); err != nil {
					return err
				}
				continue
			}
			b, err := os.ReadFile(filepath.Join(dir, "in", strconv.Itoa(i)))
			if err != nil {
				return err
			}
			if _, err := tx.exec(ctx, `INSERT INTO archivekit_item (job_id, idx, name, name_key, content_type, input) VALUES (?, ?, ?, ?, ?, ?)`, id, i, u.Name, searchKey(u.Name), u.Type, b); err != nil {
				return err
			}
		}
		rid, err := tx.insertJob(ctx, jobArgs{ID: id})
		if err != nil {
			return fmt.Errorf("inserting the River job: %w", err)
		}
		_, err = tx.exec(ctx, `UPDATE archivekit_job SET river_id = ? WHERE id = ?`, rid, id)
		return err
	})
}

// setState moves a job to state when it is in one of from (one or two
// states); it reports whether it did. A job that ends with a callback URL
// gets its callback queued in the same transaction.
func (q *Queue) setState(ctx context.Context, id, state string, from ...string) (bool, error) {
	final := state == Succeeded || state == Failed || state == Canceled
	at := time.Now()
	now := at.UnixMilli()
	stamp, args := "started_ms = COALESCE(started_ms, ?)", []any{state, now}
	if final {
		// The run metadata of the job as it ends, kept with its end.
		var meta any
		if b := q.runRecord(ctx, id, state, time.UnixMilli(now).UTC()); b != nil {
			meta = string(b)
		}
		stamp, args = "finished_ms = ?, run_meta = ?", append(args, meta)
	}
	moved := false
	err := q.inTx(ctx, func(tx txn) error {
		n, err := tx.exec(ctx, `UPDATE archivekit_job SET state = ?, `+stamp+` WHERE id = ? AND state IN (?, ?)`, append(args, id, from[0], from[len(from)-1])...)
		if err != nil || n == 0 {
			return err
		}
		moved = true
		if !final {
			return nil
		}
		var url string
		if err := tx.queryRow(ctx, `SELECT COALESCE(callback_url, '') FROM archivekit_job WHERE id = ?`, id).Scan(&url); err != nil {
			return err
		}
		if url != "" {
			if _, err := tx.insertJob(ctx, callbackArgs{ID: id}); err != nil {
				return fmt.Errorf("queueing the callback: %w", err)
			}
		}
		return nil
	})
	if err != nil || !moved {
		return false, err
	}
	if final {
		q.count(metricEnded, state)
	}
	q.notify()
	return true, nil
}

// jobState and jobForm read a job's state and form.
func (q *Queue) jobState(ctx context.Context, id string) (state string, f *form, riverID int64, err error) {
	var fb []byte
	var note string
	var rid sql.NullInt64
	err = q.queryRow(ctx, `SELECT state, form, river_id, COALESCE(book_note, '') FROM archivekit_job WHERE id = ?`, id).Scan(&state, &fb, &rid, &note)
	if errors.Is(err, sql.ErrNoRows) {
		return "", nil, 0, notFound{id}
	}
	if err != nil {
		return "", nil, 0, err
	}
	f = &form{}
	if note != "" {
		f.BookNote = []byte(note)
	}
	return state, f, rid.Int64, json.Unmarshal(fb, f)
}

// visible answers notFound for job id when the request's client
// (service.ClientOf, of API_TOKENS_FILE) is not the one that submitted
// it, as for a job that does not exist: clients do not see one another's
// jobs. A job submitted without a client name (an open service, one
// shared token, before API_TOKENS_FILE) is every client's.
func (q *Queue) visible(ctx context.Context, id string) error {
	me := service.ClientOf(ctx)
	if me == "" {
		return nil
	}
	var owner sql.NullString
	err := q.queryRow(ctx, `SELECT client FROM archivekit_job WHERE id = ?`, id).Scan(&owner)
	if errors.Is(err, sql.ErrNoRows) || (err == nil && owner.Valid && owner.String != me) {
		return notFound{id}
	}
	return err
}

// listFilter selects the jobs GET /jobs lists: those in State ("" any),
// those with Name ("" any) in the name of one of their items or in their
// book's URL, compared by searchKey, and those submitted between Since and
// Until.
type listFilter struct {
	State, Name string
	// Since and Until bound the jobs' submit times: at or after Since,
	// before Until (zero: no bound).
	Since, Until time.Time
}

// searchKey is the form in which a job's item names and book URL are kept
// for GET /jobs?name= and in which the text sought is compared with them:
// compatibility-composed (NFKC: a name from a system that writes "Ú" as
// "U" and a combining accent matches one typed with "Ú") and case-folded
// (every letter's case aside: "ústí" finds "ÚSTÍ", "strasse" finds
// "STRASSE" and "Straße").
//
// The Turkish and Azeri i's are one letter here: "İ" (which Unicode folds
// to "i" and a combining dot) and the dotless "ı" fold to "i", so
// "istanbul" finds "İSTANBUL" and "ısparta" finds "ISPARTA", as a
// Turkish archivist typing in lower case expects.
func searchKey(s string) string {
	return turkishI.Replace(foldKey(s))
}

// foldKey is searchKey before the Turkish i's were one letter: the form
// of the keys kept until 2026-11-30.
func foldKey(s string) string {
	return norm.NFKC.String(cases.Fold().String(norm.NFKC.String(s)))
}

// turkishI folds the Turkish i's ("i" with a combining dot above, as
// cases.Fold writes "İ", and the dotless "ı") to "i".
var turkishI = strings.NewReplacer("i\u0307", "i", "\u0131", "i")

// likeEscaper escapes LIKE's wildcards (and its escape) in a text sought.
var likeEscaper = strings.NewReplacer(`\`, `\\`, "%", `\%`, "_", `\_`)

// list reads up to limit job ids that f selects, newest first, older than
// seq before (0: from the newest); next is the cursor of the following
// page (0: none). A request of an API_TOKENS_FILE client lists its own jobs
// and those submitted without a client name (visible).
func (q *Queue) list(ctx context.Context, limit int, before int64, f listFilter) (ids []string, next int64, err error) {
	if before <= 0 {
		before = 1<<63 - 1
	}
	where, args := []string{"seq < ?"}, []any{before}
	if me := service.ClientOf(ctx); me != "" {
		where, args = append(where, "(client IS NULL OR client = ?)"), append(args, me)
	}
	if f.State != "" {
		where, args = append(where, "state = ?"), append(args, f.State)
	}
	if !f.Since.IsZero() {
		where, args = append(where, "created_ms >= ?"), append(args, f.Since.UnixMilli())
	}
	if !f.Until.IsZero() {
		where, args = append(where, "created_ms < ?"), append(args, f.Until.UnixMilli())
	}
	if f.Name != "" {
		// A job written since search keys were kept is matched on them
		// (searchKey: every letter's case aside, and the way accents are
		// encoded); an older one on its names, the case of ASCII letters
		// aside (SQLite's LOWER knows no others).
		key := "%" + likeEscaper.Replace(searchKey(f.Name)) + "%"
		// Keys kept before the Turkish i's were one letter (2026-11-30)
		// hold "İ" as "i" and a combining dot: matched in that form too,
		// so such a job is still found by its name as written.
		before := "%" + likeEscaper.Replace(foldKey(f.Name)) + "%"
		exact := "%" + likeEscaper.Replace(f.Name) + "%"
		lower := strings.Map(func(r rune) rune {
			if 'A' <= r && r <= 'Z' {
				return r + 'a' - 'A'
			}
			return r
		}, exact)
		match := `(%[2]s LIKE ? ESCAPE '\' OR %[2]s LIKE ? ESCAPE '\' OR (%[2]s IS NULL AND (LOWER(%[1]s) LIKE ? ESCAPE '\' OR %[1]s LIKE ? ESCAPE '\')))`
		where = append(where, "("+fmt.Sprintf(match, "COALESCE(book_url, '')", "book_key")+
			" OR EXISTS (SELECT 1 FROM archivekit_item i WHERE i.job_id = archivekit_job.id AND "+fmt.Sprintf(match, "i.name", "i.name_key")+"))")
		args = append(args, key, before, lower, exact, key, before, lower, exact)
	}
	query := `SELECT seq, id FROM archivekit_job WHERE ` + strings.Join(where, " AND ") + ` ORDER BY seq DESC LIMIT ?`
	args = append(args, limit+1)
	rows, err := q.query(ctx, query, args...)
	if err != nil {
		return nil, 0, err
	}
	defer rows.Close()
	var last int64
	for rows.Next() {
		var seq int64
		var id string
		if err := rows.Scan(&seq, &id); err != nil {
			return nil, 0, err
		}
		if len(ids) == limit {
			next = last
			break
		}
		ids, last = append(ids, id), seq
	}
	return ids, next, rows.Err()
}
