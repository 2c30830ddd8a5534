package jobs

import (
	"database/sql"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strconv"

	"archivekit/internal/atomicfile"
)

// Derived files are what a service makes from a job's item to show it
// (pageclass-api's thumbnail of a page image), kept with the job so that
// the next request takes them instead of making them again: with SQLite
// in the job's folder (JOBS_DIR/jobs/<id>/derived), with PostgreSQL in
// its rows (archivekit_derived). They go with the job (JOBS_RETENTION).

// MaxDerived is the largest derived file kept (1 MiB): a thumbnail is some
// kilobytes.
const MaxDerived = 1 << 20

// derivedTable holds PostgreSQL jobs' derived files (part of schema, so
// SQLite has the table too, unused).
const derivedTable = `
CREATE TABLE IF NOT EXISTS archivekit_derived (
	job_id TEXT NOT NULL,
	idx INTEGER NOT NULL,
	name TEXT NOT NULL,
	data BLOB NOT NULL,
	PRIMARY KEY (job_id, idx, name)
);`

// derivedPath is the file of item i's derived file name (SQLite).
func (q *Queue) derivedPath(id string, i int, name string) string {
	return filepath.Join(q.jobDir(id), "derived", strconv.Itoa(i)+"-"+name)
}

// requestItem is the job id and item index of a request's {id} and
// {item}, when the job is the caller's; ok is false otherwise.
func (q *Queue) requestItem(r *http.Request) (id string, i int, ok bool) {
	id = r.PathValue("id")
	i, err := strconv.Atoi(r.PathValue("item"))
	if err != nil || i < 0 || q.visible(r.Context(), id) != nil {
		return "", 0, false
	}
	return id, i, true
}

// Derived returns what KeepDerived kept under name for the item of the
// request's {id} and {item}; ok is false when nothing is, and when the job
// is not the caller's or there is no such job or item (Input answers
// those).
func (q *Queue) Derived(r *http.Request, name string) (data []byte, ok bool) {
	id, i, ok := q.requestItem(r)
	if !ok {
		return nil, false
	}
	var err error
	if q.pool == nil {
		data, err = os.ReadFile(q.derivedPath(id, i, name))
	} else {
		err = q.queryRow(r.Context(), `SELECT data FROM archivekit_derived WHERE job_id = ? AND idx = ? AND name = ?`, id, i, name).Scan(&data)
	}
	if err != nil && !errors.Is(err, os.ErrNotExist) && !errors.Is(err, sql.ErrNoRows) {
		q.log.Warn("a derived file of a job's item cannot be read; it is made again", "job", id, "item", i, "name", name, "error", err)
	}
	return data, err == nil
}

// KeepDerived keeps data, made from the item of the request's {id} and
// {item} (name: a file name, such as thumbnail.jpg), until the job is
// removed. A file over MaxDerived is not kept.
func (q *Queue) KeepDerived(r *http.Request, name string, data []byte) error {
	id, i, ok := q.requestItem(r)
	if !ok {
		return notFound{id}
	}
	if len(data) > MaxDerived {
		return fmt.Errorf("%s of item %d: %d bytes, over the %d kept", name, i, len(data), MaxDerived)
	}
	if q.pool == nil {
		p := q.derivedPath(id, i, name)
		if _, err := os.Stat(q.jobDir(id)); err != nil {
			return err // the job removed meanwhile: no folder made again for it
		}
		if err := os.MkdirAll(filepath.Dir(p), 0o777); err != nil {
			return err
		}
		return atomicfile.WriteFile(p, data, 0o666)
	}
	_, err := q.exec(r.Context(), `INSERT INTO archivekit_derived (job_id, idx, name, data) VALUES (?, ?, ?, ?)
		ON CONFLICT (job_id, idx, name) DO UPDATE SET data = excluded.data`, id, i, name, data)
	return err
}
