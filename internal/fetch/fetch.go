// Package fetch gets remote files under a bounded policy: http and https
// only, a size cap, a time limit per request, a few requests at once per
// host, a limited number of redirects (none to another scheme, none into loopback, private or
// link-local addresses unless allowed), retries with backoff on transient
// failures, and a cache for the run so that no URL is fetched twice.
//
// The book reader (internal/book) fetches METS files, manifests and text
// files through a Fetcher; the commands fetch page images through the same
// Fetcher, so one run's requests share its cache and its log.
package fetch

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"mime"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
	"unicode"
	"unicode/utf8"

	"golang.org/x/sync/singleflight"

	"archivekit/internal/ledger"
)

// Policy bounds what a Fetcher does. The zero value of a field means its
// default (see Defaults).
type Policy struct {
	MaxBytes     int64         // largest body accepted; default 64 MiB
	Timeout      time.Duration // per attempt, headers and body; default 60 s
	MaxRedirects int           // default 5; a negative value allows none
	Retries      int           // further attempts after a transient failure; default 2; negative: none
	Backoff      time.Duration // wait before the first retry, doubled for each next one; default 500 ms
	// Private says what may be reached at loopback, private, link-local or
	// unspecified addresses.
	Private Private
	// UserAgent is sent with every request; default "archivekit".
	UserAgent string
	// AllowHosts lists hosts (a name or address, with or without its port:
	// "archive.example.org", "127.0.0.1:8080") that may be reached at any
	// address, private ranges included, as a first URL, a link or a
	// redirect target.
	AllowHosts []string
	// OnlyHosts refuses every host not in AllowHosts (ErrHost).
	OnlyHosts bool
	// MaxPerHost is the most requests a Fetcher sends to one host at once
	// (politeness: callers fetching concurrently wait their turn); default
	// 4.
	MaxPerHost int
}

// allowed says whether u's host is in AllowHosts.
func (p Policy) allowed(u *url.URL) bool {
	for _, h := range p.AllowHosts {
		h = strings.ToLower(strings.TrimSpace(h))
		if h != "" && (h == strings.ToLower(u.Host) || h == strings.ToLower(u.Hostname())) {
			return true
		}
	}
	return false
}

// checkHost refuses u when OnlyHosts is set and u's host is not allowed.
func (p Policy) checkHost(u *url.URL) error {
	if p.OnlyHosts && !p.allowed(u) {
		return fmt.Errorf("%s: %w", u, ErrHost)
	}
	return nil
}

// Private is the rule for addresses in private ranges.
type Private int

const (
	// PrivateFirstOnly (the default) lets the URL a user gave reach any
	// address but refuses redirects into private ranges: a public server
	// cannot send the tool into the local network.
	PrivateFirstOnly Private = iota
	// PrivateRefused refuses private ranges even for the first URL (for
	// services, where the URL comes from a client).
	PrivateRefused
	// PrivateAllowed allows private ranges everywhere.
	PrivateAllowed
)

// Defaults is the policy a zero Policy stands for.
var Defaults = Policy{
	MaxBytes:     64 << 20,
	Timeout:      60 * time.Second,
	MaxRedirects: 5,
	Retries:      2,
	Backoff:      500 * time.Millisecond,
	UserAgent:    "archivekit",
	MaxPerHost:   4,
}

func (p Policy) withDefaults() Policy {
	if p.MaxBytes <= 0 {
		p.MaxBytes = Defaults.MaxBytes
	}
	if p.Timeout <= 0 {
		p.Timeout = Defaults.Timeout
	}
	switch {
	case p.MaxRedirects == 0:
		p.MaxRedirects = Defaults.MaxRedirects
	case p.MaxRedirects < 0:
		p.MaxRedirects = 0
	}
	switch {
	case p.Retries == 0:
		p.Retries = Defaults.Retries
	case p.Retries < 0:
		p.Retries = 0
	}
	if p.Backoff <= 0 {
		p.Backoff = Defaults.Backoff
	}
	if p.UserAgent == "" {
		p.UserAgent = Defaults.UserAgent
	}
	if p.MaxPerHost <= 0 {
		p.MaxPerHost = Defaults.MaxPerHost
	}
	return p
}

