// Package backend defines the interface every translation backend implements
// (mtapi, chat_compatible, ct2), so that the ALTO and metadata pipelines do
// not depend on any one of them.
package backend

import (
	"context"
	"errors"
	"slices"
	"strings"
	"time"
)

// Backend translates plain text from one language to another.
type Backend interface {
	// Name is the backend's configuration name: "mtapi", "chat_compatible" or "ct2".
	Name() string
	// Supports reports whether the pair src->tgt (ISO 639-1 codes) is offered;
	// an unsupported pair is an error naming the pair, never a silent re-route.
	Supports(ctx context.Context, src, tgt string) error
	// Translate translates text from src to tgt. Line breaks in text are
	// significant and must be preserved by implementations that can.
	Translate(ctx context.Context, text, src, tgt string) (string, error)
	// Close releases what the backend holds (a loaded native model, idle
	// connections). It waits for calls in flight; later calls fail. Every
	// backend opened must be closed by whoever opened it.
	Close() error
}

// Glossary is an optional capability: backends that accept a list of
// terms to use verbatim (LLM families) implement it. Terms are source=target
// pairs, longest source first.
type Glossary interface {
	TranslateWithGlossary(ctx context.Context, text, src, tgt string, terms [][2]string) (string, error)
}

// Retrier is an optional capability: backends whose second attempt after a
// rejected reply should differ from the first implement it (the LLM
// backends retry without the glossary). Others are retried with Translate.
type Retrier interface {
	Retry(ctx context.Context, text, src, tgt string) (string, error)
}

// Status is what happened to one segment; it fills the status column of
// the translation log.
type Status string

// Segment statuses.
const (
	// OK: translated and accepted on the first reply.
	OK Status = "ok"
	// Retried: the first reply was rejected by the guard, the retry passed.
	Retried Status = "retried"
	// Untranslated: both replies were rejected; the text is left as it was
	// and nothing is written as its translation.
	Untranslated Status = "untranslated"
	// UnsupportedLang: the detected source language is not offered by the
	// backend; the text is left as it was.
	UnsupportedLang Status = "unsupported_lang"
	// Vocabulary: a short field filled from the vocabulary, no backend call.
	Vocabulary Status = "vocabulary"
	// MixedContent: a metadata field whose text is interleaved with child
	// elements, comments or processing instructions; it is left as it was,
	// since one translation cannot be split between the pieces.
	MixedContent Status = "mixed_content"
	// InTarget: the unit is already in the target language (detected, or
	// declared by its element or document); it is left as it is and not
	// sent.
	InTarget Status = "in_target"
)

// The unit statuses: the per-unit log's status vocabulary shared with the
// original translator (its unit_status column), onto which the Status
// values map (UnitStatus).
const (
	UnitOK              = "ok"
	UnitRerun           = "rerun"
	UnitApproxAlignment = "approx_alignment"
	UnitUntranslated    = "untranslated"
	UnitUnsupportedLang = "unsupported_lang"
	// UnitInTarget is beyond the original's vocabulary, which logged no
	// row for such a unit.
	UnitInTarget = "in_target"
)

// UnitStatus maps s onto the unit status vocabulary: ok and vocabulary
// (written, from the backend or the vocabulary) are ok, or
// approx_alignment when the unit's words were placed on its lines by
// proportion rather than aligned (approx); retried (the guard's rerun
// passed) is rerun; untranslated and mixed_content (left as they were)
// are untranslated; unsupported_lang and in_target stay. "" is ok.
func UnitStatus(s Status, approx bool) string {
	switch s {
	case Retried:
		return UnitRerun
	case Untranslated, MixedContent:
		return UnitUntranslated
	case UnsupportedLang:
		return UnitUnsupportedLang
	case InTarget:
		return UnitInTarget
	}
	if approx {
		return UnitApproxAlignment
	}
	return UnitOK
}

var languageNames = map[string]string{
	"cs": "Czech", "en": "English", "fr": "French", "de": "German", "ru": "Russian", "pl": "Polish",
	"uk": "Ukrainian", "sk": "Slovak", "bg": "Bulgarian", "hr": "Croatian", "sl": "Slovenian", "lv": "Latvian",
	"lt": "Lithuanian", "et": "Estonian", "hu": "Hungarian", "ro": "Romanian", "es": "Spanish", "it": "Italian",
	"nl": "Dutch", "hi": "Hindi",
}

