package fetch

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"syscall"
	"testing"
	"time"
)

// Without these, a redirect, multicast or reserved address reached
// through an IPv6 form or a range edge would be fetched as public.
func TestIsPrivateEdges(t *testing.T) {
	for addr, want := range map[string]bool{
		// the ends of the reserved IPv4 ranges
		"0.255.255.255": true, "100.127.255.255": true, "192.0.0.255": true, "198.19.255.255": true,
		"1.0.0.0": false, "100.63.255.255": false, "192.0.1.0": false, "198.20.0.0": false,
		// multicast beyond the link-local block
		"239.255.255.250": true, "ff0e::1": true,
		// an IPv4-mapped address in a reserved range
		"::ffff:100.64.0.1": true, "::ffff:198.18.0.1": true,
		// NAT64's local-use prefix, all of it
		"64:ff9b:1:8000::1": true,
		// 6to4 of 192.168.1.1, and Teredo past the prefix's first half and
		// with a private server
		"2002:c0a8:101::1": true, "2001:0:8000::80ff:fffe": true, "2001:0:a9fe:a9fe::a247:27dd": true,
	} {
		if got := IsPrivate(netip.MustParseAddr(addr)); got != want {
			t.Errorf("IsPrivate(%s) = %v, want %v", addr, got, want)
		}
	}
}

// Without this, a document's link or a redirect to a name that resolves
// to a private address ("localhost") would be followed into the local
// network under the default rule.
func TestCheckAddress(t *testing.T) {
	first := context.WithValue(context.Background(), firstKey{}, true)
	allow := context.WithValue(context.Background(), allowKey{}, true)
	for _, c := range []struct {
		name    string
		ctx     context.Context
		rule    Private
		address string
		refused bool
	}{
		{"first URL, default rule", first, PrivateFirstOnly, "127.0.0.1:80", false},
		{"link or redirect, default rule", context.Background(), PrivateFirstOnly, "127.0.0.1:80", true},
		{"link, public address", context.Background(), PrivateFirstOnly, "93.184.216.34:443", false},
		{"first URL, refused rule", first, PrivateRefused, "10.0.0.1:80", true},
		{"allowed rule", context.Background(), PrivateAllowed, "10.0.0.1:80", false},
		{"allowed host", allow, PrivateRefused, "10.0.0.1:80", false},
		{"not an address", context.Background(), PrivateRefused, "nonsense", true},
	} {
		err := checkAddress(c.ctx, c.rule, c.address)
		if refused := errors.Is(err, ErrPrivate); refused != c.refused || (err != nil && !refused) {
			t.Errorf("%s: %v, want refused %v", c.name, err, c.refused)
		}
	}
}

// Without this, a link in a remote document naming "localhost" (not an
// address the link check reads) would reach the machine's own services.
func TestLinkByNameToLoopbackRefused(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Write([]byte("secret")) }))
	defer srv.Close()
	byName := strings.Replace(srv.URL, "127.0.0.1", "localhost", 1)
	f := New(Policy{}, nil)
	if b, err := f.GetLinked(context.Background(), byName+"/x"); !errors.Is(err, ErrPrivate) {
		t.Errorf("linked %s: %q, %v; want ErrPrivate", byName, b, err)
	}
	if b, err := f.Get(context.Background(), byName+"/x"); err != nil || string(b) != "secret" {
		t.Errorf("the user's own %s: %q, %v", byName, b, err)
	}
}

// Without this, a policy of no redirects (a negative MaxRedirects)
// would follow five, or one.
func TestNoRedirectsPolicy(t *testing.T) {
	srv, _ := server(t)
	f := New(Policy{Private: PrivateAllowed, MaxRedirects: -1}, nil)
	_, err := f.Get(context.Background(), srv.URL+"/to-ok")
	if !errors.Is(err, ErrRedirect) || !strings.Contains(err.Error(), "more than 0 redirects") {
		t.Errorf("%v, want ErrRedirect after none", err)
	}
	if n, _ := f.Fetched(); n != 1 {
		t.Errorf("%d requests, want 1", n)
	}
}