// Errors wrapped by Get.
var (
	ErrScheme   = errors.New("only http and https may be fetched")
	ErrTooLarge = errors.New("larger than the size limit")
	ErrRedirect = errors.New("redirect refused")
	ErrPrivate  = errors.New("address in a private range refused")
	ErrHost     = errors.New("host not in the allow-list")
)

// HostError is a fetch refused for the host it goes to (a first URL, a
// link or a redirect target): not in the allow-list (ErrHost) or at a
// private address (ErrPrivate). Its message is Err's.
type HostError struct {
	// Host is the refused URL's host (with its port when it has one).
	Host string
	Err  error
}

func (e *HostError) Error() string { return e.Err.Error() }
func (e *HostError) Unwrap() error { return e.Err }

// Transient is false: a host refused by the policy is refused again on
// every try (ledger.Transient would otherwise take the network error a
// refused address is wrapped in for a passing failure).
func (e *HostError) Transient() bool { return false }

// RefusedHost is the host of a fetch refused for its host (HostError), and
// whether err is one.
func RefusedHost(err error) (string, bool) {
	var he *HostError
	if errors.As(err, &he) {
		return he.Host, true
	}
	return "", false
}

// StatusError is a response that was not 200 OK.
type StatusError struct {
	URL  string
	Code int
	// RetryAfter is the wait a 429 or 503 answer asked for (its
	// Retry-After header, RetryAfter); 0 when it asked none.
	RetryAfter time.Duration
	// Said is what a server refusing the request itself (400, 422, 501)
	// said why, in a short plain-text or JSON body, on one line ("" when
	// it said nothing so short, or answered otherwise): a IIIF server's
	// "requested width 384 above maxWidth 300".
	Said string
}

// maxSaid is the longest body StatusOf quotes (StatusError.Said).
const maxSaid = 300

// MaxRetryAfter bounds the wait a server's Retry-After makes a fetch
// take before its next attempt (a day's asked for would hold a run).
const MaxRetryAfter = 2 * time.Minute

// StatusOf is the StatusError of resp, an answer to u that is not 200 OK,
// with the wait a 429 or 503 asked for.
func StatusOf(u string, resp *http.Response) *StatusError {
	se := &StatusError{URL: u, Code: resp.StatusCode}
	if se.Code == http.StatusTooManyRequests || se.Code == http.StatusServiceUnavailable {
		se.RetryAfter = RetryAfter(resp.Header.Get("Retry-After"), time.Now())
	}
	switch se.Code {
	case http.StatusBadRequest, http.StatusUnprocessableEntity, http.StatusNotImplemented:
		se.Said = said(resp)
	}
	return se
}

// said is a short plain-text or JSON answer body on one line, printable
// characters only; "" for any other.
func said(resp *http.Response) string {
	mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	if mt != "text/plain" && mt != "application/json" && !strings.HasSuffix(mt, "+json") || resp.Body == nil {
		return ""
	}
	b, _ := io.ReadAll(io.LimitReader(resp.Body, maxSaid+1))
	if len(b) > maxSaid || !utf8.Valid(b) {
		return ""
	}
	return strings.Join(strings.FieldsFunc(string(b), func(r rune) bool { return !unicode.IsPrint(r) || unicode.IsSpace(r) }), " ")
}

// Wait is the wait before the next attempt after err when the backoff is
// backoff: longer when err is an answer that said when to come back
// (StatusError.RetryAfter), up to MaxRetryAfter.
func Wait(err error, backoff time.Duration) time.Duration {
	var se *StatusError
	if errors.As(err, &se) && se.RetryAfter > backoff {
		return min(se.RetryAfter, MaxRetryAfter)
	}
	return backoff
}

// RetryAfter reads a Retry-After value (RFC 9110): delay seconds or an
// HTTP date, as the wait from now; unparseable or past values give 0, and
// waits over a day a day.
func RetryAfter(v string, now time.Time) time.Duration {
	const day = 24 * time.Hour
	v = strings.TrimSpace(v)
	if v == "" {
		return 0
	}
	if s, err := strconv.ParseFloat(v, 64); err == nil {
		if s <= 0 || math.IsNaN(s) || math.IsInf(s, 0) {
			return 0
		}
		return time.Duration(min(s, day.Seconds()) * float64(time.Second))
	}
	if t, err := http.ParseTime(v); err == nil && t.After(now) {
		return min(t.Sub(now), day)
	}
	return 0
}