// LanguageName is the English name of one of the twenty ISO 639-1 codes of
// spec 10.2 (for prompts), or the code itself.
func LanguageName(code string) string {
	if n, ok := languageNames[code]; ok {
		return n
	}
	return code
}

// Filler is an optional capability: a segment it can answer without a
// translation call (a short field that is a vocabulary entry) is filled,
// with status Vocabulary. The translator's pipelines ask it before
// sending a segment.
type Filler interface {
	Fill(ctx context.Context, text, src, tgt string) (string, bool)
}

// Preparer is an optional capability: the translator's pipelines announce
// the segments of a page (ALTO: its blocks, and its lines for pass 2) or of
// a document (metadata: its fields) before they go through Fill and
// Translate, one by one or in newline-joined batches, so that work done
// per segment (lemmatising it for the vocabulary) is done for all of them
// at once. Preparing is only a speed-up: what it cannot do is done, or
// fails, where it was done before.
type Preparer interface {
	Prepare(ctx context.Context, segments []string, src, tgt string)
}

// Scorer is an optional capability of backends whose model scores its
// hypotheses (ct2: the cumulative log-probability): Score returns the
// score of the latest translation of segment, a line of a text given to
// Translate (or the whole text when it was translated in one piece).
type Scorer interface {
	Score(segment string) (float64, bool)
}

// Deterministic is an optional capability: a backend whose Deterministic
// reports true gives the same reply to the same request (a local model
// decoding greedily), so a rejected reply is not retried.
type Deterministic interface {
	Deterministic() bool
}

// Family is an optional capability of backends with a model family (ct2:
// llm, nmt1, nmt2, nmt3); the family picks the model's licence component.
type Family interface {
	Family() string
}

// Spaced is an optional capability of backends whose transport spaces its
// requests (mtapi, MTAPI_MIN_INTERVAL_S): MinInterval is the configured
// spacing, 0 when requests are not spaced. The translator bounds the pages
// in flight for a spaced backend, since more would only queue for their
// slot.
type Spaced interface {
	MinInterval() time.Duration
}

// Protection says how a backend takes vocabulary terms as placeholders
// (see Placeholders).
type Protection struct {
	// Lemmas: single-word terms are matched by lemma too, through the
	// lemmatiser (mtapi); otherwise surface forms only.
	Lemmas bool
	// Fallback: a reply that lost a placeholder is translated again
	// without protection (a model that may not copy them: ct2 nmt
	// families).
	Fallback bool
}

// Placeholders is an optional capability: a backend that copies
// placeholder tokens through a translation has the vocabulary's terms
// replaced by placeholders before the call and restored after it, instead
// of a glossary. ok false means the backend takes no placeholders (for
// instance a ct2 backend of the llm family, which takes a glossary).
type Placeholders interface {
	Placeholders() (p Protection, ok bool)
}

// ErrFailed is what a backend's error is (errors.Is) when the service
// answered, but with a refusal or an answer that is no translation (HTTP
// 401, a reply cut by its token limit, an answer that is not the protocol's
// JSON): the backend failed, not the document or this program. A transport
// failure after the retries is a *transport.Error instead.
var ErrFailed = errors.New("the translation backend failed")

// Failed marks err as ErrFailed, keeping its message; nil stays nil.
func Failed(err error) error {
	if err == nil {
		return nil
	}
	return failed{err}
}

type failed struct{ error }

func (f failed) Unwrap() []error { return []error{f.error, ErrFailed} }

// UnknownVariables lists the variables of environ (os.Environ's
// "NAME=value" form) that start with prefix and are not among known: a
// misspelt one (CT2_MAXLENGTH, MTAPI_MAXRETRIES) was ignored without a
// word.
func UnknownVariables(prefix string, known, environ []string) []string {
	var out []string
	for _, kv := range environ {
		name, _, _ := strings.Cut(kv, "=")
		if strings.HasPrefix(name, prefix) && !slices.Contains(known, name) {
			out = append(out, name)
		}
	}
	return out
}
