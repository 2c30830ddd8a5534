// Package transport is the retry and request-spacing policy shared by the
// HTTP translation backends (spec section 8, "Retries"): network errors,
// HTTP 429 and 5xx answers are retried up to MaxRetries times; before retry
// number n+1 the client sleeps BackoffBase * 2^n plus a jitter; requests
// start at least MinInterval apart, across all goroutines sharing a Client.
//
// The policy is applied exactly as configured: no minimum, maximum or
// default is imposed on the values. A Retry-After header on a 429 or 503
// answer is honoured as a lower bound on that sleep (see Client.Do).
package transport

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf16"
	"unicode/utf8"

	"archivekit/internal/fetch"
	"archivekit/internal/version"
)

// Policy is a backend's transport policy.
type Policy struct {
	// MinInterval is the minimum time between the starts of two requests.
	MinInterval time.Duration
	// MaxRetries is how many times a failed request is retried (0: one try).
	MaxRetries int
	// BackoffBase is the sleep before the first retry; it doubles each retry.
	BackoffBase time.Duration
}

// MaxSeconds is the largest value FromEnv accepts for an interval or a
// backoff base, and the longest sleep Backoff returns: a day. Larger values
// would overflow time.Duration after doubling and turn into no wait at all.
const MaxSeconds = 86400

// Backoff returns the sleep before retry number attempt+1 without jitter:
// BackoffBase * 2^attempt, at most MaxSeconds.
func (p Policy) Backoff(attempt int) time.Duration {
	d := float64(p.BackoffBase) * math.Pow(2, float64(attempt))
	if d > float64(MaxSeconds*time.Second) {
		return MaxSeconds * time.Second
	}
	return time.Duration(d)
}

// FromEnv reads <prefix>_MIN_INTERVAL_S, <prefix>_MAX_RETRIES and
// <prefix>_BACKOFF_BASE_S through getenv (os.Getenv in production); a
// variable that is unset or blank keeps the value in def. A value that does
// not parse, is negative or (seconds) exceeds MaxSeconds is an error naming
// the variable.
func FromEnv(prefix string, def Policy, getenv func(string) string) (Policy, error) {
	p := def
	seconds := func(name string, dst *time.Duration) error {
		v := strings.TrimSpace(getenv(name))
		if v == "" {
			return nil
		}
		f, err := strconv.ParseFloat(v, 64)
		if err != nil || f < 0 || math.IsNaN(f) || f > MaxSeconds {
			return fmt.Errorf("%s=%q: want a number of seconds from 0 to %d", name, v, MaxSeconds)
		}
		*dst = time.Duration(f * float64(time.Second))
		return nil
	}
	if err := seconds(prefix+"_MIN_INTERVAL_S", &p.MinInterval); err != nil {
		return def, err
	}
	if err := seconds(prefix+"_BACKOFF_BASE_S", &p.BackoffBase); err != nil {
		return def, err
	}
	if v := strings.TrimSpace(getenv(prefix + "_MAX_RETRIES")); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 {
			return def, fmt.Errorf("%s_MAX_RETRIES=%q: want a whole number >= 0", prefix, v)
		}
		p.MaxRetries = n
	}
	return p, nil
}

// Stats counts what a Client did; the pipelines report transport errors in
// each document's WARNING summary.
type Stats struct {
	Requests int64 // HTTP requests sent, retries included
	Retries  int64 // requests that were repeats of a failed one
	Failures int64 // calls that gave up after all retries
}

// Error is returned by Do when every attempt failed.
type Error struct {
	URL        string
	Attempts   int
	StatusCode int   // last HTTP status, 0 for a network error
	Err        error // last network error, nil for an HTTP status
	Body       string
	// Unreachable is set when the service was never reached and the
	// client gave up at once (Client.FailFast): its address refused the
	// connection or its host name does not resolve.
	Unreachable bool
	// Refused is set when the service answered 401 or 403: it refuses
	// this program's credentials (Hint says which setting holds them), and
	// every other request would be refused alike.
	Refused bool
	Hint    string
	// Setting names the variable that sets the service's address (for
	// example TRANSLATION_URL), from Client.Setting.
	Setting string
}

func (e *Error) Error() string {
	if e.Refused {
		return fmt.Sprintf("%s refused this program: HTTP %d %s (%s)", e.URL, e.StatusCode, e.Body, e.Hint)
	}
	if e.Unreachable {
		msg := fmt.Sprintf("%s cannot be reached (%v)", e.URL, Unreachable(e.Err))
		if e.Setting != "" {
			msg += fmt.Sprintf(": is the service running, and is %s its address?", e.Setting)
		}
		return msg
	}
	if e.Err != nil {
		return fmt.Sprintf("%s: failed after %d attempt(s): %v", e.URL, e.Attempts, e.Err)
	}
	return fmt.Sprintf("%s: failed after %d attempt(s): HTTP %d %s", e.URL, e.Attempts, e.StatusCode, e.Body)
}

