package service

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"regexp"
	"strings"
	"syscall"
	"unicode/utf8"
)

// ErrorBody is the body of every error the services raise themselves:
// {"status": 413, "reason": "too_large", "detail": "a sentence a person
// understands"}. Status repeats the HTTP status, Reason is one of the
// closed list of Reasons, Detail names the file or field and the problem.
type ErrorBody struct {
	Status int    `json:"status"`
	Reason Reason `json:"reason"`
	Detail string `json:"detail"`
}

// ValidationError is one entry of a validation-error body, in the shape
// FastAPI uses: loc is the location of the offending input (for example
// ["body", "file"] or ["query", "topn"]), msg a readable message and type a
// machine-readable kind such as "missing" or "int_parsing".
type ValidationError struct {
	Loc  []any  `json:"loc"`
	Msg  string `json:"msg"`
	Type string `json:"type"`
}

// ValidationBody is the body of a request rejected before its handler ran:
// {"status": 422, "reason": "bad_field", "detail": [{"loc": [...], "msg":
// "...", "type": "..."}]}. Clients must not assume that detail is a string
// (spec 7).
type ValidationBody struct {
	Status int               `json:"status"`
	Reason Reason            `json:"reason"`
	Detail []ValidationError `json:"detail"`
}

// WriteJSON writes v as JSON with the given status. Headers must not have
// been written yet.
func WriteJSON(w http.ResponseWriter, status int, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		status = http.StatusInternalServerError
		b = []byte(`{"status":500,"reason":"internal","detail":"response could not be encoded"}`)
	}
	b = append(b, '\n')
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("Content-Length", fmt.Sprint(len(b)))
	h.Del("Content-Disposition")
	w.WriteHeader(status)
	_, _ = w.Write(b)
}

// WriteError writes {"status": status, "reason": reason, "detail": detail}
// with the given status; reason is one of Reasons. In a 5xx answer (a
// failure of the service or of a backend behind it), addresses of internal
// services (URLs, IP addresses with or without port, host:port, looked-up
// host names) are replaced by Redact: a client never learns where the
// backends are; the service log keeps the full error. A 4xx detail is
// about the request and is written as given (call Redact where it may
// quote a backend).
func WriteError(w http.ResponseWriter, status int, reason Reason, detail string) {
	if status >= 500 {
		detail = Redact(detail)
	}
	detail = ClipURLs(detail)
	noteReason(w, reason)
	WriteJSON(w, status, ErrorBody{Status: status, Reason: reason, Detail: detail})
}

// What Redact replaces, in order: URLs, the host of a name lookup, IPv6
// and IPv4 addresses, and the host:port of a network operation (as Go's
// net errors write them: "dial tcp HOST:PORT", "->HOST:PORT") or of
// localhost.
var (
	urlRE     = regexp.MustCompile(`(?i)\b(?:https?|wss?)://[^\s"'<>]+`)
	lookupRE  = regexp.MustCompile(`\blookup [^\s:<]+`) // not "<internal address>": Redact twice is Redact once
	ipv6RE    = regexp.MustCompile(`\[[0-9A-Fa-f:.]*:[0-9A-Fa-f:.%A-Za-z]*\](?::\d+)?`)
	ipv4RE    = regexp.MustCompile(`\b(?:\d{1,3}\.){3}\d{1,3}(?::\d+)?\b`)
	netHostRE = regexp.MustCompile(`\b((?:tcp|udp)[46]?) [^\s:\[<]+:\d+|->[^\s:\[<]+:\d+|\blocalhost:\d+`)
)

// namespaceHosts are the hosts of the namespace and schema URIs of the
// formats the services read (METS, MODS, ALTO, PAGE, TEI, XLink, XML
// Schema, IIIF, Dublin Core, OAI-PMH), which Redact keeps.
var namespaceHosts = map[string]bool{
	"www.loc.gov": true, "www.w3.org": true, "iiif.io": true, "schema.primaresearch.org": true,
	"www.tei-c.org": true, "purl.org": true, "www.openarchives.org": true,
}

