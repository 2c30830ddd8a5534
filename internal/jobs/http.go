package jobs

import (
	"bufio"
	"bytes"
	"cmp"
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash"
	"io"
	"io/fs"
	"mime/multipart"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/jackc/pgx/v5/pgconn"
	"modernc.org/sqlite"

	"archivekit/internal/atomicfile"
	"archivekit/internal/service"
)

// maxPartBytes bounds one form part that is not an item (a field, a
// baseline record).
const maxPartBytes = 8 << 20

// upload is an item's file as submitted.
type upload struct{ Name, Type string }

// Submit serves POST /jobs: the synchronous endpoint's multipart form with
// one or more files in its item field. It stores the files and the other
// parts, queues the job and answers 202 with Location: /jobs/{id} and the
// job's status. With an Idempotency-Key already used for the same request
// it answers 200 with that job; for another request, 422.
func (q *Queue) Submit(w http.ResponseWriter, r *http.Request) {
	if q.full(r.Context(), w) {
		return
	}
	id := newID()
	tmp, err := os.MkdirTemp(q.opts.Dir, "upload-") // Dir is "" on PostgreSQL: the temporary folder
	if err == nil && q.opts.Dir != "" {
		// The job's folder with the umask's mode (MkdirTemp makes it
		// 0700): another user of a group sharing the state folder reads
		// it when its service takes the job over.
		err = os.Chmod(tmp, 0o777&^atomicfile.Umask())
	}
	if err != nil {
		q.fail(w, err)
		return
	}
	defer os.RemoveAll(tmp)
	f, files, sum, ok := q.readForm(w, r, tmp)
	if !ok {
		return
	}
	if q.opts.CheckFields != nil {
		if verrs := q.opts.CheckFields(f.checked()); len(verrs) > 0 {
			service.WriteValidation(w, f.placed(verrs)...)
			return
		}
	}
	if f.Callback != "" {
		if why := q.checkCallback(f.Callback); why != "" {
			service.WriteValidation(w, service.ValidationError{Loc: []any{"body", CallbackField}, Msg: why, Type: "value_error"})
			return
		}
	}
	key := strings.TrimSpace(r.Header.Get("Idempotency-Key"))
	if c := service.ClientOf(r.Context()); c != "" && key != "" {
		key = c + ":" + key // each client's keys its own (a name has no ':')
	}
	if key != "" && q.sameJob(w, r.Context(), key, sum) {
		return
	}
	// SQLite: the files move to the job's folder; PostgreSQL: insert
	// copies them into the item rows.
	dir := tmp
	if q.pool == nil {
		dir = q.jobDir(id)
		if err := os.MkdirAll(filepath.Dir(dir), 0o777); err != nil {
			q.fail(w, err)
			return
		}
		if err := os.Rename(tmp, dir); err != nil {
			q.fail(w, err)
			return
		}
	}
	if err := q.insert(r.Context(), id, f, files, dir, key, sum, f.Callback); err != nil {
		os.RemoveAll(dir)
		if key != "" && q.sameJob(w, r.Context(), key, sum) { // a twin won the race
			return
		}
		q.fail(w, err)
		return
	}
	q.log.Info("job queued", "job", id, "items", len(files))
	q.count(metricSubmitted, "")
	q.notify()
	q.answer(w, r.Context(), id, http.StatusAccepted)
}

// sameJob answers a request whose Idempotency-Key is known: 200 with the
// job when the request is the same, 422 when it is not. It reports whether
// it answered.
func (q *Queue) sameJob(w http.ResponseWriter, ctx context.Context, key, sum string) bool {
	id, h, err := q.byKey(ctx, key)
	switch {
	case errors.Is(err, errNotFound):
		return false
	case err != nil:
		q.fail(w, err)
	case h != sum:
		service.WriteError(w, http.StatusUnprocessableEntity, service.ReasonIdempotencyConflict, "this Idempotency-Key was used for another request")
	default:
		q.answer(w, ctx, id, http.StatusOK)
	}
	return true
}

