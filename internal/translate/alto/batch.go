package alto

import (
	"fmt"

	"archivekit/internal/translate/batch"
)

// Stats counts what happened to one document's backend traffic; Summary
// renders the WARNING line that ends the document's log.
type Stats struct {
	// Pages, Blocks and Lines count the document's pages and the blocks and
	// lines sent for translation.
	Pages, Blocks, Lines int
	// Counts are the backend traffic counts (calls, clean batches,
	// line-count mismatches, transport errors, guard rejections).
	batch.Counts
	// Units counts the blocks with text; Translated those written with a
	// translation. The others are AlreadyDone (append mode: the block or
	// its follower already carries the target language), InTarget (detected
	// or declared in the target language) or Unsupported (a detected
	// language the backend does not offer).
	Units, Translated, AlreadyDone, InTarget, Unsupported int
	// Untranslated counts blocks whose replies the guard rejected twice;
	// they are left as they were.
	Untranslated int
	// Rerun counts blocks the guard had rejected that an end-of-document
	// round translated (Options.RetryRounds; part of Translated).
	Rerun int
	// OverAlignLimit counts lines over the alignment limits (MaxAlignWords,
	// MaxAlignRunes), split proportionally instead of aligned.
	OverAlignLimit int
	// LinesEmptied counts lines of translated blocks that got no word of
	// their block's translation (it had fewer words than the block has
	// lines): their text is emptied, their log rows say approx_alignment.
	LinesEmptied int
	// LinesJoined counts lines that held only the end of a word hyphenated
	// at the end of the block (or page) before, marked so in the ALTO: the
	// whole word is written there, and these lines are left empty, with no
	// log row of their own.
	LinesJoined int
}

func (s *Stats) add(o Stats) {
	s.Pages += o.Pages
	s.Blocks += o.Blocks
	s.Lines += o.Lines
	s.Counts.Add(o.Counts)
	s.Units += o.Units
	s.Translated += o.Translated
	s.AlreadyDone += o.AlreadyDone
	s.InTarget += o.InTarget
	s.Unsupported += o.Unsupported
	s.Untranslated += o.Untranslated
	s.Rerun += o.Rerun
	s.OverAlignLimit += o.OverAlignLimit
	s.LinesEmptied += o.LinesEmptied
	s.LinesJoined += o.LinesJoined
}

// Summary is the summary line that ends the document's log (the
// specification's "WARNING summary"; its level, warning or not, is the
// caller's: translator.Stats.NeedsAttention).
func (s Stats) Summary(file string) string {
	return fmt.Sprintf("%s: batch summary: %d clean batches, %d line-count mismatches, %d transport errors, %d guard rejections (%d backend calls, %d pages, %d blocks, %d lines)",
		file, s.CleanBatches, s.LineCountMismatches, s.TransportErrors, s.GuardRejections, s.Calls, s.Pages, s.Blocks, s.Lines)
}