// Redact hides the addresses of internal services in a message meant for
// a client: URLs become "<internal service>", IP addresses, host:port
// pairs of network errors and looked-up host names "<internal address>".
// So "Post \"http://10.0.0.5:8080/x\": dial tcp 10.0.0.5:8080: connect:
// connection refused" becomes "Post \"<internal service>\": dial tcp
// <internal address>: connect: connection refused".
//
// The URIs of the standards' namespaces and schemas (the hosts of
// namespaceHosts) are kept: they name no service, and an error about a
// document's namespace ("its XML root element is
// {http://www.loc.gov/METS}mets") said nothing once redacted.
func Redact(s string) string {
	s = urlRE.ReplaceAllStringFunc(s, func(u string) string {
		_, rest, _ := strings.Cut(u, "://")
		host, _, _ := strings.Cut(rest, "/")
		if namespaceHosts[strings.ToLower(host)] {
			return u
		}
		return "<internal service>"
	})
	s = lookupRE.ReplaceAllString(s, "lookup <internal address>")
	s = ipv6RE.ReplaceAllString(s, "<internal address>")
	s = ipv4RE.ReplaceAllString(s, "<internal address>")
	return netHostRE.ReplaceAllStringFunc(s, func(m string) string {
		switch {
		case strings.HasPrefix(m, "->"):
			return "-><internal address>"
		case strings.HasPrefix(m, "localhost:"):
			return "<internal address>"
		}
		proto, _, _ := strings.Cut(m, " ")
		return proto + " <internal address>"
	})
}

// WriteValidation writes a 422 validation-error body listing errs, with the
// reason bad_field.
func WriteValidation(w http.ResponseWriter, errs ...ValidationError) {
	if errs == nil {
		errs = []ValidationError{}
	}
	noteReason(w, ReasonBadField) // the access line says why, as for the other errors
	WriteJSON(w, http.StatusUnprocessableEntity, ValidationBody{Status: http.StatusUnprocessableEntity, Reason: ReasonBadField, Detail: errs})
}

// TooLarge reports whether err (from reading a request body) means the body
// went over the upload cap. Handlers that read bodies should answer such an
// error with WriteBodyError.
func TooLarge(err error) bool {
	var mbe *http.MaxBytesError
	return errors.As(err, &mbe)
}

// StorageFull reports whether err says the disk or the quota is full
// (ENOSPC, EDQUOT): the service's condition, not the request's.
func StorageFull(err error) bool {
	return errors.Is(err, syscall.ENOSPC) || errors.Is(err, syscall.EDQUOT)
}

// WriteStorageFull answers 507 storage_full, with Retry-After: the service
// could not store what the request needs (RFC 4918: a condition taken as
// temporary). The detail names no path of the service; err, which does, is
// in the request's log record (at ERROR, as "cause").
func WriteStorageFull(w http.ResponseWriter, err error) {
	noteCause(w, err.Error())
	w.Header().Set("Retry-After", "60")
	WriteError(w, http.StatusInsufficientStorage, ReasonStorageFull, "the service has no room left to store the request (its disk or quota is full): try again later, or tell its operator")
}

// WriteBodyError answers a failed request-body read: 413 with the cap when
// the body went over it, 408 when it arrived too slowly, 503 (with
// Retry-After) when a drain cut it, 507 (with Retry-After) when the disk
// the body is staged on is full, 500 when it could not be staged otherwise
// (the service's temporary folder), otherwise 400 naming the problem (a
// client gone mid-body is logged as cut and counted 499).
func WriteBodyError(w http.ResponseWriter, err error) {
	var mbe *http.MaxBytesError
	switch {
	case errors.As(err, new(*goneError)):
		// Most likely nobody to answer (the 400 below goes nowhere):
		// logged and counted as cut (499).
		if rec := recorderOf(w); rec != nil {
			rec.gone = true
		}
	case errors.As(err, &mbe):
		writeTooLarge(w, mbe.Limit)
		return
	case StorageFull(err):
		// Before, 400 bad_request: a client error, with the staging path.
		WriteStorageFull(w, err)
		return
	case errors.Is(err, ErrBodyDraining):
		w.Header().Set("Connection", "close")
		w.Header().Set("Retry-After", "1")
		WriteError(w, http.StatusServiceUnavailable, ReasonDraining, "the service is shutting down and the request body had not arrived: retry the request shortly (on another replica, if there is one)")
		return
	case errors.Is(err, ErrBodyTimeout):
		w.Header().Set("Connection", "close")
		WriteError(w, http.StatusRequestTimeout, ReasonBodyTimeout, err.Error())
		return
	}
	var se *spoolError
	if errors.As(err, &se) {
		// The service's own folder failed (gone, or its permissions
		// changed since the start): logged with the path, answered
		// without it. Before, 400 bad_request, as if the client's.
		noteCause(w, err.Error())
		WriteError(w, http.StatusInternalServerError, ReasonInternal, "the service could not store the request body in its temporary folder: tell its operator (the service's log says why)")
		return
	}
	WriteError(w, http.StatusBadRequest, ReasonBadRequest, "could not read the request body: "+err.Error())
}