func (e *Error) Unwrap() error { return e.Err }

// Transient reports whether the failure passes (ledger.Transient): a
// network error, a timeout or an HTTP 429 or 5xx answer after all
// retries; the input it was for is not at fault and is tried again by a
// resumed run. A service never reached at all (Unreachable) is not: its
// address setting is to be checked.
func (e *Error) Transient() bool { return !e.Unreachable && !e.Refused }

// Client sends HTTP requests under a Policy. The zero value is not usable;
// use New. Its fields may be replaced before first use (tests inject Now,
// Sleep and Jitter).
type Client struct {
	HTTP   *http.Client
	Policy Policy
	// Now returns the current time.
	Now func() time.Time
	// Sleep waits for d or until ctx ends.
	Sleep func(ctx context.Context, d time.Duration) error
	// Jitter returns the random extra added to a backoff of base; the
	// default is uniform in [0, base), so a zero BackoffBase sleeps zero.
	Jitter func(base time.Duration) time.Duration
	// FailFast gives up at the first attempt, without retries, when the
	// service has not answered once yet through this client and its
	// address refuses the connection or does not resolve: a service that
	// is not there is reported in milliseconds instead of after the whole
	// backoff. Once it has answered, such errors are retried as any other
	// network error (a restart in the middle of a run).
	FailFast bool
	// Setting names the variable that sets the service's address; the
	// error of an unreachable service names it.
	Setting string

	mu   sync.Mutex
	next time.Time // earliest start of the next request

	requests, retries, failures atomic.Int64
	answered                    atomic.Bool // some request got an HTTP answer
}

// New returns a Client with the real clock and the given HTTP client
// (http.DefaultClient when nil).
func New(p Policy, hc *http.Client) *Client {
	if hc == nil {
		hc = http.DefaultClient
	}
	return &Client{
		HTTP:   hc,
		Policy: p,
		Now:    time.Now,
		Sleep:  SleepContext,
		Jitter: func(base time.Duration) time.Duration {
			if base <= 0 {
				return 0
			}
			return time.Duration(rand.Int63n(int64(base)))
		},
	}
}

