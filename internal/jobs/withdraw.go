package jobs

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"archivekit/internal/service"
)

// An item's answer can be found wrong after it was given: a translation
// service that answers one text to everything is told only from its third
// such reply, and the items translated with the replies before succeeded
// with it. Withdraw fails such an item while its job runs.

type itemKey struct{}

// itemRef is a job item: its job's id and its index.
type itemRef struct {
	job   string
	index int
}

// ItemName names the job item whose request has context ctx (the
// handler's r.Context()), as its place in the job API: "<job id>/items/<index>".
// ok is false outside a job item (a synchronous request).
func ItemName(ctx context.Context) (name string, ok bool) {
	r, ok := ctx.Value(itemKey{}).(itemRef)
	if !ok {
		return "", false
	}
	return r.job + "/items/" + strconv.Itoa(r.index), true
}

// parseItemName reads an ItemName.
func parseItemName(name string) (itemRef, bool) {
	job, idx, ok := strings.Cut(name, "/items/")
	i, err := strconv.Atoi(idx)
	return itemRef{job, i}, ok && err == nil && job != "" && i >= 0
}

// Withdraw takes back the answer of the job item name names (ItemName)
// when it succeeded in a job that still runs, or, when it is running in
// this process, as soon as it succeeds: its answer was found wrong after
// it was given. The item runs again, as an item answered 503 does, while
// it has runs left (Options.UnavailableTries); at its last run it fails
// with status, reason and detail (its answer becomes that error's body). It reports
// whether the item's success stands: it succeeded in a job that has
// ended, whose run metadata is written, and stays as it is. An item that
// failed or was skipped, and a name that names no item, change nothing.
func (q *Queue) Withdraw(ctx context.Context, name string, status int, reason service.Reason, detail string) (stands bool, err error) {
	ref, ok := parseItemName(name)
	if !ok {
		return false, nil
	}
	q.withdrawing.Lock()
	defer q.withdrawing.Unlock()
	var item, job string
	var runs int
	err = q.queryRow(ctx, `SELECT i.state, j.state, i.runs FROM archivekit_item i JOIN archivekit_job j ON j.id = i.job_id WHERE i.job_id = ? AND i.idx = ?`, ref.job, ref.index).
		Scan(&item, &job, &runs)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return false, nil
	case err != nil:
		return false, err
	case job != Running:
		return item == Succeeded, nil
	}
	o := withdrawn(status, reason, detail)
	// A withdrawal is the backend's passing failure: the item runs again
	// while it has runs left, as one answered 503 does; at its last run
	// it fails with the withdrawal's answer.
	again := runs < q.unavailableTries()
	o.again = again
	switch item {
	case Queued:
		// Running here: its success, if it comes, is the withdrawal's
		// failure. Not running (a run paused before its end): its next
		// run translates afresh.
		q.mu.Lock()
		if q.running[ref] {
			if q.withdrawals == nil {
				q.withdrawals = map[itemRef]outcome{}
			}
			q.withdrawals[ref] = o
		}
		q.mu.Unlock()
	case Succeeded:
		// Only while the job runs: one that ends meanwhile keeps its
		// answers, which its run metadata counts.
		query, args := q.outcomeUpdate(ref.job, ref.index, o, Succeeded)
		if again {
			query, args = q.requeueUpdate(ref.job, ref.index)
		}
		query += ` AND EXISTS (SELECT 1 FROM archivekit_job WHERE id = ? AND state = 'running')`
		res, err := q.exec(ctx, query, append(args, ref.job)...)
		if err != nil {
			return true, fmt.Errorf("job %s item %d not withdrawn: %w", ref.job, ref.index, err)
		}
		if n, _ := res.RowsAffected(); n == 0 {
			// The job ended meanwhile, or the item was withdrawn by
			// another call: its success stands in the first case only.
			err := q.queryRow(ctx, `SELECT state FROM archivekit_item WHERE job_id = ? AND idx = ?`, ref.job, ref.index).Scan(&item)
			return err == nil && item == Succeeded, err
		}
		if again {
			q.log.Warn("job item withdrawn: it runs again", "job", ref.job, "item", ref.index, "run", runs, "of", q.unavailableTries(), "reason", string(reason), "detail", detail)
			q.count(metricItems, "withdrawn") // its success was counted: it will end again
			q.notify()
			return false, nil
		}
		q.log.Warn("job item withdrawn", "job", ref.job, "item", ref.index, "reason", string(reason), "detail", detail)
		q.count(metricItems, Failed)
		q.notify()
		if q.pool == nil {
			// SQLite keeps answers in files: the failure's replaces the
			// document (on PostgreSQL the update above did).
			if err := q.writeAnswer(ref.job, ref.index, o.out); err != nil {
				return false, fmt.Errorf("job %s item %d withdrawn, but its answer not replaced: %w", ref.job, ref.index, err)
			}
		}
	}
	return false, nil
}

// withdrawn is the outcome of an item withdrawn with status, reason and
// detail.
func withdrawn(status int, reason service.Reason, detail string) outcome {
	return outcome{state: Failed, status: status, ctype: "application/json", detail: detail, reason: reason, out: problemBody(status, reason, detail)}
}

// runs notes that item ref starts running in this process (on), or has
// ended (off), forgetting a withdrawal of its run then.
func (q *Queue) runs(ref itemRef, on bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if on {
		if q.running == nil {
			q.running = map[itemRef]bool{}
		}
		q.running[ref] = true
		return
	}
	delete(q.running, ref)
	delete(q.withdrawals, ref)
}

// withdrawOnEnd is o, or, when Withdraw named item i of job id while it
// ran and o is a success, the withdrawal's outcome: to run again (again,
// nothing recorded), or its failure (its answer written over o's on
// SQLite). Either way the withdrawal is forgotten: it names
// this run of the item only.
func (q *Queue) withdrawOnEnd(id string, i int, o outcome) (outcome, error) {
	ref := itemRef{id, i}
	q.mu.Lock()
	w, ok := q.withdrawals[ref]
	delete(q.withdrawals, ref)
	q.mu.Unlock()
	if !ok || o.state != Succeeded {
		return o, nil
	}
	if w.again {
		q.log.Warn("job item withdrawn as it ended: it runs again", "job", id, "item", i, "reason", string(w.reason), "detail", w.detail)
		return w, nil
	}
	if q.pool == nil {
		if err := q.writeAnswer(id, i, w.out); err != nil {
			return o, err
		}
	}
	q.log.Warn("job item withdrawn as it ended", "job", id, "item", i, "reason", string(w.reason), "detail", w.detail)
	return w, nil
}

// requeueUpdate is the statement that puts item i back in the queue, its
// answer taken back (the SQLite answer file stays until its next run
// writes it; a queued item's answer is not served).
func (q *Queue) requeueUpdate(id string, i int) (string, []any) {
	set := ""
	if q.pool != nil {
		set = ", output = NULL"
	}
	return `UPDATE archivekit_item SET state = 'queued', status = NULL, out_type = NULL, out_disposition = NULL, out_headers = NULL, error = NULL, reason = NULL, summary = NULL` + set + ` WHERE job_id = ? AND idx = ? AND state = 'succeeded'`,
		[]any{id, i}
}
