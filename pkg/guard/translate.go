package guard

import (
	"context"

	"archivekit/pkg/backend"
)

// Segment is the outcome of translating one segment under the guard.
type Segment struct {
	// Text is the accepted translation; empty when Status is Untranslated.
	Text string
	// Status is backend.OK, backend.Retried or backend.Untranslated.
	Status backend.Status
	// Rejection is the last rejection (nil when the first reply passed).
	Rejection *Rejection
}

// Translate translates one segment with be. A reply rejected by the
// backend's guard (a *Rejection error) is retried once, through
// backend.Retrier when be implements it (LLM backends: without the
// glossary), otherwise with Translate; when the retry is rejected too, the
// segment is Untranslated and Text is empty. Any other error is returned.
func Translate(ctx context.Context, be backend.Backend, text, src, tgt string) (Segment, error) {
	out, err := be.Translate(ctx, text, src, tgt)
	if err == nil {
		return Segment{Text: out, Status: backend.OK}, nil
	}
	first := AsRejection(err)
	if first == nil || ctx.Err() != nil {
		return Segment{}, err
	}
	if r, ok := be.(backend.Retrier); ok {
		out, err = r.Retry(ctx, text, src, tgt)
	} else {
		out, err = be.Translate(ctx, text, src, tgt)
	}
	if err == nil {
		return Segment{Text: out, Status: backend.Retried, Rejection: first}, nil
	}
	if second := AsRejection(err); second != nil {
		return Segment{Status: backend.Untranslated, Rejection: second}, nil
	}
	return Segment{}, err
}