// readForm stores the item files under dir/in and keeps the other parts;
// sum is the hash of the whole request (path, query, parts in order). It
// answers a bad request itself.
func (q *Queue) readForm(w http.ResponseWriter, r *http.Request, dir string) (f *form, files []upload, sum string, ok bool) {
	mr, err := r.MultipartReader()
	if errors.Is(err, http.ErrNotMultipart) {
		ct := r.Header.Get("Content-Type")
		if ct == "" {
			ct = "none"
		}
		service.WriteError(w, http.StatusUnsupportedMediaType, service.ReasonUnsupportedMediaType,
			fmt.Sprintf("Content-Type %s is not supported: send a job as multipart/form-data, each item a file field", ct))
		return nil, nil, "", false
	}
	if err != nil {
		service.WriteError(w, http.StatusBadRequest, service.ReasonBadRequest, "the multipart body cannot be read: "+err.Error())
		return nil, nil, "", false
	}
	if err := os.MkdirAll(filepath.Join(dir, "in"), 0o777); err != nil {
		q.fail(w, err)
		return nil, nil, "", false
	}
	f = &form{Query: r.URL.RawQuery, At: -1}
	h := sha256.New()
	fmt.Fprintf(h, "%s\x00%s\x00", q.opts.Path, f.Query)
	for {
		p, err := mr.NextPart()
		if err == io.EOF {
			break
		}
		if err != nil {
			service.WriteBodyError(w, err)
			return nil, nil, "", false
		}
		if p.FormName() == "" {
			// A part whose Content-Disposition cannot be read (a file
			// name with a bare quote) has no field: it was dropped without
			// a word, the job one file short.
			service.WriteError(w, http.StatusUnprocessableEntity, service.ReasonBadField,
				fmt.Sprintf("a form part has no field name: its Content-Disposition %q cannot be read (quote the file name as RFC 7578 says)", p.Header.Get("Content-Disposition")))
			return nil, nil, "", false
		}
		fmt.Fprintf(h, "%s\x00%s\x00%s\x00", p.FormName(), p.FileName(), p.Header.Get("Content-Type"))
		if p.FormName() == q.opts.ItemField {
			if f.At < 0 {
				f.At = len(f.Parts)
			}
			err = saveItem(h, p, filepath.Join(dir, "in", strconv.Itoa(len(files))))
			// Named as the routes name an upload (service.ClientName): a
			// Windows path C:\x\0002.png was kept whole.
			files = append(files, upload{Name: service.ClientName(p.FileName()), Type: p.Header.Get("Content-Type")})
		} else {
			var b []byte
			b, err = io.ReadAll(io.LimitReader(p, maxPartBytes+1))
			if err == nil && len(b) > maxPartBytes {
				service.WriteError(w, http.StatusBadRequest, service.ReasonBadField, fmt.Sprintf("form part %q is longer than %d bytes", p.FormName(), maxPartBytes))
				return nil, nil, "", false
			}
			h.Write(b)
			if err == nil && p.FormName() == CallbackField {
				f.Callback = strings.TrimSpace(string(b))
				continue
			}
			if err == nil && q.opts.Book != nil && p.FormName() == q.opts.Book.Field && p.FileName() == "" {
				f.Book = strings.TrimSpace(string(b))
				continue
			}
			f.Parts = append(f.Parts, part{Field: p.FormName(), FileName: p.FileName(), ContentType: p.Header.Get("Content-Type"), Data: b})
		}
		if err != nil {
			service.WriteBodyError(w, err)
			return nil, nil, "", false
		}
		h.Write([]byte{0})
	}
	if ok := q.checkItems(w, f, len(files)); !ok {
		return nil, nil, "", false
	}
	if f.At < 0 {
		f.At = len(f.Parts) // a book job's file goes last
	}
	return f, files, hex.EncodeToString(h.Sum(nil)), true
}

// EnvMaxActive names Options.MaxActive's variable.
const EnvMaxActive = "JOBS_MAX_ACTIVE"

// DefaultMaxActive is Options.MaxActive when JOBS_MAX_ACTIVE is not set.
const DefaultMaxActive = 1000

// full answers 503 (Retry-After) when the service holds MaxActive jobs not
// yet ended, and reports whether it did. (Before, every job was taken: 300
// submitted at once were all queued, and only a full disk said no.)
func (q *Queue) full(ctx context.Context, w http.ResponseWriter) bool {
	max := cmp.Or(q.opts.MaxActive, DefaultMaxActive)
	var n int
	if err := q.queryRow(ctx, `SELECT COUNT(*) FROM archivekit_job WHERE state IN (?, ?)`, Queued, Running).Scan(&n); err != nil || n < max {
		return false // a count that fails refuses nothing: the insert says what is wrong
	}
	w.Header().Set("Retry-After", "60")
	service.WriteError(w, http.StatusServiceUnavailable, service.ReasonOverloaded,
		fmt.Sprintf("the service holds %d jobs not yet ended, its limit (%s): try again when some have ended", n, EnvMaxActive))
	return true
}

