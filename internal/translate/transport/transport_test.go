package transport

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
	"unicode/utf8"

	"archivekit/internal/version"
)

// fakeClock never advances by itself; Sleep records each requested wait.
type fakeClock struct {
	mu     sync.Mutex
	now    time.Time
	sleeps []time.Duration
}

func (f *fakeClock) Now() time.Time { f.mu.Lock(); defer f.mu.Unlock(); return f.now }
func (f *fakeClock) Sleep(ctx context.Context, d time.Duration) error {
	f.mu.Lock()
	f.sleeps = append(f.sleeps, d)
	f.mu.Unlock()
	return ctx.Err()
}

func newTestClient(p Policy, clk *fakeClock) *Client {
	c := New(p, nil)
	c.Now = clk.Now
	c.Sleep = clk.Sleep
	c.Jitter = func(base time.Duration) time.Duration { return base / 10 }
	return c
}

func get(url string) func(ctx context.Context) (*http.Request, error) {
	return func(ctx context.Context) (*http.Request, error) {
		return http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	}
}

// scripted answers with the given statuses in turn, then 200.
func scripted(t *testing.T, statuses []int, header http.Header) (*httptest.Server, *atomic.Int32) {
	var n atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		i := int(n.Add(1)) - 1
		if i < len(statuses) {
			for k, v := range header {
				w.Header()[k] = v
			}
			w.WriteHeader(statuses[i])
			w.Write([]byte("busy"))
			return
		}
		w.Write([]byte("ok"))
	}))
	t.Cleanup(srv.Close)
	return srv, &n
}

func TestRetries(t *testing.T) {
	base := 100 * time.Millisecond
	tests := []struct {
		name       string
		statuses   []int
		header     http.Header
		maxRetries int
		wantCalls  int32
		wantErr    bool
		wantSleeps []time.Duration
	}{
		{"success first time", nil, nil, 4, 1, false, nil},
		{"5xx then success", []int{500, 502, 503}, nil, 4, 4, false,
			[]time.Duration{110 * time.Millisecond, 210 * time.Millisecond, 410 * time.Millisecond}},
		{"429 retried", []int{429, 429}, nil, 4, 3, false,
			[]time.Duration{110 * time.Millisecond, 210 * time.Millisecond}},
		{"429 Retry-After larger than backoff wins", []int{429}, http.Header{"Retry-After": {"7"}}, 4, 2, false,
			[]time.Duration{7 * time.Second}},
		{"Retry-After smaller than backoff ignored", []int{503}, http.Header{"Retry-After": {"0.01"}}, 4, 2, false,
			[]time.Duration{110 * time.Millisecond}},
		{"exhausted", []int{500, 500, 500}, nil, 2, 3, true,
			[]time.Duration{110 * time.Millisecond, 210 * time.Millisecond}},
		{"zero retries means one try", []int{500}, nil, 0, 1, true, nil},
		{"4xx not retried", []int{404}, nil, 4, 1, false, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			srv, calls := scripted(t, tc.statuses, tc.header)
			clk := &fakeClock{now: time.Unix(1e9, 0)}
			c := newTestClient(Policy{MaxRetries: tc.maxRetries, BackoffBase: base}, clk)
			resp, err := c.Do(context.Background(), get(srv.URL))
			if resp != nil {
				resp.Body.Close()
			}
			if (err != nil) != tc.wantErr {
				t.Fatalf("err = %v, wantErr %v", err, tc.wantErr)
			}
			if tc.wantErr {
				var te *Error
				if !errors.As(err, &te) || te.Attempts != tc.maxRetries+1 || te.StatusCode != 500 {
					t.Fatalf("err = %#v, want *Error after %d attempts with status 500", err, tc.maxRetries+1)
				}
			}
			if got := calls.Load(); got != tc.wantCalls {
				t.Errorf("server saw %d requests, want %d", got, tc.wantCalls)
			}
			if len(clk.sleeps) != len(tc.wantSleeps) {
				t.Fatalf("sleeps = %v, want %v", clk.sleeps, tc.wantSleeps)
			}
			for i := range clk.sleeps {
				if clk.sleeps[i] != tc.wantSleeps[i] {
					t.Errorf("sleep %d = %v, want %v", i, clk.sleeps[i], tc.wantSleeps[i])
				}
			}
			st := c.Stats()
			if st.Requests != int64(tc.wantCalls) || st.Retries != int64(tc.wantCalls-1) {
				t.Errorf("stats = %+v", st)
			}
			if tc.wantErr != (st.Failures == 1) {
				t.Errorf("failures = %d", st.Failures)
			}
		})
	}
}

