package chat

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"archivekit/internal/translate/chat/chattest"
	"archivekit/internal/translate/guard"
	"archivekit/internal/translate/transport"
)

func env(m map[string]string) func(string) string { return func(k string) string { return m[k] } }

// start returns a backend talking to srv whose sleeps are recorded, not slept.
func start(t *testing.T, srv *chattest.Server, vars map[string]string) (*Backend, *[]time.Duration) {
	t.Helper()
	t.Cleanup(srv.Close)
	all := map[string]string{"LLM_BASE_URL": srv.BaseURL() + "/", "LLM_MODEL": "test-model"}
	for k, v := range vars {
		all[k] = v
	}
	cfg, err := ConfigFromEnv(env(all))
	if err != nil {
		t.Fatal(err)
	}
	b, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	var sleeps []time.Duration
	b.Transport().Sleep = func(ctx context.Context, d time.Duration) error { sleeps = append(sleeps, d); return ctx.Err() }
	b.Transport().Jitter = func(time.Duration) time.Duration { return 0 }
	return b, &sleeps
}

func TestConfigFromEnv(t *testing.T) {
	_, err := ConfigFromEnv(env(map[string]string{}))
	if !errors.Is(err, ErrNotConfigured) || !strings.Contains(err.Error(), "LLM_BASE_URL") || !strings.Contains(err.Error(), "LLM_MODEL") {
		t.Fatalf("missing both: %v", err)
	}
	_, err = ConfigFromEnv(env(map[string]string{"LLM_BASE_URL": "http://127.0.0.1:1/v1"}))
	if !errors.Is(err, ErrNotConfigured) || strings.Contains(err.Error(), "LLM_BASE_URL (") {
		t.Fatalf("missing model only: %v", err)
	}
	for _, tt := range []struct {
		vars map[string]string
		want string
	}{
		{map[string]string{"LLM_BASE_URL": "ftp://x", "LLM_MODEL": "m"}, "LLM_BASE_URL"},
		{map[string]string{"LLM_BASE_URL": "http://u:secret@h/v1", "LLM_MODEL": "m"}, "credentials"},
		{map[string]string{"LLM_BASE_URL": "http://h/v1", "LLM_MODEL": "m", "LLM_LANGUAGES": "cs,english"}, "LLM_LANGUAGES"},
		{map[string]string{"LLM_BASE_URL": "http://h/v1", "LLM_MODEL": "m", "LLM_GUARD_MIN_RATIO": "5"}, "LLM_GUARD_MIN_RATIO"},
		{map[string]string{"LLM_BASE_URL": "http://h/v1", "LLM_MODEL": "m", "LLM_MAX_RETRIES": "-1"}, "LLM_MAX_RETRIES"},
		{map[string]string{"LLM_BASE_URL": "http://h/v1", "LLM_MODEL": "m", "LLM_BACKOFF_BASE_S": "x"}, "LLM_BACKOFF_BASE_S"},
	} {
		if _, err := ConfigFromEnv(env(tt.vars)); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%v: want an error naming %s, got %v", tt.vars, tt.want, err)
		}
	}
	c, err := ConfigFromEnv(env(map[string]string{"LLM_BASE_URL": "http://h:9/v1/", "LLM_MODEL": "m",
		"LLM_LANGUAGES": " CS, en ", "LLM_MAX_RETRIES": "2", "LLM_MIN_INTERVAL_S": "0.5", "LLM_API_KEY": "sk-secret"}))
	if err != nil {
		t.Fatal(err)
	}
	if c.BaseURL != "http://h:9/v1" || c.Provider != "h:9" || strings.Join(c.Languages, ",") != "cs,en" ||
		c.Policy.MaxRetries != 2 || c.Policy.MinInterval != 500*time.Millisecond || c.Guard != guard.Default {
		t.Fatalf("config %+v", c)
	}
	b, _ := New(c)
	for k, v := range b.Info() {
		if strings.Contains(fmt.Sprint(k, v), "sk-secret") {
			t.Fatalf("run metadata carries the key: %s=%v", k, v)
		}
	}
}

func TestTranslateRequestShape(t *testing.T) {
	srv := chattest.New(chattest.Config{Key: "sk-test"})
	b, _ := start(t, srv, map[string]string{"LLM_API_KEY": "sk-test"})
	got, err := b.TranslateWithGlossary(context.Background(), "Hrob a jáma\nsonda kulturní vrstva", "cs", "en",
		[][2]string{{"kulturní vrstva", "cultural layer"}, {"hrob", "grave"}, {"mohyla", "barrow"}})
	if err != nil {
		t.Fatal(err)
	}
	if got != "grave and pit\ntrench cultural layer" {
		t.Fatalf("translation %q", got)
	}
	reqs := srv.Requests()
	if len(reqs) != 1 {
		t.Fatalf("%d requests", len(reqs))
	}
	r := reqs[0]
	if r.Model != "test-model" || r.Temperature == nil || *r.Temperature != 0 || r.Auth != "Bearer sk-test" {
		t.Fatalf("request %+v", r)
	}
	if r.User != "Hrob a jáma\nsonda kulturní vrstva" {
		t.Fatalf("user message %q", r.User)
	}
	for _, want := range []string{"from Czech into English", "OCR", "exactly as many lines", "kulturní vrstva = cultural layer\nhrob = grave\n"} {
		if !strings.Contains(r.System, want) {
			t.Errorf("system prompt lacks %q:\n%s", want, r.System)
		}
	}
	if strings.Contains(r.System, "mohyla") {
		t.Error("a term absent from the text was sent")
	}
}