// Without this, servers would see no User-Agent, or not the one the
// operator configured.
func TestUserAgentSent(t *testing.T) {
	var got string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { got = r.UserAgent() }))
	defer srv.Close()
	for _, want := range []string{"", "my-harvester/1.0"} {
		if _, err := New(Policy{Private: PrivateAllowed, UserAgent: want}, nil).Get(context.Background(), srv.URL+"/ua"); err != nil {
			t.Fatal(err)
		}
		if want == "" {
			want = Defaults.UserAgent
		}
		if got != want {
			t.Errorf("User-Agent %q, want %q", got, want)
		}
	}
}

// Without this, an allow-list entry written with spaces around it
// (" 127.0.0.1 ", as a comma-separated setting gives) would allow nothing.
func TestAllowHostsTrimmed(t *testing.T) {
	srv, _ := server(t)
	f := New(Policy{Private: PrivateRefused, AllowHosts: []string{" 127.0.0.1 "}, OnlyHosts: true}, nil)
	if b, err := f.Get(context.Background(), srv.URL+"/ok"); err != nil || string(b) != "hello" {
		t.Errorf("%q, %v", b, err)
	}
}

// Without this, a refusal a IIIF server explains with 422 or 501, or in
// JSON, would reach the user as a bare status; a short body would not be
// quoted, control characters would be; a 503's Retry-After would be lost.
func TestStatusOf(t *testing.T) {
	resp := func(code int, ctype, body string, h ...string) *http.Response {
		r := &http.Response{StatusCode: code, Header: http.Header{"Content-Type": {ctype}}, Body: io.NopCloser(strings.NewReader(body))}
		if len(h) == 2 {
			r.Header.Set(h[0], h[1])
		}
		return r
	}
	exact := strings.Repeat("w", maxSaid)
	for _, c := range []struct {
		name  string
		resp  *http.Response
		said  string
		after time.Duration
	}{
		{"422 text", resp(422, "text/plain; charset=utf-8", "region out of bounds"), "region out of bounds", 0},
		{"501 text", resp(501, "text/plain", "format webp not supported"), "format webp not supported", 0},
		{"400 JSON", resp(400, "application/json", `{"error":"bad size"}`), `{"error":"bad size"}`, 0},
		{"400 problem JSON", resp(400, "application/problem+json", `{"title":"bad"}`), `{"title":"bad"}`, 0},
		{"400 of the longest quoted", resp(400, "text/plain", exact), exact, 0},
		{"400 with control characters", resp(400, "text/plain", "width\x07too\x00big"), "width too big", 0},
		{"404 text", resp(404, "text/plain", "no such page"), "", 0},
		{"503 with Retry-After", resp(503, "text/plain", "busy", "Retry-After", "7"), "", 7 * time.Second},
		{"500 with Retry-After", resp(500, "text/plain", "broken", "Retry-After", "7"), "", 0},
	} {
		se := StatusOf("https://iiif.example.org/p", c.resp)
		if se.Said != c.said || se.RetryAfter != c.after {
			t.Errorf("%s: said %q, retry after %v; want %q, %v", c.name, se.Said, se.RetryAfter, c.said, c.after)
		}
	}
}

// Without this, a fetch would wait no longer than its backoff for a
// server that asked for more, shorter than its backoff for one that asked
// for less, or as long as a server asked, however long.
func TestWait(t *testing.T) {
	busy := func(d time.Duration) error {
		return fmt.Errorf("page: %w", &StatusError{Code: 503, RetryAfter: d})
	}
	for _, c := range []struct {
		err  error
		want time.Duration
	}{
		{busy(3 * time.Second), 3 * time.Second},
		{busy(100 * time.Millisecond), time.Second},
		{busy(0), time.Second},
		{busy(time.Hour), MaxRetryAfter},
		{errors.New("reset"), time.Second},
	} {
		if got := Wait(c.err, time.Second); got != c.want {
			t.Errorf("Wait(%v) = %v, want %v", c.err, got, c.want)
		}
	}
}

// Without this, "Retry-After: Inf" or a date days ahead would hold a
// fetch for ever or for days.
func TestRetryAfterBounds(t *testing.T) {
	now := time.Date(2026, 11, 29, 10, 0, 0, 0, time.UTC)
	for _, c := range []struct {
		v    string
		want time.Duration
	}{
		{"Inf", 0}, {"-Inf", 0},
		{now.Add(72 * time.Hour).Format(http.TimeFormat), 24 * time.Hour},
	} {
		if got := RetryAfter(c.v, now); got != c.want {
			t.Errorf("RetryAfter(%q) = %v, want %v", c.v, got, c.want)
		}
	}
}

