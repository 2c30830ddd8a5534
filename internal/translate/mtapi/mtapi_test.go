package mtapi

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
	"unicode/utf8"

	"archivekit/internal/translate/transport"
)

// fakeAPI speaks the documented protocol. Its "translation" maps a few
// Czech words to English and upper-cases everything else, line by line, so
// tests can see that each chunk went through and line breaks survived.
type fakeAPI struct {
	models   string // body of GET /models; "" gives 404
	fail     []int  // statuses answered to the first POSTs, in order
	delay    time.Duration
	garbage  func(w http.ResponseWriter)
	posts    atomic.Int32
	mu       sync.Mutex
	inputs   []string
	srcTgt   []string
	failures atomic.Int32
}

const halModels = `{"_links":{"self":{"href":"/models/"}},"_embedded":{"item":[
 {"model":"cs-en","supports":{"cs":["en"]},"title":"cs-en"},
 {"model":"en-cs","supports":{"en":["cs"]}},
 {"model":"uk-cs","supports":{"uk":["cs"]}},
 {"model":"doc-en","supports":{"de":["en"],"fr":["en"]}}]}}`

var dict = map[string]string{"hrob": "grave", "jáma": "pit", "sonda": "trench", "a": "and"}

func (f *fakeAPI) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	switch {
	case r.Method == http.MethodGet && r.URL.Path == "/models":
		if f.models == "" {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, f.models)
	case r.Method == http.MethodPost && strings.HasPrefix(r.URL.Path, "/models/"):
		n := int(f.posts.Add(1)) - 1
		if f.delay > 0 {
			time.Sleep(f.delay)
		}
		if n < len(f.fail) {
			f.failures.Add(1)
			w.WriteHeader(f.fail[n])
			return
		}
		if f.garbage != nil {
			f.garbage(w)
			return
		}
		in := r.FormValue("input_text")
		pair := strings.TrimPrefix(r.URL.Path, "/models/")
		if q := r.URL.Query(); q.Get("src")+"-"+q.Get("tgt") != pair {
			http.Error(w, "src/tgt disagree with the model", http.StatusBadRequest)
			return
		}
		f.mu.Lock()
		f.inputs = append(f.inputs, in)
		f.srcTgt = append(f.srcTgt, pair)
		f.mu.Unlock()
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		var lines []string
		for _, line := range strings.Split(in, "\n") {
			var words []string
			for _, wd := range strings.Fields(line) {
				if t, ok := dict[strings.ToLower(wd)]; ok {
					words = append(words, t)
				} else {
					words = append(words, strings.ToUpper(wd))
				}
			}
			lines = append(lines, strings.Join(words, " "))
		}
		fmt.Fprint(w, strings.Join(lines, "\n")+"\n")
	default:
		http.NotFound(w, r)
	}
}

func start(t *testing.T, f *fakeAPI, cfg Config) *Backend {
	t.Helper()
	srv := httptest.NewServer(f)
	t.Cleanup(srv.Close)
	cfg.BaseURL = srv.URL + "/"
	b := New(cfg)
	var sleeps []time.Duration
	b.Transport().Sleep = func(ctx context.Context, d time.Duration) error { sleeps = append(sleeps, d); return ctx.Err() }
	return b
}

func TestTranslateNormal(t *testing.T) {
	f := &fakeAPI{models: halModels}
	b := start(t, f, Config{Policy: DefaultPolicy})
	got, err := b.Translate(context.Background(), "  Hrob a jáma\nsonda 4\n", "cs", "en")
	if err != nil {
		t.Fatal(err)
	}
	if want := "  grave and pit\ntrench 4\n"; got != want {
		t.Fatalf("Translate = %q, want %q", got, want)
	}
	if f.srcTgt[0] != "cs-en" {
		t.Errorf("called model %s", f.srcTgt[0])
	}
	if pairs, src := b.Models(context.Background()); src != "api" || strings.Join(pairs, ",") != "cs-en,de-en,en-cs,fr-en,uk-cs" {
		t.Errorf("Models = %v from %s", pairs, src)
	}
}

func TestTranslateChunks(t *testing.T) {
	f := &fakeAPI{models: `["cs-en"]`}
	b := start(t, f, Config{ChunkLimit: 40})
	var src strings.Builder
	for i := 0; i < 30; i++ {
		fmt.Fprintf(&src, "Hrob číslo %d byl prázdný. ", i)
	}
	text := strings.TrimSpace(src.String())
	got, err := b.Translate(context.Background(), text, "cs", "en")
	if err != nil {
		t.Fatal(err)
	}
	if len(f.inputs) < 20 {
		t.Fatalf("%d calls for %d characters at 40 per chunk", len(f.inputs), utf8.RuneCountInString(text))
	}
	for _, in := range f.inputs {
		if n := utf8.RuneCountInString(in); n > 40 {
			t.Errorf("chunk of %d characters sent: %q", n, in)
		}
		if !strings.HasSuffix(in, ".") {
			t.Errorf("chunk not cut at a sentence end: %q", in)
		}
	}
	if strings.Count(got, "grave ČÍSLO") != 30 || !strings.HasPrefix(got, "grave ČÍSLO 0 BYL PRÁZDNÝ. grave") {
		t.Errorf("joined translation wrong: %q", got[:80])
	}
}