func TestNetworkErrorRetried(t *testing.T) {
	srv := httptest.NewServer(http.NotFoundHandler())
	url := srv.URL
	srv.Close() // connection refused from now on
	clk := &fakeClock{now: time.Unix(1e9, 0)}
	c := newTestClient(Policy{MaxRetries: 3, BackoffBase: time.Second}, clk)
	_, err := c.Do(context.Background(), get(url))
	var te *Error
	if !errors.As(err, &te) || te.Err == nil || te.Attempts != 4 {
		t.Fatalf("err = %v, want network *Error after 4 attempts", err)
	}
	if len(clk.sleeps) != 3 || clk.sleeps[2] != 4*time.Second+100*time.Millisecond {
		t.Fatalf("sleeps = %v", clk.sleeps)
	}
	if !IsTransportError(err) {
		t.Error("IsTransportError = false")
	}
}

func TestZeroBackoffSleepsZero(t *testing.T) {
	srv, _ := scripted(t, []int{500, 500}, nil)
	clk := &fakeClock{now: time.Unix(1e9, 0)}
	c := New(Policy{MaxRetries: 4}, nil)
	c.Now, c.Sleep = clk.Now, clk.Sleep
	resp, err := c.Do(context.Background(), get(srv.URL))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	for _, d := range clk.sleeps {
		if d != 0 {
			t.Fatalf("sleeps = %v, want all zero with BackoffBase 0", clk.sleeps)
		}
	}
}

func TestSpacingAcrossGoroutines(t *testing.T) {
	srv, _ := scripted(t, nil, nil)
	clk := &fakeClock{now: time.Unix(1e9, 0)}
	interval := 250 * time.Millisecond
	c := newTestClient(Policy{MinInterval: interval}, clk)
	var wg sync.WaitGroup
	for i := 0; i < 8; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			resp, err := c.Do(context.Background(), get(srv.URL))
			if err != nil {
				t.Error(err)
				return
			}
			resp.Body.Close()
		}()
	}
	wg.Wait()
	// The clock stands still, so each wait is that request's start offset.
	starts := append([]time.Duration(nil), clk.sleeps...)
	sort.Slice(starts, func(i, j int) bool { return starts[i] < starts[j] })
	for i, s := range starts {
		if want := time.Duration(i) * interval; s != want {
			t.Fatalf("start offsets = %v, want multiples of %v", starts, interval)
		}
	}
}

func TestSpacingRealClock(t *testing.T) {
	var mu sync.Mutex
	var arrivals []time.Time
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		arrivals = append(arrivals, time.Now())
		mu.Unlock()
	}))
	defer srv.Close()
	interval := 40 * time.Millisecond
	c := New(Policy{MinInterval: interval}, nil)
	var wg sync.WaitGroup
	for i := 0; i < 5; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if resp, err := c.Do(context.Background(), get(srv.URL)); err == nil {
				resp.Body.Close()
			}
		}()
	}
	wg.Wait()
	sort.Slice(arrivals, func(i, j int) bool { return arrivals[i].Before(arrivals[j]) })
	if total := arrivals[len(arrivals)-1].Sub(arrivals[0]); total < 4*interval-10*time.Millisecond {
		t.Fatalf("5 requests spread over %v, want at least about %v", total, 4*interval)
	}
}

func TestCancelledContextStops(t *testing.T) {
	srv, calls := scripted(t, []int{500, 500, 500}, nil)
	ctx, cancel := context.WithCancel(context.Background())
	c := New(Policy{MaxRetries: 5, BackoffBase: time.Hour}, nil)
	go func() { time.Sleep(50 * time.Millisecond); cancel() }()
	start := time.Now()
	_, err := c.Do(ctx, get(srv.URL))
	if !errors.Is(err, context.Canceled) || time.Since(start) > 5*time.Second || calls.Load() != 1 {
		t.Fatalf("err = %v after %v and %d calls", err, time.Since(start), calls.Load())
	}
}