// Without this, a fetch the policy refuses (scheme, size, redirect,
// private address, host) or a canceled one would be retried with backoff,
// and a 500 would not be.
func TestTransient(t *testing.T) {
	for _, c := range []struct {
		err  error
		want bool
	}{
		{fmt.Errorf("x: %w", ErrScheme), false},
		{fmt.Errorf("x: %w", ErrTooLarge), false},
		{fmt.Errorf("x: %w", ErrRedirect), false},
		{fmt.Errorf("x: %w", ErrPrivate), false},
		{fmt.Errorf("x: %w", ErrHost), false},
		{fmt.Errorf("x: %w", context.Canceled), false},
		{&StatusError{Code: 500}, true},
		{&StatusError{Code: 429}, true},
		{&StatusError{Code: 404}, false},
		{&net.OpError{Op: "dial", Net: "tcp", Err: syscall.ECONNREFUSED}, true},
	} {
		if got := transient(c.err); got != c.want {
			t.Errorf("transient(%v) = %v, want %v", c.err, got, c.want)
		}
	}
}

// failing is a transport whose requests to hosts named in down fail as
// a refused connection does, counting them; others get "ok".
type failing struct {
	down map[string]bool
	n    int
}

func (tr *failing) RoundTrip(req *http.Request) (*http.Response, error) {
	tr.n++
	if tr.down[strings.ToLower(req.URL.Hostname())] {
		return nil, &net.OpError{Op: "dial", Net: "tcp", Err: syscall.ECONNREFUSED}
	}
	return &http.Response{StatusCode: 200, Body: io.NopCloser(strings.NewReader("ok")), Header: http.Header{}, Request: req}, nil
}

// Without this, a host written in another case ("Books.Example",
// "BOOKS.EXAMPLE") would escape being held down, a success would not end
// a host's run of failures, and a host held down would be so for ever.
func TestHostDownRun(t *testing.T) {
	tr := &failing{down: map[string]bool{"books.example": true}}
	f := New(Policy{Retries: -1, Private: PrivateAllowed}, tr)
	get := func(u string) error { _, err := f.Get(context.Background(), u); return err }
	for i := 0; i < hostDownAfter; i++ {
		get(fmt.Sprintf("http://Books.Example/p/%d", i))
	}
	var down *HostDownError
	if err := get("http://BOOKS.EXAMPLE/next"); !errors.As(err, &down) {
		t.Fatalf("after %d failures: %v, want a HostDownError", hostDownAfter, err)
	}
	f.mu.Lock()
	f.down["books.example"].until = time.Now().Add(-time.Second)
	f.mu.Unlock()
	if err := get("http://books.example/again"); errors.As(err, &down) {
		t.Errorf("after its time held down: %v, want it asked again", err)
	}

	// failures, a success, failures: no run of hostDownAfter
	g := New(Policy{Retries: -1, Private: PrivateAllowed}, tr)
	for i := 0; i < 2*(hostDownAfter-1)+1; i++ {
		if i == hostDownAfter-1 {
			tr.down["books.example"] = false
		}
		g.Get(context.Background(), fmt.Sprintf("http://books.example/q/%d", i))
		tr.down["books.example"] = true
	}
	if _, err := g.Get(context.Background(), "http://books.example/last"); errors.As(err, &down) {
		t.Errorf("%d failures split by a success held the host down: %v", 2*(hostDownAfter-1), err)
	}
}

// Without this, a long-lived service's fetcher would keep every host it
// ever failed to reach, or forget one held down.
func TestHostStatesForgotten(t *testing.T) {
	f := New(Policy{}, nil)
	f.down = map[string]*hostState{"held.example": {fails: hostDownAfter, until: time.Now().Add(time.Hour)}}
	for i := 1; i < maxHostStates; i++ {
		f.down[fmt.Sprintf("h%d.example", i)] = &hostState{fails: 1}
	}
	f.noteHost("new.example", &net.OpError{Op: "dial", Net: "tcp", Err: syscall.ECONNREFUSED})
	if len(f.down) != 2 || f.down["held.example"] == nil || f.down["new.example"] == nil {
		t.Errorf("%d hosts kept, want the one held down and the new one", len(f.down))
	}
}