func (e *StatusError) Error() string {
	if e.Said != "" {
		return fmt.Sprintf("GET %s: %d %s (the server said: %s)", e.URL, e.Code, http.StatusText(e.Code), e.Said)
	}
	return fmt.Sprintf("GET %s: %d %s", e.URL, e.Code, http.StatusText(e.Code))
}

// Transient reports whether the answer is a passing failure of the server
// (429 Too Many Requests or 5xx, after the fetcher's retries), not of the
// resource: ledger.Transient reads it, so a run leaves such an input to do
// (--resume) and a job runs its item again later, where a 404 is the
// input's own failure.
func (e *StatusError) Transient() bool {
	return e.Code == http.StatusTooManyRequests || e.Code >= 500
}

// Request is one HTTP request a Fetcher sent, in its log.
type Request struct {
	URL    string
	Status int   // 0 when no response came
	Bytes  int64 // body bytes read
}

// Result is what a Get gave, as one value (a fetch made ahead of its use,
// lookahead.RunKeyed).
type Result struct {
	Data []byte
	Err  error
}

// Fetcher gets URLs under a Policy. It is safe for concurrent use.
type Fetcher struct {
	policy Policy
	client *http.Client

	group singleflight.Group // one request at a time per URL
	mu    sync.Mutex
	cache map[string][]byte
	log   []Request
	// kept gives the bytes an earlier run kept of a URL (UseKept).
	kept func(rawURL string) ([]byte, bool)
	// hosts holds a slot per request in flight to each host (MaxPerHost).
	hosts map[string]chan struct{}
	// down is each host's run of fetches the network failed (no answer,
	// refused, reset) and, once that run reaches hostDownAfter, until when
	// it is not asked (hostDown).
	down map[string]*hostState
}

// hostState is a host's run of network failures (Fetcher.down).
type hostState struct {
	fails int
	until time.Time
	last  error
}

// A host whose last hostDownAfter fetches the network failed, each after
// its retries, is not asked again for hostDownFor: the fetches of it fail
// at once (HostDownError, a passing failure). A book on a server that
// stopped answering cost 189 s a page (three tries of 60 s), 2.5 hours for
// 200 pages, before the run could say so.
const (
	hostDownAfter = 3
	hostDownFor   = time.Minute
	// maxHostStates is how many hosts' runs a fetcher keeps before it
	// forgets those not held down.
	maxHostStates = 1000
)

// HostDownError is a fetch not sent because its host failed the last
// fetches (hostDownAfter): a passing failure (Transient), so a run leaves
// the file to do and --resume fetches it.
type HostDownError struct {
	Host  string
	Fails int
	Until time.Time
	Last  error
}

func (e *HostDownError) Error() string {
	return fmt.Sprintf("%s not asked: its last %d fetches got no answer (%v); it is asked again after %s",
		e.Host, e.Fails, e.Last, e.Until.Format(time.TimeOnly))
}
func (e *HostDownError) Unwrap() error   { return e.Last }
func (e *HostDownError) Transient() bool { return true }

// hostDown returns the HostDownError of host while it is not asked.
func (f *Fetcher) hostDown(host string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	st := f.down[strings.ToLower(host)]
	if st == nil || st.fails < hostDownAfter || !time.Now().Before(st.until) {
		return nil
	}
	return &HostDownError{Host: host, Fails: st.fails, Until: st.until, Last: st.last}
}

// noteHost counts a fetch of host: a failure of the network (no answer,
// refused, reset; not an HTTP status, which is an answer) lengthens its
// run, anything else ends it.
func (f *Fetcher) noteHost(host string, err error) {
	// What the ledger counts as passing (no answer, refused, reset, cut
	// off), not an HTTP status (an answer) and not what does not pass (a
	// certificate refused, an HTTP answer to HTTPS), which would otherwise
	// hold the host down and leave its files to do run after run.
	var se *StatusError
	var down *HostDownError
	if errors.As(err, &down) {
		return // not sent: it neither lengthens the run nor ends it
	}
	network := err != nil && ledger.Transient(err) && !errors.As(err, &se)
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.down == nil {
		f.down = map[string]*hostState{}
	}
	host = strings.ToLower(host)
	st := f.down[host]
	if !network {
		delete(f.down, host)
		return
	}
	if st == nil {
		if len(f.down) >= maxHostStates {
			// A long-lived fetcher (a service's) meets many hosts: those
			// not held down are forgotten rather than kept for ever.
			now := time.Now()
			for h, old := range f.down {
				if !now.Before(old.until) {
					delete(f.down, h)
				}
			}
		}
		st = &hostState{}
		f.down[host] = st
	}
	st.fails++
	st.last = err
	if st.fails >= hostDownAfter {
		st.until = time.Now().Add(hostDownFor)
	}
}

