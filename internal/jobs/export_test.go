package jobs

import (
	"context"
	"os"
	"time"
)

// FailingParts makes q's answer files refuse every write with err (a full
// disk) while refuse reports true, and waits wait before writing a held
// answer again (for tests of holdAnswer).
func FailingParts(q *Queue, refuse func() bool, err error, wait time.Duration) {
	q.opts.holdWait = wait
	q.opts.createPart = func(path string) (partFile, error) {
		f, e := os.Create(path)
		if e != nil {
			return nil, e
		}
		return &failingPart{File: f, refuse: refuse, err: err}, nil
	}
}

type failingPart struct {
	*os.File
	refuse func() bool
	err    error
}

func (f *failingPart) Write(p []byte) (int, error) {
	if f.refuse() {
		return 0, f.err
	}
	return f.File.Write(p)
}

// SetFinished dates job id's end at t (tests of what an ended job's
// archive is dated).
func SetFinished(q *Queue, id string, t time.Time) error {
	_, err := q.exec(context.Background(), `UPDATE archivekit_job SET finished_ms = ? WHERE id = ?`, t.UnixMilli(), id)
	return err
}

// OldSearchKeys rewrites job id's items' search keys in the form kept
// before 2026-11-30 (foldKey), as a job submitted then has them.
func OldSearchKeys(q *Queue, id string) error {
	rows, err := q.query(context.Background(), `SELECT idx, name FROM archivekit_item WHERE job_id = ?`, id)
	if err != nil {
		return err
	}
	type item struct {
		idx  int
		name string
	}
	var items []item
	for rows.Next() {
		var it item
		if err := rows.Scan(&it.idx, &it.name); err != nil {
			rows.Close()
			return err
		}
		items = append(items, it)
	}
	rows.Close()
	for _, it := range items {
		if _, err := q.exec(context.Background(), `UPDATE archivekit_item SET name_key = ? WHERE job_id = ? AND idx = ?`, foldKey(it.name), id, it.idx); err != nil {
			return err
		}
	}
	return nil
}

// SetCallbackBackoff sets the wait after a callback's first failed attempt
// (before Start).
func SetCallbackBackoff(q *Queue, d time.Duration) { q.opts.CallbackBackoff = d }