// Without this, a caller changing the log it was given would change the
// fetcher's own.
func TestLogIsACopy(t *testing.T) {
	srv, _ := server(t)
	f := New(Policy{Private: PrivateAllowed}, nil)
	if _, err := f.Get(context.Background(), srv.URL+"/ok"); err != nil {
		t.Fatal(err)
	}
	f.Log()[0].URL = "changed"
	if got := f.Log()[0].URL; got != srv.URL+"/ok" {
		t.Errorf("log URL %q after a caller changed its copy", got)
	}
}

// redirecting is a server whose /to/{code} answers that redirect status
// to /ok of the same server named "localhost", /to-local-ok to the same,
// and /ok "hello".
func redirecting(t *testing.T) (srv *httptest.Server, local string) {
	mux := http.NewServeMux()
	srv = httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	local = strings.Replace(srv.URL, "127.0.0.1", "localhost", 1)
	mux.HandleFunc("/ok", func(w http.ResponseWriter, r *http.Request) { w.Write([]byte("hello")) })
	mux.HandleFunc("/to-local-ok", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, local+"/ok", http.StatusFound)
	})
	for _, code := range []int{301, 302, 303, 307, 308} {
		mux.HandleFunc(fmt.Sprintf("/to/%d", code), func(w http.ResponseWriter, r *http.Request) { http.Redirect(w, r, "/ok", code) })
	}
	return srv, local
}

// Without this, a redirect of any kind but 302 would fail the fetch with
// its status instead of being followed.
func TestRedirectStatusesFollowed(t *testing.T) {
	srv, _ := redirecting(t)
	for _, code := range []int{301, 302, 303, 307, 308} {
		b, err := New(Policy{Private: PrivateAllowed}, nil).Get(context.Background(), fmt.Sprintf("%s/to/%d", srv.URL, code))
		if err != nil || string(b) != "hello" {
			t.Errorf("redirect %d: %q, %v", code, b, err)
		}
	}
}

// Without this, a public server's redirect to a name resolving to a
// private address would be followed as if the user had given it, a
// redirect to a host off the allow-list would be followed, and the
// refusal would name the first host instead of the one to allow.
func TestRedirectTargetChecked(t *testing.T) {
	srv, local := redirecting(t)
	localHost := strings.TrimPrefix(local, "http://")
	_, err := New(Policy{}, nil).Get(context.Background(), srv.URL+"/to-local-ok")
	if h, ok := RefusedHost(err); !errors.Is(err, ErrPrivate) || !ok || h != localHost {
		t.Errorf("redirect to %s: %v (refused host %q); want ErrPrivate naming it", local, err, h)
	}
	only := Policy{Private: PrivateAllowed, AllowHosts: []string{"127.0.0.1"}, OnlyHosts: true}
	_, err = New(only, nil).Get(context.Background(), srv.URL+"/to-local-ok")
	if h, _ := RefusedHost(err); !errors.Is(err, ErrHost) || h != localHost {
		t.Errorf("redirect off the allow-list: %v (refused host %q); want ErrHost naming %s", err, h, localHost)
	}
}

// Without this, a file of exactly the size limit would be refused.
func TestBodyAtTheLimit(t *testing.T) {
	srv, _ := server(t) // /big is 2000 bytes with its length, /chunked-big 2000 without
	for _, path := range []string{"/big", "/chunked-big"} {
		b, err := New(Policy{MaxBytes: 2000, Private: PrivateAllowed}, nil).Get(context.Background(), srv.URL+path)
		if err != nil || len(b) != 2000 {
			t.Errorf("%s at the limit: %d bytes, %v", path, len(b), err)
		}
	}
}

// Without this, a name lookup that timed out would be told as a host
// that does not exist, and "no route to host" not as unreachable.
func TestUnreachedMore(t *testing.T) {
	dial := func(err error) error { return fmt.Errorf("Get x: %w", &net.OpError{Op: "dial", Net: "tcp", Err: err}) }
	for _, c := range []struct {
		err error
		why Unreachability
	}{
		{dial(&net.DNSError{Err: "i/o timeout", Name: "slow.example", IsTimeout: true}), NotUnreached},
		{dial(syscall.EHOSTUNREACH), NoRoute},
	} {
		if why, _ := Unreached(c.err); why != c.why {
			t.Errorf("Unreached(%v) = %v, want %v", c.err, why, c.why)
		}
	}
}
