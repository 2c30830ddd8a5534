package batch

import (
	"context"
	"errors"
	"fmt"

	"archivekit/internal/translate/backend"
	"archivekit/internal/translate/guard"
	"archivekit/internal/translate/langid"
)

// Segment is one line-sized text to translate, with its page and source
// language; Run fills Out and Status.
type Segment struct {
	// Page groups segments: each page's segments of one language go out
	// together.
	Page int
	// Lang is the source language; Text the text (no newlines).
	Lang, Text string
	// Out is the translation ("" unless Status is OK, Retried or
	// Vocabulary); Status what happened.
	Out    string
	Status backend.Status
}

// Run translates segs into b.Target: per page and source language, in
// document order, in batches; each such group is announced first to a
// backend that prepares (backend.Preparer: its lemmas for the vocabulary
// in one request). Each language's pair is checked once with
// Supports: an unsupported pair is an error when detected is false (the
// source was given), otherwise its segments get backend.UnsupportedLang and
// a warning names the language. The tag of a script no supported language
// is written in ("und-Arab", langid.ForeignTag) is not asked about: its
// segments get backend.UnsupportedLang and a warning names the script,
// whether the source was detected or given. It returns the warnings.
func (b *Batcher) Run(ctx context.Context, segs []*Segment, detected bool) ([]string, error) {
	type key struct {
		page int
		lang string
	}
	var order []key
	groups := map[key][]*Segment{}
	for _, s := range segs {
		k := key{s.Page, s.Lang}
		if _, ok := groups[k]; !ok {
			order = append(order, k)
		}
		groups[k] = append(groups[k], s)
	}
	supported := map[string]error{}
	var warnings []string
	for _, k := range order {
		err, seen := supported[k.lang]
		reason, foreign := langid.ForeignTag(k.lang)
		switch {
		case !seen && foreign:
			err = errors.New(reason)
			supported[k.lang] = err
			warnings = append(warnings, fmt.Sprintf("segments in %q left untouched: %s", k.lang, reason))
		case !seen:
			err = b.Backend.Supports(ctx, k.lang, b.Target)
			supported[k.lang] = err
			if err != nil && detected {
				warnings = append(warnings, fmt.Sprintf("segments detected as %q left untouched: %v", k.lang, err))
			}
		}
		group := groups[k]
		if err != nil {
			if !detected && !foreign {
				return warnings, err
			}
			for _, s := range group {
				s.Status = backend.UnsupportedLang
			}
			continue
		}
		items := make([]string, len(group))
		for i, s := range group {
			items[i] = s.Text
		}
		if p, ok := b.Backend.(backend.Preparer); ok {
			p.Prepare(ctx, items, k.lang, b.Target)
		}
		out, status, err := b.Translate(ctx, items, k.lang, true)
		if err != nil {
			return warnings, err
		}
		for i, s := range group {
			s.Out, s.Status = out[i], status[i]
		}
	}
	return warnings, nil
}

// Written reports whether s has a translation to write: its status is
// OK, Retried or Vocabulary.
func (s *Segment) Written() bool {
	switch s.Status {
	case backend.OK, backend.Retried, backend.Vocabulary:
		return true
	}
	return false
}

// Outcome counts what Run did to its segments.
type Outcome struct {
	// Sent counts the segments sent to the backend (all but the
	// unsupported ones); Translated those with a translation to write,
	// Untranslated those the guard rejected twice, Unsupported those of a
	// language the backend does not offer.
	Sent, Translated, Untranslated, Unsupported int
	// Languages maps each source language to its translated segments.
	Languages map[string]int
}

// Tally counts the outcome of segs after Run.
func Tally(segs []*Segment) Outcome {
	o := Outcome{Languages: map[string]int{}}
	for _, s := range segs {
		switch {
		case s.Status == backend.UnsupportedLang:
			o.Unsupported++
			continue
		case s.Written():
			o.Translated++
			o.Languages[s.Lang]++
		case s.Status == backend.Untranslated:
			o.Untranslated++
		}
		o.Sent++
	}
	return o
}

// EndRounds tries the segments of segs the guard left backend.Untranslated
// again, after the whole document, for rounds rounds: one guard.Retry per
// segment a round (a backend.Deterministic backend gets no call: its reply
// would not change). A segment accepted in a round gets its translation
// with status backend.Retried (unit status rerun). It returns how many
// were accepted.
func (b *Batcher) EndRounds(ctx context.Context, segs []*Segment, rounds int) (int, error) {
	rerun := 0
	for round := 0; round < rounds; round++ {
		left := 0
		for _, s := range segs {
			if s.Status != backend.Untranslated {
				continue
			}
			seg, err := guard.Retry(ctx, b.Backend, s.Text, s.Lang, b.Target, nil)
			b.Counts.Calls += seg.Calls
			if err != nil {
				return rerun, fmt.Errorf("end round %d: %w", round+1, err)
			}
			if seg.Status == backend.Untranslated {
				left++
				continue
			}
			s.Out, s.Status = seg.Text, backend.Retried
			rerun++
		}
		if left == 0 {
			break
		}
	}
	return rerun, nil
}