// slot waits for a slot of host (MaxPerHost requests in flight at once)
// and returns its release.
func (f *Fetcher) slot(ctx context.Context, host string) (release func(), err error) {
	host = strings.ToLower(host)
	f.mu.Lock()
	if f.hosts == nil {
		f.hosts = map[string]chan struct{}{}
	}
	c, ok := f.hosts[host]
	if !ok {
		c = make(chan struct{}, f.policy.MaxPerHost)
		f.hosts[host] = c
	}
	f.mu.Unlock()
	select {
	case c <- struct{}{}:
		return func() { <-c }, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

type firstKey struct{}

// allowKey marks the context of a request to a host of Policy.AllowHosts.
type allowKey struct{}

// Fresh is a Fetcher with f's policy and HTTP client (so its transport's
// kept connections) but nothing else of f: an empty cache, log and host
// slots, and no kept bytes. A service builds one Fetcher and takes a Fresh
// one per request, so requests share connections but no cached bodies.
func (f *Fetcher) Fresh() *Fetcher {
	return &Fetcher{policy: f.policy, client: f.client, cache: map[string][]byte{}}
}

// New returns a Fetcher with the policy p. A nil transport means a
// transport of its own whose dialer enforces p.Private on the addresses it
// connects to (after name resolution, so a name cannot hide an address);
// tests pass a transport that serves files without a network.
func New(p Policy, transport http.RoundTripper) *Fetcher {
	p = p.withDefaults()
	if transport == nil {
		dialer := &net.Dialer{
			Timeout: 30 * time.Second,
			ControlContext: func(ctx context.Context, network, address string, _ syscall.RawConn) error {
				return checkAddress(ctx, p.Private, address)
			},
		}
		transport = &http.Transport{
			Proxy:               nil,
			DialContext:         dialer.DialContext,
			TLSHandshakeTimeout: 30 * time.Second,
			MaxIdleConnsPerHost: 4,
		}
	}
	return &Fetcher{
		policy: p,
		client: &http.Client{
			Transport: transport,
			// redirects are followed by Get, one hop at a time, to check each
			CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
		},
		cache: map[string][]byte{},
	}
}

// checkAddress refuses a private address unless the rule allows it; the
// first request of a PrivateFirstOnly fetch carries firstKey in its context.
func checkAddress(ctx context.Context, rule Private, address string) error {
	if rule == PrivateAllowed || (rule == PrivateFirstOnly && ctx.Value(firstKey{}) != nil) || ctx.Value(allowKey{}) != nil {
		return nil
	}
	ap, err := netip.ParseAddrPort(address)
	if err != nil {
		return fmt.Errorf("%w: %s", ErrPrivate, address)
	}
	if IsPrivate(ap.Addr()) {
		return fmt.Errorf("%w: %s", ErrPrivate, address)
	}
	return nil
}

// IsPrivate says whether an address is loopback, private (RFC 1918, RFC
// 4193), link-local, unspecified, or otherwise not a public unicast
// address. An IPv6 address that carries an IPv4 address (IPv4-mapped,
// IPv4-compatible ::/96, NAT64's 64:ff9b::/96, 6to4's 2002::/16, Teredo's
// client) is judged by that IPv4 address too: on a network with NAT64,
// [64:ff9b::a9fe:a9fe] reaches 169.254.169.254. NAT64's local-use
// 64:ff9b:1::/48 (RFC 8215) is private as a whole.
func IsPrivate(a netip.Addr) bool {
	a = a.Unmap()
	if a.Is6() {
		for _, v4 := range embeddedIPv4(a) {
			if IsPrivate(v4) {
				return true
			}
		}
		if nat64Local.Contains(a) {
			return true
		}
	}
	if a.Is4() {
		for _, p := range reserved4 {
			if p.Contains(a) {
				return true
			}
		}
	}
	return a.IsLoopback() || a.IsPrivate() || a.IsLinkLocalUnicast() || a.IsLinkLocalMulticast() ||
		a.IsUnspecified() || a.IsMulticast() || a.IsInterfaceLocalMulticast()
}

var (
	nat64Local = netip.MustParsePrefix("64:ff9b:1::/48")
	nat64      = netip.MustParsePrefix("64:ff9b::/96")
	compatible = netip.MustParsePrefix("::/96")
	sixToFour  = netip.MustParsePrefix("2002::/16")
	teredo     = netip.MustParsePrefix("2001::/32")
	// reserved4 are IPv4 ranges that are not public unicast beyond those
	// netip names: "this network", carrier-grade NAT, IETF protocol
	// assignments, benchmarking, reserved and broadcast.
	reserved4 = []netip.Prefix{
		netip.MustParsePrefix("0.0.0.0/8"), netip.MustParsePrefix("100.64.0.0/10"),
		netip.MustParsePrefix("192.0.0.0/24"), netip.MustParsePrefix("198.18.0.0/15"),
		netip.MustParsePrefix("240.0.0.0/4"),
	}
)

// embeddedIPv4 returns the IPv4 addresses an IPv6 address carries.
func embeddedIPv4(a netip.Addr) []netip.Addr {
	b := a.As16()
	v4 := func(p []byte) netip.Addr { return netip.AddrFrom4([4]byte{p[0], p[1], p[2], p[3]}) }
	switch {
	case compatible.Contains(a), nat64.Contains(a):
		return []netip.Addr{v4(b[12:16])}
	case sixToFour.Contains(a):
		return []netip.Addr{v4(b[2:6])}
	case teredo.Contains(a):
		// the server, and the client (its bits inverted)
		return []netip.Addr{v4(b[4:8]), v4([]byte{^b[12], ^b[13], ^b[14], ^b[15]})}
	}
	return nil
}

// Log returns a copy of the requests sent so far, in order.
func (f *Fetcher) Log() []Request {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]Request(nil), f.log...)
}

