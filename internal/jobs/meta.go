package jobs

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"archivekit/internal/rocrate"
)

// RunRecord is a job's run metadata, the same record as a command line
// run's: internal/paradata's Writer of the tool's own document, which the
// service starts (RunJob) with what it knows (tool version, models or
// backends with their digests, licence, settings). The queue adds the job's
// form, counts, failed items and outputs, and the items' summaries when
// the record is an ItemRecorder, and keeps the record (Encode) when the
// job ends.
type RunRecord interface {
	SetConfig(key string, value any)
	AddInputs(n int)
	Processed(n int)
	Skip(file, reason string)
	CountOutput(kind string, n int)
	AddOutputFile(paths ...string)
	Warn(msg string)
	Encode(runErr error, end time.Time) ([]byte, error)
}

// RunJob is what a service is told of a job to start its run metadata.
type RunJob struct {
	// ID is the job's id; RunID its run id in the metadata ("job-" and
	// the id).
	ID, RunID string
	// Start is when the job started (else was created).
	Start time.Time
	// Fields are the job's form fields (the first value of each); Book a
	// book job's URL.
	Fields map[string]string
	Book   string
	// BookNote is a book job's record of its book (AnnotateBook); nil
	// when none was attached.
	BookNote []byte
}

// runMetaFile and crateFile are the run metadata's and the crate's names
// in a job's results archive.
const (
	runMetaFile = "run-metadata.json"
	crateFile   = rocrate.MetadataFile
)

// runRecord is the run metadata of job id as it ends in state at end
// (setState keeps it with the state); nil without Options.RunMeta. A
// failure is logged: the job then ends without run metadata.
func (q *Queue) runRecord(ctx context.Context, id, state string, end time.Time) []byte {
	if q.opts.RunMeta == nil {
		return nil
	}
	b, err := q.makeRecord(ctx, id, state, end)
	if err != nil {
		q.log.Error("job run metadata not made", "job", id, "error", err.Error())
		return nil
	}
	return b
}

func (q *Queue) makeRecord(ctx context.Context, id, state string, end time.Time) ([]byte, error) {
	st, err := q.status(ctx, id)
	if err != nil {
		return nil, err
	}
	_, f, _, err := q.jobState(ctx, id)
	if err != nil {
		return nil, err
	}
	items, err := q.items(ctx, id)
	if err != nil {
		return nil, err
	}
	start := st.CreatedAt
	if st.StartedAt != nil {
		start = *st.StartedAt
	}
	fields := f.fields()
	rec, err := q.opts.RunMeta(ctx, RunJob{ID: id, RunID: "job-" + id, Start: start, Fields: fields, Book: f.Book, BookNote: f.BookNote})
	if err != nil {
		return nil, err
	}
	rec.SetConfig("job_id", id)
	rec.SetConfig("endpoint", q.opts.Path)
	rec.SetConfig("form", fields)
	if f.Query != "" {
		rec.SetConfig("query", f.Query)
	}
	if f.Book != "" {
		rec.SetConfig("book", f.Book)
	}
	rec.AddInputs(len(items))
	ir, _ := rec.(ItemRecorder)
	var sums map[int][]byte
	if ir != nil {
		if sums, err = q.summaries(ctx, id); err != nil {
			return nil, err
		}
	}
	var runErr error
	for _, it := range items {
		switch it.State {
		case Succeeded:
			rec.Processed(1)
			rec.CountOutput(outputKind(it.Type), 1)
			// As the results archive names it (the item's name was
			// listed, page.alto.xml for the archive's page_en.alto.xml).
			rec.AddOutputFile(answerName(it.Index, it.Name, it.Disposition, it.Type))
			if s := sums[it.Index]; s != nil {
				if err := ir.AddItem(it.Name, s); err != nil {
					rec.Warn(fmt.Sprintf("item %d (%s): its summary was not counted: %v", it.Index, it.Name, err))
				}
			}
		case Failed:
			rec.Skip(it.Name, fmt.Sprintf("%d: %s", it.Status, it.Error))
		case Skipped:
			rec.Skip(it.Name, "skipped: "+it.Error)
		default:
			rec.Skip(it.Name, "not run: the job ended before it")
		}
	}
	switch state {
	case Failed:
		why := "every item failed"
		if st.Items.Skipped > 0 {
			why = fmt.Sprintf("no item succeeded: %d failed, %d skipped", st.Items.Failed, st.Items.Skipped)
		}
		runErr = errors.New(cmp.Or(st.Error, why))
	case Canceled:
		runErr = canceledError("canceled (DELETE /jobs/" + id + ")")
	}
	return rec.Encode(runErr, end)
}

// outputKind is the kind an answer counts as: json, xml, html, or its
// media type's subtype.
func outputKind(ctype string) string {
	switch {
	case strings.Contains(ctype, "json"):
		return "json"
	case strings.Contains(ctype, "xml"):
		return "xml"
	case strings.Contains(ctype, "html"):
		return "html"
	}
	if _, sub, ok := strings.Cut(strings.SplitN(ctype, ";", 2)[0], "/"); ok {
		return sub
	}
	return "other"
}

// runMeta reads job id's run metadata (nil when it has none).
func (q *Queue) runMeta(ctx context.Context, id string) ([]byte, error) {
	var s string
	err := q.queryRow(ctx, `SELECT COALESCE(run_meta, '') FROM archivekit_job WHERE id = ?`, id).Scan(&s)
	if err != nil || s == "" {
		return nil, err
	}
	return []byte(s), nil
}

// crate is the RO-Crate metadata of a job's results archive of parts,
// the run metadata meta among them.
func crate(res *Results, parts []rocrate.JobPart, meta []byte, f *form) ([]byte, error) {
	var sources []string
	if f.Book != "" {
		sources = append(sources, f.Book)
	} else {
		for _, it := range res.Items {
			sources = append(sources, it.Name)
		}
	}
	c, err := rocrate.BuildJob(rocrate.Job{ID: res.ID, Parts: parts, RunMetadata: runMetaFile, Meta: meta, Sources: sources})
	if err != nil {
		return nil, err
	}
	return c.JSON()
}

// canceledError is the outcome of a canceled job: its run metadata says
// canceled (paradata.StatusCanceled), not failed.
type canceledError string

func (e canceledError) Error() string  { return string(e) }
func (e canceledError) Canceled() bool { return true }
