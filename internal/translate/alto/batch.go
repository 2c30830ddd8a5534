package alto

import (
	"context"
	"fmt"
	"strings"
	"unicode/utf8"

	"archivekit/internal/translate/backend"
	"archivekit/internal/translate/guard"
)

// Stats counts what happened to one document's backend traffic; Summary
// renders the WARNING line that ends the document's log.
type Stats struct {
	// Pages, Blocks and Lines count the document's pages and the blocks and
	// lines sent for translation.
	Pages, Blocks, Lines int
	// Calls is the number of Backend.Translate calls made.
	Calls int
	// CleanBatches counts batches whose item count survived the round trip.
	CleanBatches int
	// LineCountMismatches counts batches that came back with a different
	// number of lines and were redone one call per item.
	LineCountMismatches int
	// TransportErrors counts batch calls that failed and were redone one call
	// per item.
	TransportErrors int
	// Units counts the blocks with text; Translated those written with a
	// translation. The others are AlreadyDone (append mode: the block or
	// its follower already carries the target language), InTarget (detected
	// or declared in the target language) or Unsupported (a detected
	// language the backend does not offer).
	Units, Translated, AlreadyDone, InTarget, Unsupported int
	// GuardRejections counts batch calls whose reply the degeneracy guard
	// rejected (in whole or for some lines).
	GuardRejections int
	// Untranslated counts blocks whose replies the guard rejected twice;
	// they are left as they were.
	Untranslated int
	// OverAlignLimit counts lines over the alignment limits (MaxAlignWords,
	// MaxAlignRunes), split proportionally instead of aligned.
	OverAlignLimit int
}

func (s *Stats) add(o Stats) {
	s.Pages += o.Pages
	s.Blocks += o.Blocks
	s.Lines += o.Lines
	s.Calls += o.Calls
	s.CleanBatches += o.CleanBatches
	s.LineCountMismatches += o.LineCountMismatches
	s.TransportErrors += o.TransportErrors
	s.Units += o.Units
	s.Translated += o.Translated
	s.AlreadyDone += o.AlreadyDone
	s.InTarget += o.InTarget
	s.Unsupported += o.Unsupported
	s.GuardRejections += o.GuardRejections
	s.Untranslated += o.Untranslated
	s.OverAlignLimit += o.OverAlignLimit
}

// Summary is the WARNING summary line for the document's log.
func (s Stats) Summary(file string) string {
	return fmt.Sprintf("WARNING %s: batch summary: %d clean batches, %d line-count mismatches, %d transport errors, %d guard rejections (%d backend calls, %d pages, %d blocks, %d lines)",
		file, s.CleanBatches, s.LineCountMismatches, s.TransportErrors, s.GuardRejections, s.Calls, s.Pages, s.Blocks, s.Lines)
}

// batcher sends items to the backend joined by newlines, one call per batch,
// and falls back to one call per item when the batch fails or the number of
// lines does not survive the round trip.
type batcher struct {
	be       backend.Backend
	tgt      string
	maxChars int // runes per batch; 0 means no limit
	stats    *Stats
}

// translate returns one translation and one status per item, in order.
// Items must not contain newlines (callers normalise whitespace first). An
// item whose replies the guard rejected twice is backend.Untranslated with
// an empty translation, which must not be written.
//
// Items the backend can fill without a call (backend.Filler: short
// vocabulary entries) are filled with status backend.Vocabulary; the others
// go out in batches.
//
// retry false is for pass-2 anchors, which are never written: a rejected
// anchor is dropped (empty, Untranslated) instead of being retried.
func (b *batcher) translate(ctx context.Context, items []string, src string, retry bool) ([]string, []backend.Status, error) {
	out := make([]string, len(items))
	status := make([]backend.Status, len(items))
	var send []string
	var at []int
	f, canFill := b.be.(backend.Filler)
	for i, it := range items {
		if canFill {
			if t, ok := f.Fill(ctx, it, src, b.tgt); ok {
				out[i], status[i] = t, backend.Vocabulary
				continue
			}
		}
		send = append(send, it)
		at = append(at, i)
	}
	k := 0
	for _, group := range groupByChars(send, b.maxChars) {
		res, st, err := b.translateGroup(ctx, group, src, retry)
		if err != nil {
			return nil, nil, err
		}
		for j := range res {
			out[at[k]], status[at[k]] = res[j], st[j]
			k++
		}
	}
	return out, status, nil
}