// SleepContext sleeps for d, returning early with ctx.Err() when ctx ends.
func SleepContext(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Close drops the idle connections of the HTTP client.
func (c *Client) Close() error {
	if c != nil && c.HTTP != nil {
		c.HTTP.CloseIdleConnections()
	}
	return nil
}

// Stats returns the counters so far.
func (c *Client) Stats() Stats {
	return Stats{Requests: c.requests.Load(), Retries: c.retries.Load(), Failures: c.failures.Load()}
}

// wait reserves the next start slot and sleeps until it.
func (c *Client) wait(ctx context.Context) error {
	if c.Policy.MinInterval <= 0 {
		return ctx.Err()
	}
	c.mu.Lock()
	now := c.Now()
	start := c.next
	if start.Before(now) {
		start = now
	}
	c.next = start.Add(c.Policy.MinInterval)
	c.mu.Unlock()
	return c.Sleep(ctx, start.Sub(now))
}

// Retryable reports whether an HTTP status is retried: 429 and every 5xx.
func Retryable(status int) bool {
	return status == http.StatusTooManyRequests || (status >= 500 && status <= 599)
}

// Do sends the request built by newReq (called once per attempt, so a body
// can be re-read) with the client's policy. It returns the first response
// whose status is not retryable; the caller closes its body. When every
// attempt failed it returns an *Error. A cancelled ctx stops at once.
//
// Retry-After: on a 429 or 503 answer carrying Retry-After (seconds or an
// HTTP date), the sleep before the next attempt is the larger of that value
// and the computed backoff.
func (c *Client) Do(ctx context.Context, newReq func(ctx context.Context) (*http.Request, error)) (*http.Response, error) {
	return c.DoRetries(ctx, c.Policy.MaxRetries, newReq)
}

// DoRead is Do that also reads the answer's body, at most limit bytes
// (limit+1 are read, so a caller tells an answer over the limit), inside
// the retries: an answer cut off (the connection reset, or closed before
// its Content-Length) is a network failure like a refused request, tried
// again and, when every attempt failed so, an *Error (passing: Transient).
// The response's Body is closed; its status and headers are the caller's.
func (c *Client) DoRead(ctx context.Context, limit int64, newReq func(ctx context.Context) (*http.Request, error)) (*http.Response, []byte, error) {
	var body []byte
	resp, err := c.do(ctx, c.Policy.MaxRetries, newReq, func(resp *http.Response) error {
		var err error
		body, err = io.ReadAll(io.LimitReader(resp.Body, limit+1))
		resp.Body.Close()
		return err
	})
	if err != nil {
		return nil, nil, err
	}
	return resp, body, nil
}

// DoRetries is Do with an explicit retry count instead of Policy.MaxRetries
// (a model-list probe that should fall back quickly uses 0).
func (c *Client) DoRetries(ctx context.Context, maxRetries int, newReq func(ctx context.Context) (*http.Request, error)) (*http.Response, error) {
	return c.do(ctx, maxRetries, newReq, nil)
}

// do is DoRetries; read, when not nil, reads an answer that is not retried
// for its status, and its error is retried as a network error.
func (c *Client) do(ctx context.Context, maxRetries int, newReq func(ctx context.Context) (*http.Request, error), read func(*http.Response) error) (*http.Response, error) {
	var last *Error
	for attempt := 0; ; attempt++ {
		if err := c.wait(ctx); err != nil {
			return nil, err
		}
		req, err := newReq(ctx)
		if err != nil {
			return nil, err
		}
		c.requests.Add(1)
		if attempt > 0 {
			c.retries.Add(1)
		}
		version.SetUserAgent(req)
		resp, err := c.HTTP.Do(req)
		var retryAfter time.Duration
		if err == nil {
			c.answered.Store(true)
		}
		switch {
		case err != nil:
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			last = &Error{URL: req.URL.Redacted(), Attempts: attempt + 1, Err: err, Setting: c.Setting}
			if c.FailFast && !c.answered.Load() && Unreachable(err) != "" {
				last.Unreachable = true
				c.failures.Add(1)
				return nil, last
			}
		case Retryable(resp.StatusCode):
			body, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
			resp.Body.Close()
			last = &Error{URL: req.URL.Redacted(), Attempts: attempt + 1, StatusCode: resp.StatusCode,
				Body: strings.TrimSpace(string(body))}
			if resp.StatusCode == http.StatusTooManyRequests || resp.StatusCode == http.StatusServiceUnavailable {
				retryAfter = fetch.RetryAfter(resp.Header.Get("Retry-After"), c.Now())
			}
		default:
			if read == nil {
				return resp, nil
			}
			rerr := read(resp)
			if rerr == nil {
				return resp, nil
			}
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			last = &Error{URL: req.URL.Redacted(), Attempts: attempt + 1, Err: fmt.Errorf("reading the answer (HTTP %d): %w", resp.StatusCode, rerr), Setting: c.Setting}
		}
		if attempt >= maxRetries {
			c.failures.Add(1)
			return nil, last
		}
		d := c.Policy.Backoff(attempt) + c.Jitter(c.Policy.BackoffBase)
		if retryAfter > d {
			d = retryAfter
		}
		if err := c.Sleep(ctx, d); err != nil {
			return nil, err
		}
	}
}

// Unreachable says why err means that a service is not there: "connection
// refused", "host name not found" or "no route to host" (also for a network
// that is unreachable); "" for any other error (a timeout, a reset, a
// TLS failure), which may pass.
func Unreachable(err error) string {
	switch why, host := fetch.Unreached(err); why {
	case fetch.ConnRefused:
		return "connection refused"
	case fetch.NoSuchHost:
		return "host name " + host + " not found"
	case fetch.NoRoute:
		return "no route to host"
	}
	return ""
}

// AsUnreachable returns the *Error in err's chain when it reports a
// service that was never reached (Error.Unreachable) or that refuses this
// program's credentials (Error.Refused): every other request would fail
// alike, so a run stops.
func AsUnreachable(err error) (*Error, bool) {
	var e *Error
	if errors.As(err, &e) && (e.Unreachable || e.Refused) {
		return e, true
	}
	return nil, false
}

// RefusedError is the error of an answer 401 or 403 to url (body its
// answer, shortened), hint saying which setting holds the credentials.
func RefusedError(url string, status int, body, hint string) *Error {
	return &Error{URL: url, Attempts: 1, StatusCode: status, Body: Snippet(body), Refused: true, Hint: hint}
}

// IsTransportError reports whether err came from exhausted retries.
func IsTransportError(err error) bool {
	var e *Error
	return errors.As(err, &e)
}

// Snippet is an answer body shortened for an error message: trimmed, at
// most 200 characters.
func Snippet(body string) string {
	// On one line: a service's multi-line answer (a stack trace) filled
	// log records and failure tables with lines of their own.
	s := strings.Join(strings.Fields(body), " ")
	if r := []rune(s); len(r) > 200 {
		s = string(r[:200]) + "…"
	}
	return s
}

// RedactToken replaces secret in s with label where it stands as a token
// of its own (not inside a longer run of letters, digits, '-' and '_'): a
// short secret is not cut out of ordinary words ("bad key" read "bad
// [LLM_API_KEY]ey" with the key "k", which also told its letter). A
// server that echoes a request's credentials in its error answer does
// not get them into logs and run metadata.
func RedactToken(s, secret, label string) string {
	if secret == "" {
		return s
	}
	tokenByte := func(c byte) bool {
		return c == '-' || c == '_' || '0' <= c && c <= '9' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || c >= 0x80
	}
	var out strings.Builder
	for {
		i := strings.Index(s, secret)
		if i < 0 {
			out.WriteString(s)
			return out.String()
		}
		end := i + len(secret)
		if (i > 0 && tokenByte(s[i-1])) || (end < len(s) && tokenByte(s[end])) {
			out.WriteString(s[:i+1]) // inside a longer token: kept, and looked for again after its first byte
			s = s[i+1:]
			continue
		}
		out.WriteString(s[:i])
		out.WriteString(label)
		s = s[end:]
	}
}

// RedactError is err with its message passed through redact (which takes
// secrets out of it, RedactToken); it unwraps to err, so that what err is
// (a transient failure, a guard's rejection) is still told. err itself
// when redact changes nothing.
func RedactError(err error, redact func(string) string) error {
	if err == nil {
		return nil
	}
	msg := redact(err.Error())
	if msg == err.Error() {
		return err
	}
	return &redactedError{msg: msg, err: err}
}

type redactedError struct {
	msg string
	err error
}

func (e *redactedError) Error() string { return e.msg }
func (e *redactedError) Unwrap() error { return e.err }

// RedactSent returns a redactor (for RedactError) that takes out of an
// error message what was sent to a service: each line of text of 8
// characters or more, as sent, as JSON writes it, and its first 40
// characters (an answer may quote a shortened copy), becomes "[text sent]".
// A service answering an error that quotes its input (a 400 repeating
// input_text, a 500's stack trace) put the document's text, personal data
// among it, into logs, run metadata, failure tables and ledgers.
func RedactSent(text string) func(string) string {
	var quoted []string
	for _, line := range strings.Split(text, "\n") {
		line = strings.TrimSpace(line)
		if utf8.RuneCountInString(line) < 8 {
			continue
		}
		forms := []string{line, asciiJSON(line)}
		if j, err := json.Marshal(line); err == nil {
			forms = append(forms, strings.Trim(string(j), `"`))
		}
		if r := []rune(line); len(r) > 40 {
			forms = append(forms, string(r[:40]))
		}
		quoted = append(quoted, forms...)
	}
	// The longest first, so that a line is not cut by its own beginning.
	sort.Slice(quoted, func(i, j int) bool { return len(quoted[i]) > len(quoted[j]) })
	return func(s string) string {
		for _, q := range quoted {
			s = strings.ReplaceAll(s, q, "[text sent]")
		}
		return s
	}
}

// asciiJSON is s as a JSON string's content with every character beyond
// ASCII escaped (\u010d: Python's json.dumps, as services written in it
// quote their input).
func asciiJSON(s string) string {
	var b strings.Builder
	for _, r := range s {
		switch {
		case r == '"' || r == '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		case r < 0x20 || r > 0x7e:
			if r > 0xffff {
				r1, r2 := utf16.EncodeRune(r)
				fmt.Fprintf(&b, "\\u%04x\\u%04x", r1, r2)
			} else {
				fmt.Fprintf(&b, "\\u%04x", r)
			}
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// EnvPublicServices names the setting by which a site refuses the public
// services the translation backend and the lemmatiser fall back to when
// their address is unset (TRANSLATION_URL, LEMMATIZER_URL): "refuse" makes
// an unset address an error before anything is sent; "allow", the default
// (the specification's), sends document text there with a warning.
const EnvPublicServices = "TRANSLATE_PUBLIC_SERVICES"

// PublicRefused reads EnvPublicServices (getenv): true for "refuse", false
// for "allow" or unset; any other value is an error naming it.
func PublicRefused(getenv func(string) string) (bool, error) {
	switch v := strings.ToLower(strings.TrimSpace(getenv(EnvPublicServices))); v {
	case "", "allow":
		return false, nil
	case "refuse":
		return true, nil
	default:
		return false, fmt.Errorf("%s=%q: want refuse (an unset TRANSLATION_URL or LEMMATIZER_URL is an error) or allow (the default: document text goes to the public services, with a warning)", EnvPublicServices, v)
	}
}