func TestTransportBehaviour(t *testing.T) {
	tests := []struct {
		name      string
		api       *fakeAPI
		policy    transport.Policy
		httpTO    time.Duration
		wantErr   string
		wantPosts int32
		wantRetry int64
	}{
		{"5xx then success", &fakeAPI{models: halModels, fail: []int{500, 503}}, transport.Policy{MaxRetries: 4}, 0, "", 3, 2},
		{"429 retried then success", &fakeAPI{models: halModels, fail: []int{429, 429, 429}}, transport.Policy{MaxRetries: 4}, 0, "", 4, 3},
		{"429 exhausts retries", &fakeAPI{models: halModels, fail: []int{429, 429, 429}}, transport.Policy{MaxRetries: 2}, 0, "HTTP 429", 3, 2},
		{"slow but in time", &fakeAPI{models: halModels, delay: 30 * time.Millisecond}, transport.Policy{MaxRetries: 0}, 2 * time.Second, "", 1, 0},
		{"slow past the timeout is retried then fails", &fakeAPI{models: halModels, delay: 300 * time.Millisecond}, transport.Policy{MaxRetries: 1}, 100 * time.Millisecond, "failed after 2 attempt(s)", 2, 1},
		{"4xx is not retried", &fakeAPI{models: halModels, fail: []int{400}}, transport.Policy{MaxRetries: 4}, 0, "HTTP 400", 1, 0},
		{"garbage: HTML page", &fakeAPI{models: halModels, garbage: func(w http.ResponseWriter) {
			w.Header().Set("Content-Type", "text/html")
			fmt.Fprint(w, "<html><body>Service maintenance</body></html>")
		}}, transport.Policy{}, 0, "garbage answer: Content-Type", 1, 0},
		{"garbage: not UTF-8", &fakeAPI{models: halModels, garbage: func(w http.ResponseWriter) {
			w.Header().Set("Content-Type", "text/plain")
			w.Write([]byte{0xff, 0xfe, 0x00, 0x41})
		}}, transport.Policy{}, 0, "not UTF-8", 1, 0},
		{"garbage: empty", &fakeAPI{models: halModels, garbage: func(w http.ResponseWriter) {
			w.Header().Set("Content-Type", "text/plain")
			fmt.Fprint(w, " \n")
		}}, transport.Policy{}, 0, "empty translation", 1, 0},
		{"garbage: JSON error object", &fakeAPI{models: halModels, garbage: func(w http.ResponseWriter) {
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprint(w, `{"message":"oops"}`)
		}}, transport.Policy{}, 0, "garbage answer", 1, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cfg := Config{Policy: tc.policy}
			if tc.httpTO > 0 {
				cfg.HTTP = &http.Client{Timeout: tc.httpTO}
			}
			b := start(t, tc.api, cfg)
			b.Models(context.Background()) // model list first, outside the timing of the POSTs
			got, err := b.Translate(context.Background(), "hrob", "cs", "en")
			if tc.wantErr == "" {
				if err != nil || got != "grave" {
					t.Fatalf("Translate = %q, %v", got, err)
				}
			} else if err == nil || !strings.Contains(err.Error(), tc.wantErr) || !strings.Contains(err.Error(), "cs-en") {
				t.Fatalf("err = %v, want one naming cs-en and containing %q", err, tc.wantErr)
			}
			if n := tc.api.posts.Load(); n != tc.wantPosts {
				t.Errorf("server saw %d POSTs, want %d", n, tc.wantPosts)
			}
			if st := b.Transport().Stats(); st.Retries != tc.wantRetry {
				t.Errorf("retries counted = %d, want %d", st.Retries, tc.wantRetry)
			}
		})
	}
}