// checkItems answers a form without items (n files and perhaps a book):
// it needs files or, where the service takes books, a book URL, not both.
func (q *Queue) checkItems(w http.ResponseWriter, f *form, n int) bool {
	b := q.opts.Book
	switch {
	case f.Book != "" && n > 0:
		service.WriteValidation(w, service.ValidationError{Loc: []any{"body", b.Field}, Msg: "give files or a book, not both", Type: "value_error"})
	case f.Book != "":
		if why := checkBookURL(f.Book); why != "" {
			service.WriteValidation(w, service.ValidationError{Loc: []any{"body", b.Field}, Msg: b.Field + " " + why, Type: "value_error"})
			return false
		}
		return true
	case n == 0 && b != nil:
		service.WriteValidation(w, service.ValidationError{Loc: []any{"body", q.opts.ItemField}, Msg: "a job needs at least one file in the form field " + q.opts.ItemField + " or a book URL in the field " + b.Field, Type: "missing"})
	case n == 0:
		service.WriteValidation(w, service.ValidationError{Loc: []any{"body", q.opts.ItemField}, Msg: "a job needs at least one file in the form field " + q.opts.ItemField, Type: "missing"})
	default:
		return true
	}
	return false
}

// saveItem writes one item's file, hashing it.
func saveItem(h hash.Hash, p *multipart.Part, path string) error {
	out, err := os.Create(path)
	if err != nil {
		return err
	}
	_, err = io.Copy(io.MultiWriter(out, h), p)
	if err == nil {
		err = out.Sync()
	}
	return errors.Join(err, out.Close())
}

// answer writes a job's status with Location.
func (q *Queue) answer(w http.ResponseWriter, ctx context.Context, id string, code int) {
	st, err := q.status(ctx, id)
	if err != nil {
		q.fail(w, err)
		return
	}
	w.Header().Set("Location", q.opts.Root.Of("/jobs/"+id))
	service.WriteJSON(w, code, st)
}

func (q *Queue) fail(w http.ResponseWriter, err error) {
	if nf := (notFound{}); errors.As(err, &nf) {
		service.WriteError(w, http.StatusNotFound, service.ReasonJobNotFound, nf.Error())
		return
	}
	if errors.Is(err, errNotFound) {
		service.WriteError(w, http.StatusNotFound, service.ReasonJobNotFound, "no job has this id")
		return
	}
	q.log.Error("job store", "error", err.Error())
	if storageFull(err) {
		service.WriteStorageFull(w, err)
		return
	}
	service.WriteError(w, http.StatusInternalServerError, service.ReasonInternal, "the job store failed: "+err.Error())
}

// Get serves GET /jobs/{id}: the job's state, item counts, errors and
// items skipped.
func (q *Queue) Get(w http.ResponseWriter, r *http.Request) {
	st, err := q.status(r.Context(), r.PathValue("id"))
	if err != nil {
		q.fail(w, err)
		return
	}
	service.WriteJSON(w, http.StatusOK, st)
}

// Cancel serves DELETE /jobs/{id}: a queued or running job is canceled
// (its item in flight is cut and records nothing, no other starts); an
// ended job answers 409.
func (q *Queue) Cancel(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	ctx := r.Context()
	_, _, rid, err := q.jobState(ctx, id)
	if err != nil {
		q.fail(w, err)
		return
	}
	done, err := q.setState(ctx, id, Canceled, Queued, Running)
	if err != nil {
		q.fail(w, err)
		return
	}
	if !done {
		st, _ := q.status(ctx, id)
		service.WriteError(w, http.StatusConflict, service.ReasonJobEnded, "the job has already ended: "+st.State)
		return
	}
	q.countCanceled(ctx, id)
	q.cutRunning(id)
	if _, err := q.river.JobCancel(ctx, rid); err != nil {
		q.log.Warn("River cancel", "job", id, "error", err.Error())
	}
	if err := q.dropUnrun(ctx, id); err != nil {
		q.log.Warn("the uploads of a canceled job's items that never ran are not removed; they are removed with the job", "job", id, "error", err.Error())
	}
	q.log.Info("job canceled", "job", id)
	q.answer(w, ctx, id, http.StatusOK)
}

// dropUnrun removes the uploaded files of canceled job id's items that
// never ran, and never will (a canceled job of a thousand pages kept them
// all until JOBS_RETENTION removed the job); the answers of those that ran
// stay, with their inputs.
func (q *Queue) dropUnrun(ctx context.Context, id string) error {
	if q.pool != nil {
		_, err := q.exec(ctx, `UPDATE archivekit_item SET input = NULL WHERE job_id = ? AND state = ?`, id, Queued)
		return err
	}
	items, err := q.items(ctx, id)
	if err != nil {
		return err
	}
	var errs []error
	for _, it := range items {
		if it.State == Queued {
			if err := os.Remove(q.inPath(id, it.Index)); err != nil && !errors.Is(err, fs.ErrNotExist) {
				errs = append(errs, err)
			}
		}
	}
	return errors.Join(errs...)
}