// writeTooLarge answers 413. It does not set "Connection: close" itself:
// net/http closes the connection after an unread oversized body, and does
// so gracefully (FIN, then a pause before the full close) so that the
// client, possibly still sending, can read this answer instead of a reset.
func writeTooLarge(w http.ResponseWriter, limit int64) {
	WriteError(w, http.StatusRequestEntityTooLarge, ReasonTooLarge,
		fmt.Sprintf("request body is larger than the upload limit of %s (MAX_UPLOAD_MB)", formatBytes(limit)))
}

// formatBytes writes a byte count as MB (MiB) when it is a whole number of
// hundredths of one, otherwise as bytes.
func formatBytes(n int64) string {
	const mb = 1 << 20
	if n >= mb/100 && (n*100)%mb == 0 {
		s := fmt.Sprintf("%.2f", float64(n)/mb)
		s = strings.TrimRight(strings.TrimRight(s, "0"), ".")
		return s + " MB"
	}
	return fmt.Sprintf("%d bytes", n)
}

// ParseBool reads a boolean the way FastAPI does for query and form fields:
// true, 1, yes, on, t, y and false, 0, no, off, f, n, in any case. ok is
// false for anything else; answer that with a validation error of type
// "bool_parsing".
func ParseBool(s string) (value bool, ok bool) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "true", "1", "yes", "on", "t", "y":
		return true, true
	case "false", "0", "no", "off", "f", "n":
		return false, true
	}
	return false, false
}

// The validation errors below use FastAPI's (pydantic 2's) messages and
// types; loc is for example ("body", "topn") or ("query", "deep").

// BoolParsingError is the validation error for a field that should hold a boolean.
func BoolParsingError(loc ...any) ValidationError {
	return ValidationError{Loc: loc, Msg: "Input should be a valid boolean, unable to interpret input", Type: "bool_parsing"}
}

// MissingError is the validation error for a required field that is absent.
func MissingError(loc ...any) ValidationError {
	return ValidationError{Loc: loc, Msg: "Field required", Type: "missing"}
}

// IntParsingError is the validation error for a field that should hold an integer.
func IntParsingError(loc ...any) ValidationError {
	return ValidationError{Loc: loc, Msg: "Input should be a valid integer, unable to parse string as an integer", Type: "int_parsing"}
}

// GreaterEqualError is the validation error for a number below its minimum.
func GreaterEqualError(min int, loc ...any) ValidationError {
	return ValidationError{Loc: loc, Msg: fmt.Sprintf("Input should be greater than or equal to %d", min), Type: "greater_than_equal"}
}

// LessEqualError is the validation error for a number above its maximum.
func LessEqualError(max int, loc ...any) ValidationError {
	return ValidationError{Loc: loc, Msg: fmt.Sprintf("Input should be less than or equal to %d", max), Type: "less_than_equal"}
}

// DuplicateError is the validation error for a form field that must come
// once and came n times (two file parts in one form, for example). Both
// services answer it with 422 instead of picking one of the parts.
func DuplicateError(n int, loc ...any) ValidationError {
	return ValidationError{Loc: loc, Msg: fmt.Sprintf("Field given %d times: send it exactly once", n), Type: "duplicate_field"}
}

// LanguageError is the validation error for a language code that is not
// two or three lower-case letters (after lower-casing), or "auto" where
// auto is allowed.
func LanguageError(autoOK bool, loc ...any) ValidationError {
	msg := "Input should be a language code of 2 or 3 letters (ISO 639)"
	if autoOK {
		msg += " or 'auto'"
	}
	return ValidationError{Loc: loc, Msg: msg, Type: "string_pattern_mismatch"}
}

// maxURLInText is the longest URL ClipURLs leaves whole.
const maxURLInText = 300

// ClipURLs shortens each URL in s longer than 300 bytes to its first 200
// and last 60 bytes around "…", saying its length: an answer or record
// quoting a client's 70,000-character URL whole (an error naming it) was
// as long, every time.
func ClipURLs(s string) string {
	return urlRE.ReplaceAllStringFunc(s, func(u string) string {
		if len(u) <= maxURLInText {
			return u
		}
		// the punctuation after a URL ("GET URL: 404") is the message's
		trimmed := strings.TrimRight(u, ":.,;)")
		after := u[len(trimmed):]
		if len(trimmed) <= maxURLInText {
			return trimmed + after
		}
		u = trimmed
		head, tail := u[:200], u[len(u)-60:]
		for !utf8.ValidString(head) {
			head = head[:len(head)-1]
		}
		for !utf8.ValidString(tail) {
			tail = tail[1:]
		}
		return fmt.Sprintf("%s…%s (a URL of %d bytes)%s", head, tail, len(u), after)
	})
}
