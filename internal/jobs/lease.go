package jobs

import (
	"context"
	"time"
)

// A job's run holds a lease on it (archivekit_job.owner, lease_ms): one
// process runs a job at a time, and renews the lease every third of
// Options.Lease while it does. On PostgreSQL every replica looks for
// leases run out (reap): their holder was killed or lost the database, and
// the job is queued again for whoever takes it. The lease times are the
// replicas' clocks, which must agree to well within the lease.

// take takes job id's lease for this process; it reports false when
// another process holds it (or the job has ended).
func (q *Queue) take(ctx context.Context, id string) (bool, error) {
	now := time.Now()
	res, err := q.exec(ctx, `UPDATE archivekit_job SET owner = ?, lease_ms = ? WHERE id = ? AND state IN (?, ?) AND (owner IS NULL OR owner = ? OR lease_ms < ?)`,
		q.owner, now.Add(q.opts.Lease).UnixMilli(), id, Queued, Running, q.owner, now.UnixMilli())
	if err != nil {
		return false, err
	}
	n, err := res.RowsAffected()
	return n == 1, err
}

// hold renews job id's lease until ctx ends; when it cannot (the job was
// canceled or ended elsewhere, or the lease was lost to another process)
// it calls lost.
func (q *Queue) hold(ctx context.Context, id string, lost func()) {
	t := time.NewTicker(q.opts.Lease / 3)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		res, err := q.exec(ctx, `UPDATE archivekit_job SET lease_ms = ? WHERE id = ? AND owner = ? AND state IN (?, ?)`,
			time.Now().Add(q.opts.Lease).UnixMilli(), id, q.owner, Queued, Running)
		if ctx.Err() != nil {
			return
		}
		var n int64
		if err == nil {
			n, err = res.RowsAffected()
		}
		if err != nil {
			q.log.Warn("renewing a job's lease", "job", id, "error", err.Error())
			continue // tried again; the lease outlives two failures
		}
		if n == 0 {
			q.log.Info("job lease lost (canceled, ended or taken over)", "job", id)
			lost()
			return
		}
	}
}

// letGo gives job id's lease back.
func (q *Queue) letGo(ctx context.Context, id string) {
	if _, err := q.exec(context.WithoutCancel(ctx), `UPDATE archivekit_job SET owner = NULL, lease_ms = NULL WHERE id = ? AND owner = ?`, id, q.owner); err != nil {
		q.log.Warn("giving a job's lease back", "job", id, "error", err.Error())
	}
}

// reap looks, every half lease until the queue closes, for jobs whose
// lease ran out, and queues each again (one River job; the replica that
// takes it resumes the job at its first item not done).
func (q *Queue) reap() {
	defer close(q.reaped)
	t := time.NewTicker(q.opts.Lease / 2)
	defer t.Stop()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		<-q.stop
		cancel()
	}()
	for {
		select {
		case <-q.stop:
			return
		case <-t.C:
		}
		if n, err := q.reapOnce(ctx); err != nil && ctx.Err() == nil {
			q.log.Warn("taking back jobs whose lease ran out", "error", err.Error())
		} else if n > 0 {
			q.log.Info("jobs taken back from a lost replica", "jobs", n)
		}
	}
}

// reapOnce queues again the jobs whose lease ran out; it returns how many.
func (q *Queue) reapOnce(ctx context.Context) (int, error) {
	now := time.Now().UnixMilli()
	ids, err := q.ids(ctx, `SELECT id FROM archivekit_job WHERE owner IS NOT NULL AND lease_ms < ? AND state IN (?, ?)`, now, Queued, Running)
	if err != nil {
		return 0, err
	}
	n := 0
	for _, id := range ids {
		err := q.inTx(ctx, func(tx txn) error {
			// One replica wins the row; the others see it taken back.
			k, err := tx.exec(ctx, `UPDATE archivekit_job SET owner = NULL, lease_ms = NULL WHERE id = ? AND owner IS NOT NULL AND lease_ms < ?`, id, now)
			if err != nil || k == 0 {
				return err
			}
			rid, err := tx.insertJob(ctx, jobArgs{ID: id})
			if err != nil {
				return err
			}
			n++
			_, err = tx.exec(ctx, `UPDATE archivekit_job SET river_id = ? WHERE id = ?`, rid, id)
			return err
		})
		if err != nil {
			return n, err
		}
	}
	return n, nil
}