// ItemResult is an item of GET /jobs/{id}/results.
type ItemResult struct {
	Item        int    `json:"item"`
	Name        string `json:"name"`
	State       string `json:"state"`
	Status      int    `json:"status,omitempty"`
	ContentType string `json:"content_type,omitempty"`
	// Headers are the other headers the answer carried that describe it
	// (translate-api's X-Translation-* and Link to the licence, the limits
	// applied: answerHeaders); absent when none.
	Headers map[string][]string `json:"headers,omitempty"`
	// URL is the item's answer as the synchronous endpoint gave it.
	URL string `json:"url,omitempty"`
	// Output is a JSON answer; Text a text answer (XML); other answers
	// are at URL only.
	Output json.RawMessage `json:"output,omitempty"`
	Text   *string         `json:"text,omitempty"`
	// NotInline says why a JSON or text answer is at URL only: a text
	// answer that is not UTF-8 (a document keeps its declared encoding,
	// which a JSON string cannot carry byte for byte), or JSON that does
	// not parse.
	NotInline string `json:"not_inline,omitempty"`
	Error     string `json:"error,omitempty"`
	// Reason is why a skipped item was skipped; such an item has no
	// answer (no URL, Output or Text).
	Reason string `json:"reason,omitempty"`
	// Runs is how many times the item was started (more than 1 after a
	// stop or a kill cut it).
	Runs int `json:"runs"`
	// Book identifies a book job's item in its book.
	Book *BookRef `json:"book,omitempty"`
	// disposition is the answer's Content-Disposition, whose file name
	// names it in the results archive.
	disposition string
}

// Results is the answer of GET /jobs/{id}/results.
type Results struct {
	ID    string `json:"id"`
	State string `json:"state"`
	// Book is a book job's URL.
	Book  string       `json:"book,omitempty"`
	Items []ItemResult `json:"items"`
	// RunMetadata is an ended job's run metadata, the record a command
	// line run writes (its run-metadata.json in the archive); ROCrate the
	// URL of the archive whose ro-crate-metadata.json describes the job as
	// an RO-Crate CreateAction. Both absent until the job ends, and on a
	// service that keeps no run metadata.
	RunMetadata json.RawMessage `json:"run_metadata,omitempty"`
	ROCrate     string          `json:"ro_crate,omitempty"`
}

// Results serves GET /jobs/{id}/results: every item with its answer so
// far (JSON answers inline, text answers as strings); with ?format=zip the
// ZIP archive of GET /jobs/{id}/results.zip instead (kept for the clients
// that ask so; one route giving JSON or a ZIP by a query parameter could
// not be downloaded by clients generated from the OpenAPI document).
func (q *Queue) Results(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	if bad := queryOnce(r.URL.Query(), "format"); bad != nil {
		service.WriteValidation(w, bad...)
		return
	}
	switch r.URL.Query().Get("format") {
	case "", "json":
	case "zip":
		q.zipResults(w, r, id)
		return
	default:
		service.WriteValidation(w, service.ValidationError{Loc: []any{"query", "format"}, Msg: "format is json or zip", Type: "value_error"})
		return
	}
	// The answer is written item by item, each answer read, encoded and
	// let go in turn: a job of 1,000 documents answered 26 MB, built
	// whole in memory for each request (four at once took 530 MB).
	// Whatever fails before the first byte is an error answer; after it,
	// the connection is cut, so a client never takes a part for the whole.
	var out *bufio.Writer
	var n int
	items := func(ir ItemResult) error {
		b, err := json.Marshal(ir)
		if err != nil {
			return err
		}
		if n > 0 {
			out.WriteByte(',')
		}
		n++
		_, err = out.Write(b)
		return err
	}
	_, err := q.results(r.Context(), id, func(ir *ItemResult) error {
		ir.URL = q.opts.Root.Of(fmt.Sprintf("/jobs/%s/results/%d", id, ir.Item))
		b, err := q.output(r.Context(), id, ir.Item)
		if err == nil {
			inline(ir, b)
		}
		return err
	}, &resultStream{start: func(head *Results) error {
		h := w.Header()
		h.Set("Content-Type", "application/json")
		h.Del("Content-Disposition")
		w.WriteHeader(http.StatusOK)
		out = bufio.NewWriterSize(w, 64<<10)
		b, err := json.Marshal(head)
		if err != nil {
			return err
		}
		// {"id":…,"state":…,"items":[] less its "]}": the items follow.
		_, err = out.Write(bytes.TrimSuffix(b, []byte("]}")))
		return err
	}, each: items})
	if err != nil && out == nil {
		q.fail(w, err)
		return
	}
	// The run metadata is read after the state (the job may end between
	// the two: then the state says running and the client asks again; read
	// before, a job said succeeded without it).
	var meta []byte
	if err == nil {
		meta, err = q.runMeta(r.Context(), id)
	}
	if err == nil {
		err = out.WriteByte(']')
	}
	if err == nil && meta != nil {
		var c bytes.Buffer
		crate, _ := json.Marshal(q.opts.Root.Of("/jobs/" + id + "/results.zip"))
		if err = json.Compact(&c, meta); err == nil {
			fmt.Fprintf(out, `,"run_metadata":%s,"ro_crate":%s`, c.Bytes(), crate)
		}
	}
	if err == nil {
		_, err = out.WriteString("}\n")
	}
	if err == nil {
		err = out.Flush()
	}
	if err != nil {
		if r.Context().Err() == nil { // not the client gone
			q.log.Error("job results", "job", id, "error", err.Error())
		}
		panic(http.ErrAbortHandler) // the client sees a cut answer, never a part for the whole
	}
}

