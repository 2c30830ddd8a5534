package guard

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"

	"archivekit/internal/translate/backend"
)

// Segment is the outcome of translating one segment under the guard.
type Segment struct {
	// Text is the accepted translation; empty when Status is Untranslated.
	Text string
	// Status is backend.OK, backend.Retried or backend.Untranslated.
	Status backend.Status
	// Rejection is the last rejection (nil when the first reply passed).
	Rejection *Rejection
	// Calls is the number of backend calls made.
	Calls int
}

// Translate translates one segment with be. A reply rejected by the
// backend's guard (a *Rejection error) is retried once (see Retry). Any
// other error is returned.
func Translate(ctx context.Context, be backend.Backend, text, src, tgt string) (Segment, error) {
	out, err := be.Translate(ctx, text, src, tgt)
	if err == nil {
		return Segment{Text: out, Status: backend.OK, Calls: 1}, nil
	}
	first := AsRejection(err)
	if first == nil {
		return Segment{Calls: 1}, err
	}
	if cerr := ctx.Err(); cerr != nil {
		// No retry once the context has ended, and its end is why: a
		// page stopped by another page's failure reports that failure,
		// not this rejection.
		return Segment{Calls: 1}, fmt.Errorf("%w (its reply was rejected: %v)", cerr, err)
	}
	seg, err := Retry(ctx, be, text, src, tgt, first)
	seg.Calls++ // the first call
	return seg, err
}

// Retry makes the one further attempt at a segment whose reply was
// rejected (first), through backend.Retrier when be implements it (LLM
// backends: without the glossary), otherwise with Translate. When the
// retry is rejected too the segment is Untranslated, with an empty Text
// that must not be written. Any other error is returned.
//
// A backend.Deterministic backend would give the same reply again: the
// segment is Untranslated at once, with no call.
func Retry(ctx context.Context, be backend.Backend, text, src, tgt string, first *Rejection) (Segment, error) {
	if d, ok := be.(backend.Deterministic); ok && d.Deterministic() {
		return Segment{Status: backend.Untranslated, Rejection: first}, nil
	}
	var out string
	var err error
	if r, ok := be.(backend.Retrier); ok {
		out, err = r.Retry(ctx, text, src, tgt)
	} else {
		out, err = be.Translate(ctx, text, src, tgt)
	}
	if err == nil {
		return Segment{Text: out, Status: backend.Retried, Rejection: first, Calls: 1}, nil
	}
	if second := AsRejection(err); second != nil {
		return Segment{Status: backend.Untranslated, Rejection: second, Calls: 1}, nil
	}
	return Segment{Calls: 1}, err
}

// DefaultRounds is the number of end-of-document rounds (RoundsFromEnv):
// a segment rejected twice on its way is tried once more after the rest of
// its document, before it is left untranslated.
const DefaultRounds = 1

// RoundsEnv names the setting of the end-of-document rounds.
const RoundsEnv = "TRANSLATE_RETRY_ROUNDS"

// RoundsFromEnv reads TRANSLATE_RETRY_ROUNDS (getenv nil: the process
// environment): how many times the segments the guard rejected are tried
// again at the end of their document before they are marked untranslated;
// 0 turns the end rounds off, unset means DefaultRounds.
func RoundsFromEnv(getenv func(string) string) (int, error) {
	if getenv == nil {
		getenv = os.Getenv
	}
	s := strings.TrimSpace(getenv(RoundsEnv))
	if s == "" {
		return DefaultRounds, nil
	}
	return ParseRounds(RoundsEnv, s)
}

// ParseRounds reads a number of end-of-document rounds given as value
// (surrounding space ignored) by the setting named from: a whole number
// from 0 to MaxRounds.
func ParseRounds(from, value string) (int, error) {
	n, err := strconv.Atoi(strings.TrimSpace(value))
	if err != nil || n < 0 || n > MaxRounds {
		return 0, fmt.Errorf("%s=%q: want a whole number from 0 to %d", from, value, MaxRounds)
	}
	return n, nil
}

// MaxRounds bounds TRANSLATE_RETRY_ROUNDS: each round is one more backend
// call per rejected segment.
const MaxRounds = 10
