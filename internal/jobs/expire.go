package jobs

import (
	"context"
	"os"
	"time"

	"github.com/riverqueue/river"
)

// EnvRetention is the environment variable with how long an ended job
// and its files are kept (a Go duration such as 168h); unset, for ever.
const EnvRetention = "JOBS_RETENTION"

// expireArgs is the periodic River job that removes expired jobs.
type expireArgs struct{}

// Kind is River's name of the expiry kind.
func (expireArgs) Kind() string { return "archivekit_jobs_expire" }

type expireWorker struct {
	river.WorkerDefaults[expireArgs]
	q *Queue
}

// Work removes the expired jobs.
func (w *expireWorker) Work(ctx context.Context, _ *river.Job[expireArgs]) error {
	n, err := w.q.Expire(ctx, time.Now())
	if n > 0 {
		w.q.log.Info("expired jobs removed", "jobs", n)
	}
	return err
}

// expireEvery is how often expiry runs: a tenth of the retention, between
// a minute and an hour.
func expireEvery(retention time.Duration) time.Duration {
	return min(max(retention/10, time.Minute), time.Hour)
}

// Expire removes the jobs that ended more than Options.Retention before
// now, with their items, files and Idempotency-Keys; it returns how many.
// In a JOBS_DIR, the database's freed pages and its write-ahead log are
// emptied after (what was removed is in neither file).
// With no retention it does nothing. It runs by itself every tenth of the
// retention (at least a minute, at most an hour).
func (q *Queue) Expire(ctx context.Context, now time.Time) (int, error) {
	if q == nil || q.opts.Retention <= 0 {
		return 0, nil
	}
	cut := now.Add(-q.opts.Retention).UnixMilli()
	ids, err := q.ids(ctx, `SELECT id FROM archivekit_job WHERE state IN (?, ?, ?) AND finished_ms < ?`, Succeeded, Failed, Canceled, cut)
	if err != nil {
		return 0, err
	}
	for i, id := range ids {
		if err := q.inTx(ctx, func(tx txn) error {
			if _, err := tx.exec(ctx, `DELETE FROM archivekit_item WHERE job_id = ?`, id); err != nil {
				return err
			}
			if _, err := tx.exec(ctx, `DELETE FROM archivekit_scratch WHERE job_id = ?`, id); err != nil {
				return err
			}
			if _, err := tx.exec(ctx, `DELETE FROM archivekit_derived WHERE job_id = ?`, id); err != nil {
				return err
			}
			_, err := tx.exec(ctx, `DELETE FROM archivekit_job WHERE id = ?`, id)
			return err
		}); err != nil {
			return i, err
		}
		if q.pool != nil {
			continue // the files were in the rows
		}
		if err := os.RemoveAll(q.jobDir(id)); err != nil {
			return i + 1, err
		}
	}
	if len(ids) == 0 {
		return 0, nil
	}
	return len(ids), q.compact(ctx)
}
