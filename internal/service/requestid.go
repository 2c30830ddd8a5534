package service

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"log/slog"
	"net/http"
)

// HeaderRequestID is the header that names a request: taken from the
// client when it sends a usable one (RequestID), else made by the service,
// and sent back on every answer, so that a client's report, the access
// log line and the request's other log lines can be tied together.
const HeaderRequestID = "X-Request-ID"

// maxRequestID bounds a request id taken from a client.
const maxRequestID = 64

type requestIDKey struct{}

// RequestID is the id of the request whose context is ctx ("" outside
// one).
func RequestID(ctx context.Context) string {
	id, _ := ctx.Value(requestIDKey{}).(string)
	return id
}

// requestID is the id of r: its X-Request-ID when that is 1 to 64 letters,
// digits, '-', '_', '.' or ':' (a proxy's or a client's; anything else,
// which would go into log lines, is replaced), else 16 random hex digits.
func requestID(r *http.Request) string {
	if id := r.Header.Get(HeaderRequestID); len(id) > 0 && len(id) <= maxRequestID && idChars(id) {
		return id
	}
	var b [8]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

func idChars(s string) bool {
	for _, c := range []byte(s) {
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9', c == '-', c == '_', c == '.', c == ':':
		default:
			return false
		}
	}
	return true
}

// requestIDHandler adds the request id of a record's context to the
// record (request_id), so that every line a request logs with its
// context, not only its access line, carries it.
type requestIDHandler struct{ slog.Handler }

func (h requestIDHandler) Handle(ctx context.Context, r slog.Record) error {
	if id := RequestID(ctx); id != "" {
		r = r.Clone()
		r.AddAttrs(slog.String("request_id", id))
	}
	return h.Handler.Handle(ctx, r)
}

func (h requestIDHandler) WithAttrs(attrs []slog.Attr) slog.Handler {
	return requestIDHandler{h.Handler.WithAttrs(attrs)}
}

func (h requestIDHandler) WithGroup(name string) slog.Handler {
	return requestIDHandler{h.Handler.WithGroup(name)}
}