// Fetched returns the number of requests sent and the body bytes read.
func (f *Fetcher) Fetched() (requests int, bytes int64) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, r := range f.log {
		bytes += r.Bytes
	}
	return len(f.log), bytes
}

// UseKept gives the Fetcher what an earlier run fetched and kept: a Get
// or GetLinked of a URL for which kept returns true sends no request and
// returns those bytes, which are not cached (kept is asked again). Call it
// before the first Get.
func (f *Fetcher) UseKept(kept func(rawURL string) ([]byte, bool)) {
	f.kept = kept
}

// Get returns the body of rawURL, from the run's cache when it was fetched
// before. Only 200 OK is a success; other statuses are *StatusError.
// Network errors, 429 and 5xx are retried with backoff. rawURL is taken as
// given by the user: under PrivateFirstOnly it may be at a private address.
func (f *Fetcher) Get(ctx context.Context, rawURL string) ([]byte, error) {
	return f.get(ctx, rawURL, true)
}

// Getter is GetLinked when linked (the URL was found in a remote
// document), Get otherwise: the one place that choice is made for a
// location whose origin a caller carries.
func (f *Fetcher) Getter(linked bool) func(ctx context.Context, rawURL string) ([]byte, error) {
	if linked {
		return f.GetLinked
	}
	return f.Get
}

// GetLinked is Get for a URL found in a remote document (a METS file's or
// a manifest's link): under PrivateFirstOnly it is refused at a private
// address as a redirect target is, so that a published document cannot
// send the tool into the local network.
func (f *Fetcher) GetLinked(ctx context.Context, rawURL string) ([]byte, error) {
	return f.get(ctx, rawURL, false)
}

