package jobs

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"errors"
	"os"
	"path/filepath"

	"archivekit/internal/atomicfile"
)

// A Scratch keeps files of one job between its book's reading
// (BookInput.Items) and its items: translate-api keeps the text files it
// fetched to detect a book's language, and each item takes its file
// instead of fetching it a second time from the client's server; a run
// that pauses keeps there the files it fetched ahead (keepAhead). Files
// are kept where the job's own files are: with SQLite in the job's folder
// (JOBS_DIR/jobs/<id>/scratch), with PostgreSQL in its rows
// (archivekit_scratch), so that a job that goes on on another replica
// still finds them. What its items did not take is removed when the job
// ends, and with the job (JOBS_RETENTION) at the latest.
type Scratch struct {
	q  *Queue
	id string
}

type scratchKey struct{}

// ScratchOf is the Scratch of the job whose work ctx is (BookInput.Items,
// BookInput.Fetch, an item's request); nil outside a job's work. A nil
// Scratch keeps nothing and has nothing to take.
func ScratchOf(ctx context.Context) *Scratch {
	s, _ := ctx.Value(scratchKey{}).(*Scratch)
	return s
}

// scratchTable holds the files of PostgreSQL jobs' scratches (part of
// schema, so SQLite has the table too, unused).
const scratchTable = `
CREATE TABLE IF NOT EXISTS archivekit_scratch (
	job_id TEXT NOT NULL,
	name TEXT NOT NULL,
	data BLOB NOT NULL,
	PRIMARY KEY (job_id, name)
);`

// dir is the job's scratch folder (SQLite).
func (s *Scratch) dir() string { return filepath.Join(s.q.jobDir(s.id), "scratch") }

// path is the file of name in the job's scratch folder: the SHA-256 of
// the name, so that any name (a URL) makes a plain file name.
func (s *Scratch) path(name string) string {
	sum := sha256.Sum256([]byte(name))
	return filepath.Join(s.dir(), hex.EncodeToString(sum[:]))
}

// Keep keeps data under name (a file's URL), replacing what was kept
// under it, whole or not at all.
func (s *Scratch) Keep(ctx context.Context, name string, data []byte) error {
	if s == nil {
		return nil
	}
	if s.q.pool == nil {
		if err := os.MkdirAll(s.dir(), 0o755); err != nil {
			return err
		}
		return atomicfile.WriteFile(s.path(name), data, 0o644)
	}
	_, err := s.q.exec(ctx, `INSERT INTO archivekit_scratch (job_id, name, data) VALUES (?, ?, ?)
		ON CONFLICT (job_id, name) DO UPDATE SET data = excluded.data`, s.id, name, data)
	return err
}

// Take returns what was kept under name and removes it; ok is false when
// nothing is (never kept, or taken already).
func (s *Scratch) Take(ctx context.Context, name string) (data []byte, ok bool, err error) {
	if s == nil {
		return nil, false, nil
	}
	if s.q.pool == nil {
		p := s.path(name)
		data, err := os.ReadFile(p)
		if errors.Is(err, os.ErrNotExist) {
			return nil, false, nil
		}
		if err != nil {
			return nil, false, err
		}
		return data, true, os.Remove(p)
	}
	err = s.q.queryRow(ctx, `DELETE FROM archivekit_scratch WHERE job_id = ? AND name = ? RETURNING data`, s.id, name).Scan(&data)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, false, nil
	}
	return data, err == nil, err
}

// clearScratch removes what job id's scratch still holds.
func (q *Queue) clearScratch(ctx context.Context, id string) error {
	if q.pool == nil {
		return os.RemoveAll((&Scratch{q: q, id: id}).dir())
	}
	_, err := q.exec(ctx, `DELETE FROM archivekit_scratch WHERE job_id = ?`, id)
	return err
}
