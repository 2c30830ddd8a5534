package jobs

import (
	"context"
	"database/sql"
	"errors"
)

// Two items of a book whose files continue each other (BookInput.Joins: a
// word hyphenated across two text files) run knowing each other: the
// first is given the second's file (NextFile), which the run fetches
// before the first runs and keeps for the second (a file fetched once a
// run, as ever), and the second the summary the first attached
// (PrevSummary), read from the first's row, so that a job paused or
// restarted between the two joins them all the same. Items run in order,
// so the second never runs before the first has ended.

// joiner says whether items[a] and items[b] join (BookInput.Joins, each
// the only item of its page, both with a file to fetch); nil when the
// service joins none.
func (q *Queue) joiner(items []item) func(a, b int) bool {
	if q.opts.Book == nil || q.opts.Book.Joins == nil {
		return nil
	}
	perPage := map[int]int{}
	refs := make([]*BookRef, len(items))
	for i, it := range items {
		if refs[i] = bookRef(it.Ref); refs[i] != nil {
			perPage[refs[i].Page]++
		}
	}
	sole := func(i int) bool {
		return i >= 0 && i < len(items) && items[i].Source != "" && refs[i] != nil && perPage[refs[i].Page] == 1
	}
	return func(a, b int) bool {
		return sole(a) && sole(b) && q.opts.Book.Joins(*refs[a], *refs[b])
	}
}

// joining says whether two queued items that follow each other join:
// the run then holds a next item's file while the item before it runs.
func joining(items []item, joins func(a, b int) bool) bool {
	if joins == nil {
		return false
	}
	for k := 0; k+1 < len(items); k++ {
		if items[k].State == Queued && items[k+1].State == Queued && joins(k, k+1) {
			return true
		}
	}
	return false
}

// linked says whether a queued item joins the item before or after it:
// it is then given the next item's file or the summary of the one before
// (itemLink), so the job's items run one after the other.
func linked(items []item, joins func(a, b int) bool) bool {
	if joins == nil {
		return false
	}
	for k := 0; k+1 < len(items); k++ {
		if (items[k].State == Queued || items[k+1].State == Queued) && joins(k, k+1) {
			return true
		}
	}
	return false
}

// itemLink is what items[k] is given of its neighbours (joins): the next
// item's file, taken from the fetches ahead or fetched now and kept in
// held for that item, and the summary of the item before it when that
// one succeeded.
func (q *Queue) itemLink(ctx context.Context, id string, items []item, k int, joins func(a, b int) bool, a *ahead, held map[int]*fetched) (link, error) {
	var l link
	if joins == nil {
		return l, nil
	}
	if next := k + 1; next < len(items) && items[next].State == Queued && joins(k, next) {
		i := items[next].Index
		nf := held[i]
		if nf == nil {
			if nf = a.take(i); nf == nil {
				nf = q.fetch(ctx, items[next].Source)
			}
		}
		if ctx.Err() != nil {
			return l, ctx.Err()
		}
		held[i] = nf
		if nf.err == nil {
			l.next = nf.data
		}
	}
	if k > 0 && joins(k-1, k) {
		var state string
		var summary sql.NullString
		err := q.queryRow(ctx, `SELECT state, summary FROM archivekit_item WHERE job_id = ? AND idx = ?`, id, items[k-1].Index).Scan(&state, &summary)
		if err != nil && !errors.Is(err, sql.ErrNoRows) {
			return l, err
		}
		if state == Succeeded && summary.Valid {
			l.prev = []byte(summary.String)
		}
	}
	return l, nil
}