func TestFromEnv(t *testing.T) {
	def := Policy{MinInterval: 0, MaxRetries: 4, BackoffBase: time.Second}
	tests := []struct {
		name    string
		env     map[string]string
		want    Policy
		wantErr string
	}{
		{"defaults", nil, def, ""},
		{"all set, no clamps", map[string]string{"MTAPI_MIN_INTERVAL_S": "0.25", "MTAPI_MAX_RETRIES": "0", "MTAPI_BACKOFF_BASE_S": "120"},
			Policy{MinInterval: 250 * time.Millisecond, MaxRetries: 0, BackoffBase: 120 * time.Second}, ""},
		{"blank keeps default", map[string]string{"MTAPI_MAX_RETRIES": " "}, def, ""},
		{"bad number", map[string]string{"MTAPI_BACKOFF_BASE_S": "fast"}, def, "MTAPI_BACKOFF_BASE_S"},
		{"negative", map[string]string{"MTAPI_MIN_INTERVAL_S": "-1"}, def, "MTAPI_MIN_INTERVAL_S"},
		{"fractional retries", map[string]string{"MTAPI_MAX_RETRIES": "2.5"}, def, "MTAPI_MAX_RETRIES"},
		// Before, 1e308 overflowed time.Duration into a negative interval:
		// no spacing at all, silently.
		{"interval beyond a day", map[string]string{"MTAPI_MIN_INTERVAL_S": "1e308"}, def, "MTAPI_MIN_INTERVAL_S"},
		{"backoff beyond a day", map[string]string{"MTAPI_BACKOFF_BASE_S": "86401"}, def, "MTAPI_BACKOFF_BASE_S"},
		{"a day", map[string]string{"MTAPI_BACKOFF_BASE_S": "86400"}, Policy{MaxRetries: 4, BackoffBase: 24 * time.Hour}, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := FromEnv("MTAPI", def, func(k string) string { return tc.env[k] })
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want mention of %s", err, tc.wantErr)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Fatalf("FromEnv = %+v, %v; want %+v", got, err, tc.want)
			}
		})
	}
}

func TestRequestsCarryTheVersionedUserAgent(t *testing.T) {
	var got atomic.Value
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got.Store(r.Header.Get("User-Agent"))
	}))
	defer srv.Close()
	resp, err := New(Policy{}, nil).Do(context.Background(), get(srv.URL))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if ua := got.Load(); ua != version.UserAgent() || !strings.HasSuffix(version.UserAgent(), "/"+version.String()) {
		t.Errorf("User-Agent = %v, want %q", ua, version.UserAgent())
	}
}

// TestBackoffNeverOverflows: the doubling sleep is capped at MaxSeconds, so a
// large retry count never overflows time.Duration into a negative (no) wait.
func TestBackoffNeverOverflows(t *testing.T) {
	p := Policy{BackoffBase: time.Second}
	if got := p.Backoff(3); got != 8*time.Second {
		t.Errorf("Backoff(3) = %v, want 8s", got)
	}
	for _, attempt := range []int{17, 40, 63, 64, 1000} {
		if got := p.Backoff(attempt); got != MaxSeconds*time.Second {
			t.Errorf("Backoff(%d) = %v, want the cap %ds", attempt, got, MaxSeconds)
		}
	}
}

// TestFailFast: with FailFast, a service that refuses the connection and
// never answered is given up at the first attempt, and the error names
// the address and the variable that sets it; one that answered before is
// retried as any network error.
func TestFailFast(t *testing.T) {
	srv, _ := scripted(t, nil, nil)
	url := srv.URL
	for _, tc := range []struct {
		name         string
		answeredOnce bool
		wantAttempts int
	}{
		{"never answered", false, 1},
		{"answered before", true, 4},
	} {
		t.Run(tc.name, func(t *testing.T) {
			clk := &fakeClock{now: time.Unix(1e9, 0)}
			c := newTestClient(Policy{MaxRetries: 3, BackoffBase: time.Second}, clk)
			c.FailFast, c.Setting = true, "TRANSLATION_URL"
			if tc.answeredOnce {
				c.answered.Store(true)
			}
			_, err := c.Do(context.Background(), get(closedURL(t)))
			var te *Error
			if !errors.As(err, &te) || te.Attempts != tc.wantAttempts {
				t.Fatalf("err = %v, want *Error after %d attempt(s)", err, tc.wantAttempts)
			}
			if st := c.Stats(); st.Requests != int64(tc.wantAttempts) || st.Failures != 1 {
				t.Errorf("stats = %+v", st)
			}
			_, fast := AsUnreachable(err)
			if fast != !tc.answeredOnce {
				t.Errorf("AsUnreachable = %v", fast)
			}
			if fast && (len(clk.sleeps) != 0 || !strings.Contains(err.Error(), "TRANSLATION_URL") ||
				!strings.Contains(err.Error(), "connection refused") || !strings.Contains(err.Error(), "127.0.0.1:")) {
				t.Errorf("sleeps %v, error %q: want no sleep and a message naming the address, the cause and TRANSLATION_URL", clk.sleeps, err)
			}
		})
	}
	// An answer, even an error status, marks the service as reached.
	c := New(Policy{}, nil)
	c.FailFast = true
	if resp, err := c.Do(context.Background(), get(url)); err == nil {
		resp.Body.Close()
	}
	if !c.answered.Load() {
		t.Error("an answer did not mark the service as reached")
	}
}

// closedURL is the address of a port that was just closed: connecting to
// it is refused.
func closedURL(t *testing.T) string {
	srv := httptest.NewServer(http.NotFoundHandler())
	srv.Close()
	return srv.URL
}