func TestNoKeyNoHeader(t *testing.T) {
	srv := chattest.New(chattest.Config{})
	b, _ := start(t, srv, nil)
	if _, err := b.Translate(context.Background(), "hrob", "cs", "en"); err != nil {
		t.Fatal(err)
	}
	if a := srv.Requests()[0].Auth; a != "" {
		t.Fatalf("Authorization %q sent without LLM_API_KEY", a)
	}
}

func TestErrorShapes(t *testing.T) {
	ctx := context.Background()
	t.Run("401 names the variable, never the key", func(t *testing.T) {
		srv := chattest.New(chattest.Config{Key: "right"})
		b, _ := start(t, srv, map[string]string{"LLM_API_KEY": "sk-wrong-key"})
		_, err := b.Translate(ctx, "hrob", "cs", "en")
		if err == nil || !strings.Contains(err.Error(), "401") || !strings.Contains(err.Error(), "LLM_API_KEY was refused") ||
			strings.Contains(err.Error(), "sk-wrong-key") {
			t.Fatalf("err %v", err)
		}
		if srv.Posts.Load() != 1 {
			t.Fatalf("401 retried: %d posts", srv.Posts.Load())
		}
	})
	t.Run("429 with Retry-After then success", func(t *testing.T) {
		srv := chattest.New(chattest.Config{Fail: []int{429, 429}, RetryAfter: "7"})
		b, sleeps := start(t, srv, map[string]string{"LLM_BACKOFF_BASE_S": "0.5"})
		got, err := b.Translate(ctx, "hrob", "cs", "en")
		if err != nil || got != "grave" {
			t.Fatalf("%q %v", got, err)
		}
		if len(*sleeps) != 2 || (*sleeps)[0] != 7*time.Second || (*sleeps)[1] != 7*time.Second {
			t.Fatalf("sleeps %v, want Retry-After 7 s twice", *sleeps)
		}
	})
	t.Run("500 until retries run out", func(t *testing.T) {
		srv := chattest.New(chattest.Config{Fail: []int{500, 500, 500}})
		b, sleeps := start(t, srv, map[string]string{"LLM_MAX_RETRIES": "2", "LLM_BACKOFF_BASE_S": "1"})
		_, err := b.Translate(ctx, "hrob", "cs", "en")
		if !transport.IsTransportError(err) || srv.Posts.Load() != 3 {
			t.Fatalf("err %v after %d posts", err, srv.Posts.Load())
		}
		if len(*sleeps) != 2 || (*sleeps)[0] != time.Second || (*sleeps)[1] != 2*time.Second {
			t.Fatalf("backoff %v, want 1 s then 2 s", *sleeps)
		}
	})
	for _, tt := range []struct {
		name string
		raw  string
		want string
	}{
		{"malformed JSON", `{"choices": [`, "not chat-completions JSON"},
		{"HTML", `<html>gateway</html>`, "not chat-completions JSON"},
		{"missing choices", `{"id": "x", "object": "chat.completion"}`, "no choices"},
		{"empty choices", `{"choices": []}`, "no choices"},
		{"null content", `{"choices": [{"message": {"role": "assistant", "content": null}, "finish_reason": "stop"}]}`, "no message content"},
		{"refusal", `{"choices": [{"message": {"role": "assistant", "content": null, "refusal": "no"}, "finish_reason": "stop"}]}`, "refused"},
		{"cut by the token limit", `{"choices": [{"message": {"content": "grave and"}, "finish_reason": "length"}]}`, "finish_reason=length"},
		{"error object with 200", `{"error": {"message": "model overloaded"}}`, "model overloaded"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			srv := chattest.New(chattest.Config{Raw: func(int) string { return tt.raw }})
			b, _ := start(t, srv, nil)
			got, err := b.Translate(ctx, "hrob a jáma", "cs", "en")
			if err == nil || !strings.Contains(err.Error(), tt.want) || got != "" {
				t.Fatalf("got %q, err %v; want an error containing %q", got, err, tt.want)
			}
		})
	}
	t.Run("404 names the settings", func(t *testing.T) {
		srv := chattest.New(chattest.Config{})
		t.Cleanup(srv.Close)
		b, err := New(Config{BaseURL: srv.URL + "/wrong", Model: "m"})
		if err != nil {
			t.Fatal(err)
		}
		_, err = b.Translate(ctx, "hrob", "cs", "en")
		if err == nil || !strings.Contains(err.Error(), "LLM_BASE_URL") {
			t.Fatalf("err %v", err)
		}
	})
}

