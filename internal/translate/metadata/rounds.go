package metadata

import (
	"context"
	"fmt"

	"archivekit/internal/translate/backend"
	"archivekit/internal/translate/guard"
	"archivekit/internal/translate/xmlsplice"
)

// failedField is a field the guard left untranslated: what it needs to be
// written later, and the index of its untranslated log row.
type failedField struct {
	f          *XPath
	el         *xmlsplice.Node
	text, lang string
	row        int
	rej        *guard.Rejection
}

// endRounds tries the fields the guard left untranslated again, after
// every other field, for opt.RetryRounds rounds: one guard.Retry per field
// a round (a backend.Deterministic backend gets no call). A field accepted
// in a round is written as any other, with status Retried (unit status
// rerun), its log row in the place of its untranslated one. Each field
// still rejected after the rounds gets its warning.
func (t *translation) endRounds(ctx context.Context) error {
	opt, res := t.opt, t.res
	for round := 0; round < opt.RetryRounds && len(t.failed) > 0; round++ {
		var still []failedField
		for _, ff := range t.failed {
			seg, err := guard.Retry(ctx, opt.Backend, ff.text, ff.lang, opt.Target, ff.rej)
			res.Calls += seg.Calls
			if err != nil {
				return fmt.Errorf("metadata: %s: %s: end round %d: backend %s (%s->%s): %w", opt.File, ff.f.AsWritten(ff.el, opt.Namespaces), round+1, opt.Backend.Name(), ff.lang, opt.Target, err)
			}
			if seg.Status == backend.Untranslated {
				if seg.Rejection != nil {
					ff.rej = seg.Rejection
				}
				still = append(still, ff)
				continue
			}
			if err := t.write(ff.f, ff.el, ff.text, ff.lang, seg); err != nil {
				return err
			}
			last := len(res.Log) - 1
			res.Log[ff.row] = res.Log[last]
			res.Log = res.Log[:last]
			res.Untranslated--
			res.Rerun++
		}
		t.failed = still
	}
	for _, ff := range t.failed {
		res.Warnings = append(res.Warnings, fmt.Sprintf("%s: %s left untranslated: %v", opt.File, ff.f.AsWritten(ff.el, opt.Namespaces), ff.rej))
	}
	return nil
}