func TestModelsFallback(t *testing.T) {
	tests := []struct {
		name   string
		models string
		down   bool
	}{
		{"unreachable", "", true},
		{"404", "", false},
		{"garbage list", "<html>nope</html>", false},
		{"list without pairs", `{"_embedded":{"item":[]}}`, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var b *Backend
			f := &fakeAPI{models: tc.models}
			if tc.down {
				srv := httptest.NewServer(f)
				srv.Close()
				b = New(Config{BaseURL: srv.URL, Policy: transport.Policy{MaxRetries: 4, BackoffBase: time.Hour}})
			} else {
				b = start(t, f, Config{})
			}
			start := time.Now()
			pairs, src := b.Models(context.Background())
			if time.Since(start) > 5*time.Second {
				t.Errorf("fallback took %v (model list must not be retried)", time.Since(start))
			}
			if !strings.HasPrefix(src, "builtin (") || len(pairs) != 6 {
				t.Fatalf("Models = %v from %q, want the six built-in pairs", pairs, src)
			}
			for _, p := range pairs {
				if !strings.HasSuffix(p, "-en") {
					t.Errorf("built-in pair %s is not into English", p)
				}
			}
			if err := b.Supports(context.Background(), "cs", "en"); err != nil {
				t.Errorf("cs-en: %v", err)
			}
			if err := b.Supports(context.Background(), "hu", "en"); err == nil || !strings.Contains(err.Error(), "hu-en") {
				t.Errorf("hu-en: err = %v, want one naming the pair", err)
			}
		})
	}
}

func TestUnsupportedPairNoCall(t *testing.T) {
	f := &fakeAPI{models: `{"models":["cs-en"]}`}
	b := start(t, f, Config{})
	_, err := b.Translate(context.Background(), "Привет", "ru", "en")
	if err == nil || !strings.Contains(err.Error(), "ru-en") {
		t.Fatalf("err = %v, want one naming ru-en", err)
	}
	if f.posts.Load() != 0 {
		t.Errorf("an unsupported pair made %d translation calls (silent re-route?)", f.posts.Load())
	}
}

func TestConfigFromEnv(t *testing.T) {
	tests := []struct {
		name    string
		env     map[string]string
		wantURL string
		wantErr string
	}{
		{"default host", nil, DefaultBaseURL, ""},
		{"TRANSLATION_URL", map[string]string{"TRANSLATION_URL": "http://mt.local:9000/api/"}, "http://mt.local:9000/api", ""},
		{"alias", map[string]string{"MTAPI_BASE_URL": "http://alias:1"}, "http://alias:1", ""},
		{"TRANSLATION_URL wins over alias", map[string]string{"TRANSLATION_URL": "http://a:1", "MTAPI_BASE_URL": "http://b:2"}, "http://a:1", ""},
		// The original tool's name for a private instance (it was ignored,
		// and the text went to the public host).
		{"original's LINDAT_BASE_URL", map[string]string{"LINDAT_BASE_URL": "http://private:5000/api/v2"}, "http://private:5000/api/v2", ""},
		{"TRANSLATION_URL wins over LINDAT_BASE_URL", map[string]string{"TRANSLATION_URL": "http://a:1", "LINDAT_BASE_URL": "http://b:2"}, "http://a:1", ""},
		{"original's bad LINDAT_MAX_RETRIES", map[string]string{"LINDAT_MAX_RETRIES": "many"}, "", "MTAPI_MAX_RETRIES"},
		{"not a URL", map[string]string{"TRANSLATION_URL": "mt.local"}, "", "TRANSLATION_URL"},
		{"bad policy", map[string]string{"MTAPI_MAX_RETRIES": "many"}, "", "MTAPI_MAX_RETRIES"},
		// A site that refuses the public services: unset is an error
		// before anything is sent; a given address is used.
		{"public refused", map[string]string{"TRANSLATE_PUBLIC_SERVICES": "refuse"}, "", "TRANSLATION_URL is unset and TRANSLATE_PUBLIC_SERVICES=refuse"},
		{"public refused, address given", map[string]string{"TRANSLATE_PUBLIC_SERVICES": "Refuse", "TRANSLATION_URL": "http://mt.local:1"}, "http://mt.local:1", ""},
		{"public allowed", map[string]string{"TRANSLATE_PUBLIC_SERVICES": "allow"}, DefaultBaseURL, ""},
		{"public setting misspelt", map[string]string{"TRANSLATE_PUBLIC_SERVICES": "no"}, "", "TRANSLATE_PUBLIC_SERVICES"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cfg, err := ConfigFromEnv(func(k string) string { return tc.env[k] })
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want mention of %s", err, tc.wantErr)
				}
				return
			}
			if err != nil || cfg.BaseURL != tc.wantURL || cfg.Policy != DefaultPolicy {
				t.Fatalf("cfg = %+v, %v", cfg, err)
			}
		})
	}
}