func (f *Fetcher) get(ctx context.Context, rawURL string, trusted bool) ([]byte, error) {
	f.mu.Lock()
	body, ok := f.cache[rawURL]
	f.mu.Unlock()
	if !ok && f.kept != nil {
		body, ok = f.kept(rawURL)
	}
	if ok {
		return body, nil
	}
	// callers asking for the same URL at once share one fetch; a linked and
	// a trusted fetch of one URL are kept apart
	key := fmt.Sprintf("%t %s", trusted, rawURL)
	v, err, _ := f.group.Do(key, func() (any, error) { return f.fetch(ctx, rawURL, trusted) })
	if err != nil {
		return nil, err
	}
	return v.([]byte), nil
}

// fetch gets rawURL with retries and caches its body.
func (f *Fetcher) fetch(ctx context.Context, rawURL string, trusted bool) ([]byte, error) {
	f.mu.Lock()
	body, ok := f.cache[rawURL]
	f.mu.Unlock()
	if ok {
		return body, nil
	}
	u, perr := url.Parse(rawURL)
	if perr == nil {
		if err := f.hostDown(u.Host); err != nil {
			return nil, err
		}
	}
	wait := f.policy.Backoff
	var err error
	defer func() {
		if perr == nil && ctx.Err() == nil {
			f.noteHost(u.Host, err)
		}
	}()
	for attempt := 0; ; attempt++ {
		body, err = f.follow(ctx, rawURL, trusted)
		if err == nil {
			f.mu.Lock()
			f.cache[rawURL] = body
			f.mu.Unlock()
			return body, nil
		}
		if attempt >= f.policy.Retries || !transient(err) || (perr == nil && f.hostDown(u.Host) != nil) {
			if errors.Is(err, context.DeadlineExceeded) && ctx.Err() == nil {
				// Said as what happened: it was "context deadline exceeded".
				err = fmt.Errorf("%s: no answer within %s, %d tries: %w", rawURL, f.policy.Timeout, attempt+1, err)
			}
			return nil, err
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(Wait(err, wait)):
		}
		wait *= 2
	}
}

// CutOffError is an answer whose body ended before its end (the
// connection closed before its Content-Length, or reset): the network's
// fault, not the file's, so a passing one (Transient: a run leaves the
// file to do, and --resume fetches it again).
type CutOffError struct {
	URL string
	Err error
}

func (e *CutOffError) Error() string {
	return fmt.Sprintf("%s: the answer was cut off: %v", e.URL, e.Err)
}
func (e *CutOffError) Unwrap() error   { return e.Err }
func (e *CutOffError) Transient() bool { return true }

// transient says whether an error is worth a retry.
func transient(err error) bool {
	var se *StatusError
	if errors.As(err, &se) {
		return se.Code == http.StatusTooManyRequests || se.Code >= 500
	}
	var said interface{ Transient() bool }
	if errors.As(err, &said) {
		return said.Transient() // a HostError, whatever it wraps: refused again on every try
	}
	return !errors.Is(err, ErrScheme) && !errors.Is(err, ErrTooLarge) && !errors.Is(err, ErrRedirect) &&
		!errors.Is(err, ErrPrivate) && !errors.Is(err, ErrHost) && !errors.Is(err, context.Canceled)
}

// follow gets rawURL, following up to MaxRedirects redirects, each
// checked.
func (f *Fetcher) follow(ctx context.Context, rawURL string, first bool) (_ []byte, err error) {
	var at *url.URL // the URL fetched, or the redirect target checked
	defer func() {
		if at != nil && (errors.Is(err, ErrPrivate) || errors.Is(err, ErrHost)) {
			err = &HostError{Host: at.Host, Err: err}
		}
	}()
	u, err := url.Parse(rawURL)
	if err != nil {
		return nil, err
	}
	at = u
	if u.Scheme != "http" && u.Scheme != "https" {
		return nil, fmt.Errorf("%s: %w (scheme %q)", rawURL, ErrScheme, u.Scheme)
	}
	if err := f.policy.checkHost(u); err != nil {
		return nil, err
	}
	if !first && f.policy.Private != PrivateAllowed && !f.policy.allowed(u) {
		if a, err := netip.ParseAddr(u.Hostname()); err == nil && IsPrivate(a) {
			return nil, fmt.Errorf("%s: %w (a link in a remote document)", rawURL, ErrPrivate)
		}
	}
	for hop := 0; ; hop++ {
		body, next, err := f.once(ctx, u, first)
		if err != nil || next == nil {
			return body, err
		}
		first, at = false, next
		if hop >= f.policy.MaxRedirects {
			return nil, fmt.Errorf("%s: %w: more than %d redirects", rawURL, ErrRedirect, f.policy.MaxRedirects)
		}
		if next.Scheme != "http" && next.Scheme != "https" {
			return nil, fmt.Errorf("%s: %w: to %s (%w)", rawURL, ErrRedirect, next, ErrScheme)
		}
		if err := f.policy.checkHost(next); err != nil {
			return nil, fmt.Errorf("%s: %w: to %s (%w)", rawURL, ErrRedirect, next, err)
		}
		if f.policy.Private != PrivateAllowed && !f.policy.allowed(next) {
			if a, err := netip.ParseAddr(next.Hostname()); err == nil && IsPrivate(a) {
				return nil, fmt.Errorf("%s: %w: to %s (%w)", rawURL, ErrRedirect, next, ErrPrivate)
			}
		}
		u = next
	}
}

