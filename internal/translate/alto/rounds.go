package alto

import (
	"context"
	"fmt"

	"archivekit/internal/translate/backend"
	"archivekit/internal/translate/batch"
	"archivekit/internal/translate/guard"
)

// failedBlock is a block the guard left untranslated on its page: its
// source language, page and the index of its first log row in the page's
// rows (one row per holder line, as untouched writes them).
type failedBlock struct {
	b    *block
	lang string
	page int
	row  int
}

// endRounds tries the blocks the guard left untranslated again, after every
// page, for opt.RetryRounds rounds: one guard.Retry per block a round (a
// backend.Deterministic backend gets no call: its reply would not change).
// A block accepted in a round is written as any other, with status Retried
// (unit status rerun); its untranslated rows are replaced in place.
// Pages' results are changed in place.
func (t *translator) endRounds(ctx context.Context, results []pageResult) error {
	for round := 0; round < t.opt.RetryRounds; round++ {
		left := 0
		for i := range results {
			pr := &results[i]
			var still []failedBlock
			for _, f := range pr.failed {
				ok, err := t.retryBlock(ctx, f, pr)
				if err != nil {
					return fmt.Errorf("page %d: end round %d: %w", f.page, round+1, err)
				}
				if !ok {
					still = append(still, f)
				}
			}
			pr.failed = still
			left += len(still)
		}
		if left == 0 {
			return nil
		}
	}
	return nil
}

// retryBlock makes one end-round attempt at f, writing it into pr when
// the guard accepts the reply.
func (t *translator) retryBlock(ctx context.Context, f failedBlock, pr *pageResult) (bool, error) {
	seg, err := guard.Retry(ctx, t.opt.Backend, f.b.text, f.lang, t.opt.Target, nil)
	pr.stats.Calls += seg.Calls
	if err != nil || seg.Status == backend.Untranslated {
		return false, err
	}
	var anchors []string
	if !t.opt.FastAlign {
		lines := make([]string, len(f.b.holders))
		for j, l := range f.b.holders {
			lines[j] = l.text
		}
		bt := &batch.Batcher{Backend: t.opt.Backend, Target: t.opt.Target, MaxChars: t.opt.MaxBatchChars, Counts: &pr.stats.Counts}
		if anchors, _, err = bt.Translate(ctx, lines, f.lang, false); err != nil {
			return false, err
		}
	}
	f.b.accepted = true
	// Write into a scratch result, then put its rows where the block's
	// untranslated rows were.
	tmp := pageResult{langs: pr.langs, prev: pr.prev}
	if _, err := t.writeTranslated(f.b, f.lang, seg.Text, anchors, f.page, backend.Retried, &tmp); err != nil {
		return false, err
	}
	copy(pr.rows[f.row:f.row+len(tmp.rows)], tmp.rows)
	pr.edits = append(pr.edits, tmp.edits...)
	pr.stats.Translated += tmp.stats.Translated
	pr.stats.Lines += tmp.stats.Lines
	pr.stats.OverAlignLimit += tmp.stats.OverAlignLimit
	pr.stats.LinesEmptied += tmp.stats.LinesEmptied
	pr.stats.LinesJoined += tmp.stats.LinesJoined
	pr.stats.Untranslated -= tmp.stats.Translated // the block, and the one it absorbed
	pr.stats.Rerun++
	return true, nil
}
