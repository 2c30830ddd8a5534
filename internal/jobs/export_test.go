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