func TestUnreachable(t *testing.T) {
	for _, tc := range []struct {
		err  error
		want string
	}{
		{nil, ""},
		{&net.OpError{Op: "dial", Net: "tcp", Err: os.NewSyscallError("connect", syscall.ECONNREFUSED)}, "connection refused"},
		{&net.OpError{Op: "dial", Net: "tcp", Err: &net.DNSError{Name: "mt.invalid", Err: "no such host", IsNotFound: true}}, "host name mt.invalid not found"},
		{&net.OpError{Op: "dial", Net: "tcp", Err: os.NewSyscallError("connect", syscall.EHOSTUNREACH)}, "no route to host"},
		{&net.DNSError{Name: "mt.example", Err: "server misbehaving", IsTemporary: true}, ""},
		{context.DeadlineExceeded, ""},
		{os.NewSyscallError("read", syscall.ECONNRESET), ""},
	} {
		if got := Unreachable(tc.err); got != tc.want {
			t.Errorf("Unreachable(%v) = %q, want %q", tc.err, got, tc.want)
		}
	}
}

// DoRead tries again an answer cut off before its end (the connection
// closed before its Content-Length, or reset): a network failure, not an
// answer. Cut off every time, it is an *Error that passes (Transient).
func TestDoReadCutOff(t *testing.T) {
	for _, tc := range []struct {
		name    string
		cut     int32 // answers cut off before the whole one
		retries int
		want    string
	}{{"cut once", 1, 3, "whole answer"}, {"cut every time", 10, 2, ""}} {
		t.Run(tc.name, func(t *testing.T) {
			var n atomic.Int32
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if n.Add(1) <= tc.cut {
					w.Header().Set("Content-Length", "100")
					w.Write([]byte("whole"))
					return // the server closes the connection 95 bytes short
				}
				w.Write([]byte("whole answer"))
			}))
			defer srv.Close()
			c := newTestClient(Policy{MaxRetries: tc.retries, BackoffBase: time.Millisecond}, &fakeClock{})
			resp, body, err := c.DoRead(context.Background(), 1<<20, get(srv.URL))
			if tc.want != "" {
				if err != nil || resp.StatusCode != 200 || string(body) != tc.want || n.Load() != 2 {
					t.Fatalf("%d calls: %v %q", n.Load(), err, body)
				}
				return
			}
			var e *Error
			if !errors.As(err, &e) || !e.Transient() || e.Attempts != tc.retries+1 || !strings.Contains(err.Error(), "reading the answer") {
				t.Fatalf("%d calls: %v, want a passing *Error after %d attempts", n.Load(), err, tc.retries+1)
			}
		})
	}
}

// TestRedactSent: what was sent is taken out of an error message that
// quotes it, as sent, as JSON writes it, or its first 40 characters; short
// lines (a word the message may hold for its own reasons) are left.
func TestRedactSent(t *testing.T) {
	sent := "Ulice V Ovčárně, p. p. č. 25. Podnět: kanalizační přípojka pro č. p. 33.\nok\nHrob 12 a jáma 3"
	redact := RedactSent(sent)
	for _, c := range []struct{ msg, want string }{
		{`HTTP 400: cannot translate input_text="Ulice V Ovčárně, p. p. č. 25. Podnět: kanalizační přípojka pro č. p. 33."`, `HTTP 400: cannot translate input_text="[text sent]"`},
		{`{"error": "bad input: Ulice V Ov\u010d\u00e1rn\u011b, p. p. \u010d. 25. Podn\u011bt: kanaliza\u010dn\u00ed p\u0159\u00edpojka pro \u010d. p. 33."}`, `{"error": "bad input: [text sent]"}`},
		{`model.translate('Ulice V Ovčárně, p. p. č. 25. Podnět: kana...')`, `model.translate('[text sent]na...')`},
		{"HTTP 500: Hrob 12 a jáma 3 failed; ok", "HTTP 500: [text sent] failed; ok"},
		{"HTTP 503: busy", "HTTP 503: busy"},
	} {
		if got := redact(c.msg); got != c.want {
			t.Errorf("%q:\n got %q\nwant %q", c.msg, got, c.want)
		}
	}
}

// TestSnippetOneLine: an answer quoted in an error is on one line (a stack
// trace's lines filled log records and failure tables) and short.
func TestSnippetOneLine(t *testing.T) {
	trace := "Traceback (most recent call last):\n  File \"/srv/mt/app.py\", line 42, in translate\n    model.translate(x)\nValueError: bad"
	if got := Snippet(trace); strings.Contains(got, "\n") || !strings.HasPrefix(got, "Traceback (most recent call last): File") {
		t.Errorf("Snippet = %q", got)
	}
	if got := Snippet(strings.Repeat("é", 300)); utf8.RuneCountInString(got) != 201 {
		t.Errorf("a long answer is %d characters", utf8.RuneCountInString(got))
	}
}
