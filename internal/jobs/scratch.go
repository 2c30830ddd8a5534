package jobs

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"

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
//
// A job's scratch holds at most Options.ScratchLimit bytes at once
// (JOBS_SCRATCH_MB, default 1 GiB): a Keep past it fails with
// ErrScratchFull, and the item of that file fetches it again.
type Scratch struct {
	q  *Queue
	id string

	mu   sync.Mutex
	used int64 // bytes held, counted at the first Keep of the run (-1 until then)
}

// EnvScratchMB is the environment variable with Options.ScratchLimit in
// MiB (0: keep nothing).
const EnvScratchMB = "JOBS_SCRATCH_MB"

// DefaultScratchLimit is Options.ScratchLimit when unset: 1 GiB.
const DefaultScratchLimit = 1 << 30

// ErrScratchFull is a Keep that would take the job's scratch past
// Options.ScratchLimit.
var ErrScratchFull = errors.New("the job's scratch is full")

// reserve counts n more bytes held, failing with ErrScratchFull past the
// limit; the bytes held before this run are counted at its first call.
func (s *Scratch) reserve(ctx context.Context, n int64) error {
	limit := s.q.opts.ScratchLimit
	if limit == 0 {
		limit = DefaultScratchLimit
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.used < 0 {
		held, err := s.held(ctx)
		if err != nil {
			return err
		}
		s.used = held
	}
	if limit < 0 {
		return fmt.Errorf("%w: %s=0 keeps nothing", ErrScratchFull, EnvScratchMB)
	}
	if s.used+n > limit {
		return fmt.Errorf("%w: %d bytes held, %d more would pass its %d (%s)", ErrScratchFull, s.used, n, limit, EnvScratchMB)
	}
	s.used += n
	return nil
}

// release counts n bytes no longer held.
func (s *Scratch) release(n int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.used >= n {
		s.used -= n
	}
}

// held is how many bytes the job's scratch holds.
func (s *Scratch) held(ctx context.Context) (int64, error) {
	if s.q.pool == nil {
		entries, err := os.ReadDir(s.dir())
		if errors.Is(err, os.ErrNotExist) {
			return 0, nil
		}
		var n int64
		for _, e := range entries {
			if info, err := e.Info(); err == nil {
				n += info.Size()
			}
		}
		return n, err
	}
	var n int64
	err := s.q.queryRow(ctx, `SELECT COALESCE(SUM(LENGTH(data)), 0) FROM archivekit_scratch WHERE job_id = ?`, s.id).Scan(&n)
	return n, err
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
// under it, whole or not at all; ErrScratchFull where that would take
// the scratch past its limit.
func (s *Scratch) Keep(ctx context.Context, name string, data []byte) error {
	if s == nil {
		return nil
	}
	if err := s.reserve(ctx, int64(len(data))); err != nil {
		return err
	}
	err := s.keep(ctx, name, data)
	if err != nil {
		s.release(int64(len(data)))
	}
	return err
}

func (s *Scratch) keep(ctx context.Context, name string, data []byte) error {
	if s.q.pool == nil {
		if err := os.MkdirAll(s.dir(), 0o777); err != nil {
			return err
		}
		return atomicfile.WriteFile(s.path(name), data, 0o666)
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
		s.release(int64(len(data)))
		return data, true, os.Remove(p)
	}
	err = s.q.queryRow(ctx, `DELETE FROM archivekit_scratch WHERE job_id = ? AND name = ? RETURNING data`, s.id, name).Scan(&data)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, false, nil
	}
	if err == nil {
		s.release(int64(len(data)))
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
