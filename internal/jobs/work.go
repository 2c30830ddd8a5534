package jobs

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"net/textproto"
	"os"
	"strings"
	"time"

	"github.com/riverqueue/river"
)

// work runs a job's items not yet done, one after the other, then ends the
// job: failed when every item failed, otherwise succeeded (the failed items
// are listed in its errors).
func (q *Queue) work(ctx context.Context, id string) error {
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
	items, err := q.items(ctx, id)
	if err != nil {
		return err
	}
	for _, it := range items {
		if it.State != Queued {
			continue
		}
		if q.stopping() {
			q.log.Info("job paused by the stop; it resumes at the next start", "job", id, "item", it.Index)
			// Until the next start, which makes it available at once.
			return river.JobSnooze(time.Hour)
		}
		if st, _, _, err := q.jobState(ctx, id); err != nil || st == Canceled {
			return err
		}
		if err := q.runItem(ctx, id, it, f); err != nil {
			if st, _, _, _ := q.jobState(context.WithoutCancel(ctx), id); st == Canceled {
				return nil
			}
			return err
		}
	}
	return q.finish(ctx, id)
}

// finish ends a job whose items are all done.
func (q *Queue) finish(ctx context.Context, id string) error {
	st, err := q.status(ctx, id)
	if err != nil {
		return err
	}
	end := Succeeded
	if st.Items.Total > 0 && st.Items.Failed == st.Items.Total {
		end = Failed
	}
	_, err = q.setState(ctx, id, end, Running, Queued)
	q.log.Info("job ended", "job", id, "state", end, "items", st.Items.Total, "failed", st.Items.Failed)
	return err
}

// runItem sends item it to the synchronous handler and records its answer.
// An item cut by ctx records nothing and runs again later.
func (q *Queue) runItem(ctx context.Context, id string, it item, f *form) error {
	if _, err := q.db.ExecContext(ctx, `UPDATE archivekit_item SET runs = runs + 1 WHERE job_id = ? AND idx = ?`, id, it.Index); err != nil {
		return err
	}
	in, err := os.Open(q.inPath(id, it.Index))
	if err != nil {
		return fmt.Errorf("item %d: %w", it.Index, err)
	}
	defer in.Close()
	out := q.outPath(id, it.Index)
	if err := os.MkdirAll(q.jobDir(id)+"/out", 0o755); err != nil {
		return err
	}
	tmp, err := os.Create(out + ".part")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	defer tmp.Close()

	pr, pw := io.Pipe()
	mw := multipart.NewWriter(pw)
	go func() { pw.CloseWithError(writeForm(mw, f, q.opts.ItemField, it, in)) }()
	target, h := q.opts.Path, q.opts.Handler
	if q.opts.Pick != nil {
		target, h = q.opts.Pick(it.InType, it.Name)
	}
	if f.Query != "" {
		target += "?" + f.Query
	}
	ictx, cancel := ctx, context.CancelFunc(func() {})
	if q.opts.ItemTimeout > 0 {
		ictx, cancel = context.WithTimeout(ctx, q.opts.ItemTimeout)
	}
	defer cancel()
	req, err := http.NewRequestWithContext(ictx, http.MethodPost, target, pr)
	if err != nil {
		pr.Close()
		return err
	}
	req.Header.Set("Content-Type", mw.FormDataContentType())
	req.RemoteAddr = "jobs"
	a := &answer{header: http.Header{}, body: tmp}
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
		_, _ = fmt.Fprintf(tmp, "{\"detail\":%q}\n", fmt.Sprintf("the item took longer than %v", q.opts.ItemTimeout))
	}
	if a.err != nil {
		return fmt.Errorf("item %d: writing the answer: %w", it.Index, a.err)
	}
	if err := tmp.Sync(); err != nil {
		return err
	}
	if err := os.Rename(tmp.Name(), out); err != nil {
		return err
	}
	status := a.code()
	state, detail := Succeeded, ""
	if status < 200 || status > 299 {
		state, detail = Failed, errorDetail(out)
	}
	_, err = q.db.ExecContext(ctx, `UPDATE archivekit_item SET state = ?, status = ?, out_type = ?, out_disposition = ?, error = ? WHERE job_id = ? AND idx = ? AND state = 'queued'`,
		state, status, a.header.Get("Content-Type"), a.header.Get("Content-Disposition"), detail, id, it.Index)
	if err == nil {
		q.count(metricItems, state)
		q.notify()
	}
	return err
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

// errorDetail is the detail of a failed item's answer: the "detail" of a
// JSON error body, else its start.
func errorDetail(path string) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return err.Error()
	}
	var e struct {
		Detail any `json:"detail"`
	}
	if json.Unmarshal(b, &e) == nil && e.Detail != nil {
		if s, ok := e.Detail.(string); ok {
			return s
		}
		d, _ := json.Marshal(e.Detail)
		return string(d)
	}
	if len(b) > 500 {
		b = b[:500]
	}
	return string(b)
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