func (b *batcher) translateGroup(ctx context.Context, items []string, src string, retry bool) ([]string, []backend.Status, error) {
	if len(items) == 0 {
		return nil, nil, nil
	}
	out := make([]string, len(items))
	status := make([]backend.Status, len(items))
	b.stats.Calls++
	ans, err := b.be.Translate(ctx, strings.Join(items, "\n"), src, b.tgt)
	rej := guard.AsRejection(err)
	var redo []int // items translated again one by one
	switch {
	case err != nil && ctx.Err() != nil:
		return nil, nil, err
	case rej != nil:
		b.stats.GuardRejections++
		parts := splitAnswer(rej.Output, len(items))
		if len(items) == 1 || (rej.Lines != nil && len(parts) == len(items)) {
			// The rejected items get their one retry; the accepted lines
			// of the batch stand.
			bad := map[int]bool{}
			for _, i := range rej.Lines {
				bad[i] = true
			}
			for i := range items {
				if len(items) > 1 && !bad[i] {
					out[i], status[i] = parts[i], backend.OK
					continue
				}
				if !retry {
					status[i] = backend.Untranslated
					continue
				}
				seg, err := guard.Retry(ctx, b.be, items[i], src, b.tgt, rej)
				b.stats.Calls += seg.Calls
				if err != nil {
					return nil, nil, fmt.Errorf("backend %s (%s->%s): %w", b.be.Name(), src, b.tgt, err)
				}
				out[i], status[i] = seg.Text, seg.Status
			}
			return out, status, nil
		}
		redo = allIndices(len(items))
	case err != nil:
		b.stats.TransportErrors++
		redo = allIndices(len(items))
	default:
		if len(items) == 1 {
			b.stats.CleanBatches++
			return []string{ans}, []backend.Status{backend.OK}, nil
		}
		if parts := splitAnswer(ans, len(items)); len(parts) == len(items) {
			b.stats.CleanBatches++
			for i := range status {
				status[i] = backend.OK
			}
			return parts, status, nil
		}
		b.stats.LineCountMismatches++
		redo = allIndices(len(items))
	}
	for _, i := range redo {
		var seg guard.Segment
		var err error
		if retry {
			seg, err = guard.Translate(ctx, b.be, items[i], src, b.tgt)
		} else {
			seg.Calls = 1
			if seg.Text, err = b.be.Translate(ctx, items[i], src, b.tgt); err == nil {
				seg.Status = backend.OK
			} else if guard.AsRejection(err) != nil {
				seg.Status, err = backend.Untranslated, nil
			}
		}
		b.stats.Calls += seg.Calls
		if err != nil {
			return nil, nil, fmt.Errorf("backend %s (%s->%s): %w", b.be.Name(), src, b.tgt, err)
		}
		out[i], status[i] = seg.Text, seg.Status
	}
	return out, status, nil
}

func allIndices(n int) []int {
	idx := make([]int, n)
	for i := range idx {
		idx[i] = i
	}
	return idx
}

// splitAnswer splits a batch answer of want items into lines, tolerating
// CRLF and extra trailing empty lines (an empty last item is kept).
func splitAnswer(s string, want int) []string {
	parts := strings.Split(strings.ReplaceAll(s, "\r\n", "\n"), "\n")
	for len(parts) > want && parts[len(parts)-1] == "" {
		parts = parts[:len(parts)-1]
	}
	return parts
}

// groupByChars cuts items into consecutive groups whose newline-joined length
// is at most limit characters (runes); an item longer than the limit goes
// alone. limit <= 0 gives one group.
func groupByChars(items []string, limit int) [][]string {
	if limit <= 0 {
		return [][]string{items}
	}
	var groups [][]string
	var cur []string
	size := 0
	for _, it := range items {
		n := utf8.RuneCountInString(it)
		if len(cur) > 0 && size+1+n > limit {
			groups = append(groups, cur)
			cur, size = nil, 0
		}
		if len(cur) > 0 {
			size++
		}
		cur = append(cur, it)
		size += n
	}
	if len(cur) > 0 {
		groups = append(groups, cur)
	}
	return groups
}