// once sends one request; a redirect returns its target.
func (f *Fetcher) once(ctx context.Context, u *url.URL, first bool) ([]byte, *url.URL, error) {
	release, err := f.slot(ctx, u.Host)
	if err != nil {
		return nil, nil, err
	}
	defer release()
	if err := f.hostDown(u.Host); err != nil {
		// Held down while this fetch waited for its slot.
		return nil, nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, f.policy.Timeout)
	defer cancel()
	if first {
		ctx = context.WithValue(ctx, firstKey{}, true)
	}
	if f.policy.allowed(u) {
		ctx = context.WithValue(ctx, allowKey{}, true)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return nil, nil, err
	}
	req.Header.Set("User-Agent", f.policy.UserAgent)
	entry := Request{URL: u.String()}
	defer func() {
		f.mu.Lock()
		f.log = append(f.log, entry)
		f.mu.Unlock()
	}()
	resp, err := f.client.Do(req)
	if err != nil {
		return nil, nil, err
	}
	defer resp.Body.Close()
	entry.Status = resp.StatusCode
	size := resp.ContentLength
	switch resp.StatusCode {
	case http.StatusOK:
	case http.StatusMovedPermanently, http.StatusFound, http.StatusSeeOther, http.StatusTemporaryRedirect, http.StatusPermanentRedirect:
		loc, err := resp.Location()
		if err != nil {
			return nil, nil, fmt.Errorf("%s: %w: %v", u, ErrRedirect, err)
		}
		return nil, loc, nil
	default:
		return nil, nil, StatusOf(u.String(), resp)
	}
	if size > f.policy.MaxBytes {
		return nil, nil, fmt.Errorf("%s: %w (%s bytes, limit %d)", u, ErrTooLarge, strconv.FormatInt(size, 10), f.policy.MaxBytes)
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, f.policy.MaxBytes+1))
	entry.Bytes = int64(len(body))
	if err != nil {
		return nil, nil, &CutOffError{URL: u.String(), Err: err}
	}
	if int64(len(body)) > f.policy.MaxBytes {
		return nil, nil, fmt.Errorf("%s: %w (limit %d bytes)", u, ErrTooLarge, f.policy.MaxBytes)
	}
	return body, nil, nil
}

// Unreached says how err shows that a server was never reached, and the
// host name when it does not resolve: NotUnreached for any other error (a
// timeout, a reset, a TLS failure, which may pass). It is the one reading
// of such errors; each caller words it for its own messages.
func Unreached(err error) (why Unreachability, host string) {
	var dns *net.DNSError
	switch {
	case err == nil:
	case errors.Is(err, syscall.ECONNREFUSED):
		return ConnRefused, ""
	case errors.As(err, &dns) && dns.IsNotFound:
		return NoSuchHost, dns.Name
	case errors.Is(err, syscall.EHOSTUNREACH), errors.Is(err, syscall.ENETUNREACH):
		return NoRoute, ""
	}
	return NotUnreached, ""
}

// Unreachability is how a server was never reached (Unreached).
type Unreachability int

// The ways Unreached tells.
const (
	NotUnreached Unreachability = iota // reached, or failed otherwise
	ConnRefused                        // the address refused the connection
	NoSuchHost                         // the host name does not resolve
	NoRoute                            // no route to the host or its network
)