// Archive serves GET /jobs/{id}/results.zip: the job's answers as a ZIP
// archive (zipResults).
func (q *Queue) Archive(w http.ResponseWriter, r *http.Request) {
	q.zipResults(w, r, r.PathValue("id"))
}

// resultStream takes a job's results as they are read (Queue.results):
// start their head (no items) before the first item, each item in turn.
type resultStream struct {
	start func(*Results) error
	each  func(ItemResult) error
}

// results is a job's results, each item that has an answer (succeeded or
// failed) passed to done. With a stream, the items go to it and are not
// kept in the results returned.
func (q *Queue) results(ctx context.Context, id string, done func(*ItemResult) error, stream *resultStream) (*Results, error) {
	st, err := q.status(ctx, id)
	if err != nil {
		return nil, err
	}
	items, err := q.items(ctx, id)
	if err != nil {
		return nil, err
	}
	res := &Results{ID: id, State: st.State, Book: st.Book, Items: []ItemResult{}}
	var each func(ItemResult) error
	if stream != nil {
		if err := stream.start(res); err != nil {
			return nil, err
		}
		each = stream.each
	}
	for _, it := range items {
		ir := ItemResult{Item: it.Index, Name: it.Name, State: it.State, Status: it.Status, ContentType: it.Type, Error: it.Error, Runs: it.Runs, Book: bookRef(it.Ref),
			Headers: storedHeaders(it.Headers), disposition: it.Disposition}
		if st.State == Canceled && (it.State == Queued || it.State == Running) {
			ir.State = Canceled // left unrun by the cancel
		}
		if it.State == Skipped {
			ir.Error, ir.Reason = "", it.Error
		}
		if it.State == Succeeded || it.State == Failed {
			if err := done(&ir); err != nil {
				return nil, err
			}
		}
		if each != nil {
			if err := each(ir); err != nil {
				return nil, err
			}
			continue
		}
		res.Items = append(res.Items, ir)
	}
	return res, nil
}

// inline puts a JSON or text answer into ir.
func inline(ir *ItemResult, b []byte) {
	switch {
	case strings.Contains(ir.ContentType, "json") && json.Valid(b):
		ir.Output = b
	case strings.Contains(ir.ContentType, "json"):
		ir.NotInline = "the answer is not valid JSON: its bytes are at url"
	case strings.HasPrefix(ir.ContentType, "text/") || strings.Contains(ir.ContentType, "xml"):
		if utf8.Valid(b) {
			s := string(b)
			ir.Text = &s
			return
		}
		ir.NotInline = "the answer is not UTF-8 (a document keeps the encoding it declares): its bytes are at url"
	}
}

// noItem is the detail of a 404 for an item the job does not have.
func noItem(id, item string, n int) string {
	if len(item) > 40 {
		item = item[:40] + "..."
	}
	if n == 0 {
		return fmt.Sprintf("job %s has no items yet (a book job lists its items when it first runs), so none numbered %q", id, item)
	}
	return fmt.Sprintf("job %s has no item %q: its items are numbered 0 to %d", id, item, n-1)
}