func TestLanguages(t *testing.T) {
	srv := chattest.New(chattest.Config{})
	b, _ := start(t, srv, map[string]string{"LLM_LANGUAGES": "cs,en"})
	err := b.Supports(context.Background(), "de", "en")
	if err == nil || !strings.Contains(err.Error(), "de-en") || !strings.Contains(err.Error(), "cs, en") {
		t.Fatalf("err %v", err)
	}
	if _, err := b.Translate(context.Background(), "Grab", "de", "en"); err == nil || srv.Posts.Load() != 0 {
		t.Fatalf("unsupported pair sent: %v, %d posts", err, srv.Posts.Load())
	}
}

func TestGuardAndChunks(t *testing.T) {
	ctx := context.Background()
	srv := chattest.New(chattest.Config{Reply: func(n int, _, user string) string { return strings.Repeat("grave ", 150) }})
	b, _ := start(t, srv, nil)
	_, err := b.Translate(ctx, "hrob", "cs", "en")
	if guard.AsRejection(err) == nil {
		t.Fatalf("150 repeated words accepted: %v", err)
	}
	// A long text goes in chunks of at most 4,000 characters, whitespace kept.
	srv2 := chattest.New(chattest.Config{})
	b2, _ := start(t, srv2, nil)
	text := strings.Repeat("Hrob a jáma v sondě. ", 500) + "\n"
	got, err := b2.Translate(ctx, text, "cs", "en")
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range srv2.Requests() {
		if n := len([]rune(r.User)); n > 4000 {
			t.Fatalf("chunk of %d characters", n)
		}
	}
	if len(srv2.Requests()) < 3 || !strings.HasSuffix(got, "\n") || !strings.HasPrefix(got, "grave and pit in") {
		t.Fatalf("%d requests, output starts %q", len(srv2.Requests()), got[:40])
	}
}

func TestProbe(t *testing.T) {
	ctx := context.Background()
	srv := chattest.New(chattest.Config{Key: "sk-right"})
	good, _ := start(t, srv, map[string]string{"LLM_API_KEY": "sk-right"})
	if err := good.Probe(ctx); err != nil {
		t.Fatalf("good key: %v", err)
	}
	bad, _ := start(t, srv, map[string]string{"LLM_API_KEY": "sk-wrong"})
	if err := bad.Probe(ctx); err == nil || !strings.Contains(err.Error(), "LLM_API_KEY was refused") || strings.Contains(err.Error(), "sk-wrong") {
		t.Fatalf("wrong key: %v", err)
	}
	none, _ := start(t, srv, nil)
	if err := none.Probe(ctx); err == nil || !strings.Contains(err.Error(), "LLM_API_KEY is not set") {
		t.Fatalf("no key: %v", err)
	}
	gone := chattest.New(chattest.Config{})
	down, _ := start(t, gone, nil)
	gone.Close()
	if err := down.Probe(ctx); err == nil {
		t.Fatal("closed server reachable")
	}
	if srv.Posts.Load() != 0 {
		t.Fatal("the probe translated something")
	}
}

// TestWrappedRepliesUnwrapped: a model that fences, introduces or quotes its
// translation although told not to gets only the translation written; before,
// "```" lines, "Here is the translation:" and quotes went into the document
// and the log as translated text with status ok.
func TestWrappedRepliesUnwrapped(t *testing.T) {
	wraps := map[string]func(string) string{
		"fence":    func(s string) string { return "```\n" + s + "\n```" },
		"preamble": func(s string) string { return "Here is the translation:\n\n" + s },
		"quotes":   func(s string) string { return "\u201c" + s + "\u201d" },
		"think":    func(s string) string { return "<think>Czech to English.</think>\n" + s },
	}
	for name, wrap := range wraps {
		srv := chattest.New(chattest.Config{Reply: func(n int, _, user string) string {
			return wrap(strings.ToUpper(user))
		}})
		b, _ := start(t, srv, nil)
		got, err := b.Translate(context.Background(), "hrob a jáma\nsonda", "cs", "en")
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if got != "HROB A JÁMA\nSONDA" {
			t.Errorf("%s: got %q", name, got)
		}
	}
}

// The key is cut out of messages where it stands as a token of its own,
// never out of ordinary words: with the key "k", a provider's "bad key"
// read "bad [LLM_API_KEY]ey", which also told the key's letter.
func TestRedactKey(t *testing.T) {
	for _, tc := range []struct{ key, in, want string }{
		{"sk-secret", "Incorrect API key provided: sk-secret.", "Incorrect API key provided: [LLM_API_KEY]."},
		{"sk-secret", `{"key":"sk-secret"} and Bearer sk-secret`, `{"key":"[LLM_API_KEY]"} and Bearer [LLM_API_KEY]`},
		{"k", "bad key k", "bad key [LLM_API_KEY]"},
		{"k", "bad key", "bad key"},
		{"abc", "xabc abcx abc", "xabc abcx [LLM_API_KEY]"},
		{"", "nothing to cut", "nothing to cut"},
	} {
		b := &Backend{cfg: Config{APIKey: tc.key}}
		if got := b.redactString(tc.in); got != tc.want {
			t.Errorf("key %q: %q gives %q, want %q", tc.key, tc.in, got, tc.want)
		}
	}
}
