// Package batch sends a document's segments to a translation backend in
// batches: items joined by newlines, one call per batch (capped in
// characters), with the degeneracy guard's retry of rejected items and a
// fall-back to one call per item when a batch fails or comes back with
// another number of lines. The ALTO, PAGE and hOCR pipelines share it.
package batch

import (
	"context"
	"fmt"
	"strings"
	"unicode/utf8"

	"archivekit/internal/translate/backend"
	"archivekit/internal/translate/guard"
)

// Counts counts one document's backend traffic.
type Counts struct {
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
	// GuardRejections counts batch calls whose reply the degeneracy guard
	// rejected (in whole or for some lines).
	GuardRejections int
	// Rejected is why the guard rejected the first item left untranslated
	// (its last reply: guard.Rejection's message), so a warning can say
	// why; "" when none was.
	Rejected string
}

// Add adds o's counts to c (Rejected: c's, else o's).
func (c *Counts) Add(o Counts) {
	c.Calls += o.Calls
	c.CleanBatches += o.CleanBatches
	c.LineCountMismatches += o.LineCountMismatches
	c.TransportErrors += o.TransportErrors
	c.GuardRejections += o.GuardRejections
	if c.Rejected == "" {
		c.Rejected = o.Rejected
	}
}

// untranslated notes why an item is left untranslated (the first one's
// reason is kept).
func (c *Counts) untranslated(r *guard.Rejection) {
	if c.Rejected == "" && r != nil {
		c.Rejected = r.Error()
	}
}

// Batcher sends items to the backend joined by newlines, one call per
// batch, and falls back to one call per item when the batch fails or the
// number of lines does not survive the round trip.
type Batcher struct {
	// Backend translates; Target is the target language.
	Backend backend.Backend
	Target  string
	// MaxChars caps a batch's joined length in runes; 0 means no limit.
	MaxChars int
	// Counts receives the traffic counts (required).
	Counts *Counts
}

// Translate returns one translation and one status per item, in order.
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
func (b *Batcher) Translate(ctx context.Context, items []string, src string, retry bool) ([]string, []backend.Status, error) {
	out := make([]string, len(items))
	status := make([]backend.Status, len(items))
	var send []string
	var at []int
	f, canFill := b.Backend.(backend.Filler)
	for i, it := range items {
		if canFill {
			if t, ok := f.Fill(ctx, it, src, b.Target); ok {
				out[i], status[i] = t, backend.Vocabulary
				continue
			}
		}
		send = append(send, it)
		at = append(at, i)
	}
	k := 0
	for _, group := range groupByChars(send, b.MaxChars) {
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

func (b *Batcher) translateGroup(ctx context.Context, items []string, src string, retry bool) ([]string, []backend.Status, error) {
	if len(items) == 0 {
		return nil, nil, nil
	}
	out := make([]string, len(items))
	status := make([]backend.Status, len(items))
	b.Counts.Calls++
	ans, err := b.Backend.Translate(ctx, strings.Join(items, "\n"), src, b.Target)
	rej := guard.AsRejection(err)
	var redo []int // items translated again one by one
	switch {
	case err != nil && ctx.Err() != nil:
		if rej != nil {
			// Stopped by another page's failure, which is why: that
			// failure is reported, not this rejection (guard.Translate).
			return nil, nil, fmt.Errorf("%w (its reply was rejected: %v)", ctx.Err(), err)
		}
		return nil, nil, err
	case rej != nil:
		b.Counts.GuardRejections++
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
					b.Counts.untranslated(rej)
					continue
				}
				seg, err := guard.Retry(ctx, b.Backend, items[i], src, b.Target, rej)
				b.Counts.Calls += seg.Calls
				if err != nil {
					return nil, nil, fmt.Errorf("backend %s (%s->%s): %w", b.Backend.Name(), src, b.Target, err)
				}
				if seg.Status == backend.Untranslated {
					b.Counts.untranslated(seg.Rejection)
				}
				out[i], status[i] = seg.Text, seg.Status
			}
			return out, status, nil
		}
		redo = allIndices(len(items))
	case err != nil:
		b.Counts.TransportErrors++
		redo = allIndices(len(items))
	default:
		if len(items) == 1 {
			b.Counts.CleanBatches++
			return []string{ans}, []backend.Status{backend.OK}, nil
		}
		if parts := splitAnswer(ans, len(items)); len(parts) == len(items) {
			b.Counts.CleanBatches++
			for i := range status {
				status[i] = backend.OK
			}
			return parts, status, nil
		}
		b.Counts.LineCountMismatches++
		redo = allIndices(len(items))
	}
	for _, i := range redo {
		var seg guard.Segment
		var err error
		if retry {
			seg, err = guard.Translate(ctx, b.Backend, items[i], src, b.Target)
		} else {
			seg.Calls = 1
			if seg.Text, err = b.Backend.Translate(ctx, items[i], src, b.Target); err == nil {
				seg.Status = backend.OK
			} else if r := guard.AsRejection(err); r != nil {
				seg.Status, seg.Rejection, err = backend.Untranslated, r, nil
			}
		}
		b.Counts.Calls += seg.Calls
		if err != nil {
			return nil, nil, fmt.Errorf("backend %s (%s->%s): %w", b.Backend.Name(), src, b.Target, err)
		}
		if seg.Status == backend.Untranslated {
			b.Counts.untranslated(seg.Rejection)
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