// Item serves GET /jobs/{id}/results/{item}: the item's answer as the
// synchronous endpoint gave it (status, type, body); a skipped item has
// none (404 item_skipped, with why).
func (q *Queue) Item(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	it, ok := q.itemOf(w, r)
	if !ok {
		return
	}
	n := it.Index
	switch it.State {
	case Queued, Running:
		if st, _, _, err := q.jobState(r.Context(), id); err == nil && st == Canceled {
			service.WriteError(w, http.StatusNotFound, service.ReasonItemCanceled, fmt.Sprintf("item %d (%s) has no answer: job %s was canceled before it ran", n, it.Name, id))
			return
		}
		if it.State == Running {
			break
		}
		service.WriteError(w, http.StatusConflict, service.ReasonItemNotReady, "the item has not run yet")
		return
	case Skipped:
		service.WriteError(w, http.StatusNotFound, service.ReasonItemSkipped, fmt.Sprintf("item %d (%s) was skipped, so it has no answer: %s", n, it.Name, it.Error))
		return
	}
	b, err := q.output(r.Context(), id, n)
	if err != nil {
		q.fail(w, err)
		return
	}
	if it.Type != "" {
		w.Header().Set("Content-Type", it.Type)
	}
	if it.Disposition != "" {
		w.Header().Set("Content-Disposition", it.Disposition)
	}
	setAnswerHeaders(w.Header(), it.Headers)
	w.Header().Set("Content-Length", strconv.Itoa(len(b)))
	w.WriteHeader(it.Status)
	_, _ = w.Write(b)
}

// answerHeaders are the headers of an item's answer that describe it and
// are kept with it, beside its type and name: those service.ExposedHeaders
// lets a page read (translate-api's licence, backend and counts, the
// limits applied, the Link to the licence), less those of the request
// and its connection (Location, Retry-After, X-Request-ID, the
// disposition kept in its own column); JSON, "" when it had none. A job
// item's answer lacked them, though it is the answer "as the synchronous
// endpoint gave it".
func answerHeaders(h http.Header) string {
	kept := map[string][]string{}
	for _, name := range strings.Split(service.ExposedHeaders, ",") {
		name = http.CanonicalHeaderKey(strings.TrimSpace(name))
		switch name {
		case "Content-Disposition", "Location", "Retry-After", "X-Request-Id":
			continue
		}
		if v := h.Values(name); len(v) > 0 {
			kept[name] = v
		}
	}
	if len(kept) == 0 {
		return ""
	}
	b, _ := json.Marshal(kept) // strings only: cannot fail
	return string(b)
}

// storedHeaders reads the headers answerHeaders kept (stored); nil for
// none, or for a value that does not read.
func storedHeaders(stored string) map[string][]string {
	var kept map[string][]string
	if stored == "" || json.Unmarshal([]byte(stored), &kept) != nil || len(kept) == 0 {
		return nil
	}
	return kept
}

// setAnswerHeaders sets the headers answerHeaders kept (stored) on h.
func setAnswerHeaders(h http.Header, stored string) {
	for name, v := range storedHeaders(stored) {
		h[http.CanonicalHeaderKey(name)] = v
	}
}

// itemOf reads the item of the request's {id} and {item}, or answers 404
// itself (no such job, or no such item) and reports false.
func (q *Queue) itemOf(w http.ResponseWriter, r *http.Request) (item, bool) {
	id := r.PathValue("id")
	items, err := q.items(r.Context(), id)
	if err == nil && len(items) == 0 {
		_, _, _, err = q.jobState(r.Context(), id) // no items: is there a job?
	}
	if err != nil {
		q.fail(w, err)
		return item{}, false
	}
	n, err := strconv.Atoi(r.PathValue("item"))
	if err != nil || n < 0 || n >= len(items) {
		service.WriteError(w, http.StatusNotFound, service.ReasonItemNotFound, noItem(id, r.PathValue("item"), len(items)))
		return item{}, false
	}
	return items[n], true
}