// TestPairList: a refusal lists every pair of a small service, and of a
// large one the pairs into the target asked for and the count.
func TestPairList(t *testing.T) {
	few := []string{"cs-en", "de-en"}
	if got := pairList(few, "en"); got != "cs-en, de-en" {
		t.Errorf("few: %q", got)
	}
	var many []string
	for _, src := range []string{"ar", "bg", "cs", "da", "de", "el", "es", "et", "fi", "fr", "hu", "it", "lt", "lv", "nl", "pl", "pt", "ro", "sk", "sl", "sv", "uk"} {
		many = append(many, src+"-en", "en-"+src)
	}
	if got := pairList(many, "uk"); got != "44 pairs; into uk: en-uk" {
		t.Errorf("many into uk: %q", got)
	}
	if got := pairList(many, "en"); !strings.HasPrefix(got, "44 pairs; into en: ar-en, bg-en, ") || !strings.HasSuffix(got, ", ...") || strings.Count(got, ", ") != 12 {
		t.Errorf("many into en: %q", got)
	}
	if got := pairList(many, "xx"); !strings.HasPrefix(got, "44 pairs, none into xx: ar-en, en-ar, ") {
		t.Errorf("many into xx: %q", got)
	}
}

// TestCredentialsInURL: a base URL with Basic credentials
// (https://user:password@host/...) is shown with its password replaced,
// and its credentials are taken out of errors, here a 401 answer that
// echoes the Authorization header it was sent and the URL (they went
// into the log, the failures table and the run metadata); the error is
// still what it was (an HTTP error).
func TestCredentialsInURL(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		user, pass, _ := r.BasicAuth()
		if user != "bob" || pass != "PASSWORD99" {
			t.Errorf("credentials sent: %q %q", user, pass)
		}
		http.Error(w, "denied: "+r.Header.Get("Authorization")+" for bob:PASSWORD99 at "+r.URL.String()+" (PASSWORD99)", http.StatusUnauthorized)
	}))
	defer srv.Close()
	base := strings.Replace(srv.URL, "http://", "http://bob:PASSWORD99@", 1)
	b := New(Config{BaseURL: base, Policy: transport.Policy{MaxRetries: 0}})
	if got := b.BaseURL(); strings.Contains(got, "PASSWORD99") || !strings.Contains(got, "bob:xxxxx@") {
		t.Errorf("BaseURL() = %q, want the password replaced", got)
	}
	_, err := b.Translate(context.Background(), "hrob", "cs", "en")
	if err == nil {
		t.Fatal("a 401 translated")
	}
	for _, secret := range []string{"PASSWORD99", "Ym9iOlBBU1NXT1JEOTk="} {
		if strings.Contains(err.Error(), secret) {
			t.Errorf("the error shows %s: %v", secret, err)
		}
	}
	if !strings.Contains(err.Error(), "[credentials of TRANSLATION_URL]") || !strings.Contains(err.Error(), "HTTP 401") {
		t.Errorf("error %v, want the credentials named as such and the 401", err)
	}
	if _, source := b.Models(context.Background()); strings.Contains(source, "PASSWORD99") {
		t.Errorf("models source %q shows the password", source)
	}
}

// TestCheckURLSettings: a variable naming the API set but empty is an
// error naming it (the text went to the public service); two naming
// different addresses are said; one, or the same address twice, is not.
func TestCheckURLSettings(t *testing.T) {
	for _, tc := range []struct {
		env               map[string]string
		wantErr, wantNote string
	}{
		{map[string]string{}, "", ""},
		{map[string]string{"TRANSLATION_URL": "http://a:1"}, "", ""},
		{map[string]string{"TRANSLATION_URL": ""}, "TRANSLATION_URL is set but empty", ""},
		{map[string]string{"MTAPI_BASE_URL": " \n"}, "MTAPI_BASE_URL is set but empty", ""},
		{map[string]string{"TRANSLATION_URL": "http://a:1", "MTAPI_BASE_URL": "http://a:1/"}, "", ""},
		{map[string]string{"TRANSLATION_URL": "http://a:1", "MTAPI_BASE_URL": "http://b:2"}, "", "TRANSLATION_URL and MTAPI_BASE_URL name different translation APIs: TRANSLATION_URL is used"},
	} {
		note, err := CheckURLSettings(func(k string) (string, bool) { v, ok := tc.env[k]; return v, ok })
		if (tc.wantErr == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), tc.wantErr)) {
			t.Errorf("%v: err %v, want %q", tc.env, err, tc.wantErr)
		}
		if (tc.wantNote == "") != (note == "") || !strings.Contains(note, tc.wantNote) {
			t.Errorf("%v: note %q, want %q", tc.env, note, tc.wantNote)
		}
	}
}

// TestPublicHost: the host the notices name is DefaultBaseURL's.
func TestPublicHost(t *testing.T) {
	if u, err := url.Parse(DefaultBaseURL); err != nil || u.Host != publicHost {
		t.Errorf("DefaultBaseURL %s, publicHost %s", DefaultBaseURL, publicHost)
	}
}