// Input opens the file of the item of the request's {id} and {item} as it
// was submitted, which the job keeps until it is removed, for a service
// that shows something of it (pageclass-api's thumbnails of a job's page
// images); name is the item's name. A book's page, which the job does not
// keep, is fetched again from its URL, as its item fetched it
// (BookInput.Fetch: the service's bounds and allowed hosts, within
// ItemTimeout). Otherwise it answers the request itself and reports
// false: 404 for an unknown job or item, 502 fetch_failed for a book's
// page that cannot be fetched. The caller closes the file.
func (q *Queue) Input(w http.ResponseWriter, r *http.Request) (f io.ReadCloser, name string, ok bool) {
	if err := q.visible(r.Context(), r.PathValue("id")); err != nil {
		q.fail(w, err)
		return nil, "", false
	}
	it, ok := q.itemOf(w, r)
	if !ok {
		return nil, "", false
	}
	if it.Source != "" && q.opts.Book != nil {
		got := q.fetch(r.Context(), it.Source)
		if got.err != nil {
			service.WriteError(w, http.StatusBadGateway, service.ReasonFetchFailed,
				fmt.Sprintf("item %d of job %s is a page of a book, which the job keeps no copy of: fetched again from %s, %v", it.Index, r.PathValue("id"), it.Source, got.err))
			return nil, "", false
		}
		return io.NopCloser(bytes.NewReader(got.data)), it.Name, true
	}
	if it.Source != "" {
		service.WriteError(w, http.StatusNotFound, service.ReasonNotFound,
			fmt.Sprintf("item %d of job %s is a page of a book: the job keeps no copy of it (its file is at %s)", it.Index, r.PathValue("id"), it.Source))
		return nil, "", false
	}
	if it.State == Skipped { // a book's page with no file
		service.WriteError(w, http.StatusNotFound, service.ReasonItemSkipped, fmt.Sprintf("item %d (%s) was skipped, so it has no file: %s", it.Index, it.Name, it.Error))
		return nil, "", false
	}
	f, err := q.input(r.Context(), r.PathValue("id"), it.Index)
	if errors.Is(err, os.ErrNotExist) || errors.Is(err, sql.ErrNoRows) {
		err = notFound{r.PathValue("id")} // removed meanwhile
	}
	if err != nil {
		q.fail(w, err)
		return nil, "", false
	}
	return f, it.Name, true
}

// Page is the answer of GET /jobs.
type Page struct {
	Jobs []*Status `json:"jobs"`
	// Next is the URL of the next page; absent on the last.
	Next string `json:"next,omitempty"`
}

// queryOnce refuses each of keys given twice in query, or given empty
// (an empty until= or format= was taken as absent, a repeated one as its
// first value: the client meant something the answer ignored).
func queryOnce(query url.Values, keys ...string) []service.ValidationError {
	var bad []service.ValidationError
	for _, k := range keys {
		switch vs := query[k]; {
		case len(vs) > 1:
			bad = append(bad, service.ValidationError{Loc: []any{"query", k}, Msg: k + " is given " + strconv.Itoa(len(vs)) + " times: give it once", Type: "value_error"})
		case len(vs) == 1 && strings.TrimSpace(vs[0]) == "":
			bad = append(bad, service.ValidationError{Loc: []any{"query", k}, Msg: k + " is empty: give a value or leave it out", Type: "value_error"})
		}
	}
	return bad
}

// maxListName bounds the text GET /jobs?name= seeks, in bytes.
const maxListName = 200

// List serves GET /jobs?limit=N&before=C&state=S&name=T&since=A&until=B:
// the jobs, newest first, N a page (default 50, at most 500), those in
// state S, with T in an item's name or their book's URL, and submitted at
// or after A and before B (RFC 3339) when asked; next names the following
// page, with the same filter.
func (q *Queue) List(w http.ResponseWriter, r *http.Request) {
	limit, before := 50, int64(0)
	bad := queryOnce(r.URL.Query(), "limit", "before", "state", "since", "until")
	if name := r.URL.Query()["name"]; len(name) > 1 {
		bad = append(bad, queryOnce(r.URL.Query(), "name")...) // an empty name is no filter, a space a text
	}
	f := listFilter{State: r.URL.Query().Get("state"), Name: r.URL.Query().Get("name")}
	if f.State != "" && !slices.Contains([]string{Queued, Running, Succeeded, Failed, Canceled}, f.State) {
		bad = append(bad, service.ValidationError{Loc: []any{"query", "state"}, Msg: "state is one of queued, running, succeeded, failed, canceled", Type: "value_error"})
	}
	if len(f.Name) > maxListName || !utf8.ValidString(f.Name) {
		bad = append(bad, service.ValidationError{Loc: []any{"query", "name"}, Msg: fmt.Sprintf("name is a text of at most %d bytes (UTF-8)", maxListName), Type: "value_error"})
	}
	for _, b := range []struct {
		key string
		t   *time.Time
	}{{"since", &f.Since}, {"until", &f.Until}} {
		if v := r.URL.Query().Get(b.key); v != "" {
			// An offset east of UTC typed into a URL unescaped
			// ("…T06:15:00+05:45") arrives with a space for its plus:
			// RFC 3339 has no space, so it can only be that.
			t, err := time.Parse(time.RFC3339, strings.Replace(v, " ", "+", 1))
			if err != nil {
				bad = append(bad, service.ValidationError{Loc: []any{"query", b.key}, Msg: b.key + " is a time in RFC 3339 (2026-11-28T09:00:00Z, or with its offset: 2026-11-28T14:45:00+05:45)", Type: "value_error"})
			}
			*b.t = t
		}
	}
	if v := r.URL.Query().Get("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > 500 {
			bad = append(bad, service.ValidationError{Loc: []any{"query", "limit"}, Msg: "limit is a whole number from 1 to 500", Type: "value_error"})
		}
		limit = n
	}
	if v := r.URL.Query().Get("before"); v != "" {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n < 1 {
			bad = append(bad, service.ValidationError{Loc: []any{"query", "before"}, Msg: "before is the cursor of a next link", Type: "value_error"})
		}
		before = n
	}
	if bad != nil {
		service.WriteValidation(w, bad...)
		return
	}
	ids, next, err := q.list(r.Context(), limit, before, f)
	if err != nil {
		q.fail(w, err)
		return
	}
	p := Page{Jobs: []*Status{}}
	for _, id := range ids {
		st, err := q.status(r.Context(), id)
		if err != nil {
			q.fail(w, err)
			return
		}
		p.Jobs = append(p.Jobs, st)
	}
	if next > 0 {
		p.Next = q.opts.Root.Of(fmt.Sprintf("/jobs?limit=%d&before=%d", limit, next))
		if f.State != "" {
			p.Next += "&state=" + url.QueryEscape(f.State)
		}
		if f.Name != "" {
			p.Next += "&name=" + url.QueryEscape(f.Name)
		}
		if !f.Since.IsZero() {
			p.Next += "&since=" + url.QueryEscape(f.Since.Format(time.RFC3339Nano))
		}
		if !f.Until.IsZero() {
			p.Next += "&until=" + url.QueryEscape(f.Until.Format(time.RFC3339Nano))
		}
	}
	service.WriteJSON(w, http.StatusOK, p)
}

// Async wraps the synchronous endpoint's handler: a request with Prefer:
// respond-async becomes a job (Submit), any other runs as before.
func (q *Queue) Async(sync http.HandlerFunc) http.HandlerFunc {
	if q == nil {
		return sync
	}
	return func(w http.ResponseWriter, r *http.Request) {
		for _, v := range r.Header.Values("Prefer") {
			for _, p := range strings.Split(v, ",") {
				if strings.EqualFold(strings.TrimSpace(p), "respond-async") {
					w.Header().Set("Preference-Applied", "respond-async")
					q.Submit(w, r)
					return
				}
			}
		}
		sync(w, r)
	}
}

// owned serves h, a route of one job ({id}), only for the client that
// submitted the job (visible); another client gets 404 job_not_found, as
// for a job that does not exist.
func (q *Queue) owned(h http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if err := q.visible(r.Context(), r.PathValue("id")); err != nil {
			q.fail(w, err)
			return
		}
		h(w, r)
	}
}

// PostgreSQL's disk_full (53100) and SQLite's SQLITE_FULL (13, its primary
// code).
const (
	pgDiskFull = "53100"
	sqliteFull = 13
)

// storageFull reports whether err, of the job store or its files, says
// the disk or quota is full: ENOSPC or EDQUOT in its chain, PostgreSQL's
// disk_full or SQLite's SQLITE_FULL.
func storageFull(err error) bool {
	var pe *pgconn.PgError
	var se *sqlite.Error
	switch {
	case service.StorageFull(err):
		return true
	case errors.As(err, &pe):
		return pe.Code == pgDiskFull
	case errors.As(err, &se):
		return se.Code()&0xff == sqliteFull
	}
	return false
}

// countCanceled counts in job_items_total{state="canceled"} the items that
// canceled job id leaves unrun (queued, or cut while running): the items
// submitted were more than those counted ended.
func (q *Queue) countCanceled(ctx context.Context, id string) {
	if q.opts.Metrics == nil {
		return
	}
	var n int
	if err := q.queryRow(ctx, `SELECT COUNT(*) FROM archivekit_item WHERE job_id = ? AND state IN (?, ?)`, id, Queued, Running).Scan(&n); err != nil {
		q.log.Warn("the canceled job's unrun items are not counted in the metrics", "job", id, "error", err.Error())
		return
	}
	q.opts.Metrics.AddCount(metricItems, Canceled, float64(n))
}
