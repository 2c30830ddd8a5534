// Package chat is the translator's "chat_compatible" backend (spec 1, 4.6,
// 5, 8, 10): any API speaking the OpenAI-compatible chat-completions
// protocol.
//
//	POST {LLM_BASE_URL}/chat/completions
//	Authorization: Bearer {LLM_API_KEY}      (only when the key is set)
//	{"model": LLM_MODEL, "temperature": 0,
//	 "messages": [{"role": "system", "content": <instruction + glossary>},
//	              {"role": "user", "content": <text>}]}
//	200 {"choices": [{"message": {"content": "..."}, "finish_reason": "stop"}]}
//
// Text goes in chunks of at most 4,000 characters (internal/translate/chunker), one
// retried call per chunk under the LLM_* transport policy (internal/translate/transport:
// network errors, 429 and 5xx retried, Retry-After honoured, requests
// spaced). A reply cut by the token limit (finish_reason "length"), a
// refused or filtered reply, an answer that is not the protocol's JSON, and
// a reply failing the degeneracy guard (internal/translate/guard, LLM_GUARD_*) are errors,
// never translations. The API key is sent only in the Authorization header:
// it is never logged, never written and never part of an error message.
package chat

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"sort"
	"strconv"
	"strings"
	"time"

	"golang.org/x/text/language"
	"golang.org/x/text/language/display"

	"archivekit/internal/translate/backend"
	"archivekit/internal/translate/chunker"
	"archivekit/internal/translate/guard"
	"archivekit/internal/translate/transport"
)

// Name is the backend's configuration name.
const Name = "chat_compatible"

// DefaultPolicy is the LLM_* transport default: no spacing, 4 retries,
// 1 s backoff base (the same as the hosted API's).
var DefaultPolicy = transport.Policy{MinInterval: 0, MaxRetries: 4, BackoffBase: time.Second}

// DefaultLanguages are offered when LLM_LANGUAGES is unset: the twenty
// languages of spec 10.2.
var DefaultLanguages = []string{"bg", "cs", "de", "en", "es", "et", "fr", "hi", "hr", "hu", "it", "lt", "lv", "nl", "pl", "ro", "ru", "sk", "sl", "uk"}

// maxResponseBytes bounds one answer.
const maxResponseBytes = 4 << 20

// Config configures a Backend.
type Config struct {
	BaseURL string // LLM_BASE_URL, without trailing slash (required)
	Model   string // LLM_MODEL (required)
	APIKey  string // LLM_API_KEY; empty sends no Authorization header
	// Provider is LLM_PROVIDER, a label for the run metadata; empty means
	// the host of BaseURL.
	Provider string
	// Languages are the offered languages (LLM_LANGUAGES); empty means
	// DefaultLanguages. LanguagesFrom says which.
	Languages     []string
	LanguagesFrom string
	Guard         guard.Config     // LLM_GUARD_MIN_RATIO / LLM_GUARD_MAX_RATIO
	Policy        transport.Policy // LLM_MAX_RETRIES, LLM_BACKOFF_BASE_S, LLM_MIN_INTERVAL_S
	// MaxTokens, when > 0, is sent as max_tokens (LLM_MAX_TOKENS, added
	// beyond the spec); 0 leaves the server's limit.
	MaxTokens  int
	ChunkLimit int          // characters per call; < 1 means chunker.DefaultLimit
	HTTP       *http.Client // nil: a client with a Timeout of 300 s
}

// ErrNotConfigured is wrapped by ConfigFromEnv's error when LLM_BASE_URL or
// LLM_MODEL is missing.
var ErrNotConfigured = errors.New("chat_compatible is not configured")

// Variables are the LLM_ variables the backend and its sessions read
// (LLM_MAX_GLOSSARY_TERMS is the glossary's, internal/translate/vocab).
var Variables = []string{"LLM_BASE_URL", "LLM_MODEL", "LLM_API_KEY", "LLM_PROVIDER", "LLM_LANGUAGES", "LLM_MAX_TOKENS",
	"LLM_GUARD_MIN_RATIO", "LLM_GUARD_MAX_RATIO", "LLM_MIN_INTERVAL_S", "LLM_MAX_RETRIES", "LLM_BACKOFF_BASE_S", "LLM_MAX_GLOSSARY_TERMS"}

// ConfigFromEnv reads the LLM_* variables (getenv nil: the process
// environment). LLM_BASE_URL and LLM_MODEL are required; a bad value is an
// error naming the variable (and never quoting LLM_API_KEY).
func ConfigFromEnv(getenv func(string) string) (Config, error) {
	if getenv == nil {
		getenv = os.Getenv
	}
	get := func(k string) string { return strings.TrimSpace(getenv(k)) }
	c := Config{BaseURL: get("LLM_BASE_URL"), Model: get("LLM_MODEL"), APIKey: get("LLM_API_KEY"), Provider: get("LLM_PROVIDER")}
	var missing []string
	if c.BaseURL == "" {
		missing = append(missing, "LLM_BASE_URL (the API root, e.g. http://127.0.0.1:8080/v1)")
	}
	if c.Model == "" {
		missing = append(missing, "LLM_MODEL (the model name the API expects)")
	}
	if len(missing) > 0 {
		return c, fmt.Errorf("%w: set %s", ErrNotConfigured, strings.Join(missing, " and "))
	}
	u, err := url.Parse(c.BaseURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return c, fmt.Errorf("LLM_BASE_URL=%q: want an http(s) URL", c.BaseURL)
	}
	if u.User != nil {
		return c, errors.New("LLM_BASE_URL: credentials in the URL are refused; use LLM_API_KEY")
	}
	c.BaseURL = strings.TrimRight(c.BaseURL, "/")
	if c.Provider == "" {
		c.Provider = u.Host
	}
	c.LanguagesFrom = "LLM_LANGUAGES"
	for _, l := range strings.Split(get("LLM_LANGUAGES"), ",") {
		l = strings.ToLower(strings.TrimSpace(l))
		if l == "" {
			continue
		}
		if len(l) < 2 || len(l) > 3 || strings.Trim(l, "abcdefghijklmnopqrstuvwxyz") != "" {
			return c, fmt.Errorf("LLM_LANGUAGES: %q is not a language code (want ISO 639-1 codes separated by commas)", l)
		}
		c.Languages = append(c.Languages, l)
	}
	if len(c.Languages) == 0 {
		c.Languages, c.LanguagesFrom = DefaultLanguages, "default (the 20 languages of spec 10.2)"
	}
	if c.Guard, err = guard.FromEnv("LLM", getenv); err != nil {
		return c, err
	}
	if c.Policy, err = transport.FromEnv("LLM", DefaultPolicy, getenv); err != nil {
		return c, err
	}
	if s := get("LLM_MAX_TOKENS"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 {
			return c, fmt.Errorf("LLM_MAX_TOKENS=%q: want a positive whole number", s)
		}
		c.MaxTokens = n
	}
	return c, nil
}

// Backend is the chat_compatible backend; safe for concurrent use.
type Backend struct {
	cfg    Config
	langs  map[string]bool
	client *transport.Client
	// same refuses the replies of a service that answers every text
	// alike (a refusal, a notice served as a completion).
	same backend.SameReplies
}

var (
	_ backend.Backend  = (*Backend)(nil)
	_ backend.Glossary = (*Backend)(nil)
	_ backend.Retrier  = (*Backend)(nil)
)

// New returns a Backend for cfg. No request is made until first use.
func New(cfg Config) (*Backend, error) {
	if cfg.BaseURL == "" || cfg.Model == "" {
		return nil, fmt.Errorf("%w: base URL and model are required", ErrNotConfigured)
	}
	cfg.BaseURL = strings.TrimRight(cfg.BaseURL, "/")
	if cfg.ChunkLimit < 1 {
		cfg.ChunkLimit = chunker.DefaultLimit
	}
	if cfg.Guard == (guard.Config{}) {
		cfg.Guard = guard.Default
	}
	if len(cfg.Languages) == 0 {
		cfg.Languages = DefaultLanguages
	}
	hc := cfg.HTTP
	if hc == nil {
		hc = &http.Client{Timeout: 300 * time.Second}
	}
	b := &Backend{cfg: cfg, langs: map[string]bool{}, client: transport.New(cfg.Policy, hc)}
	// An API that is not there is reported at the first call, naming
	// the variable to check, instead of after the whole backoff.
	b.client.FailFast, b.client.Setting = true, "LLM_BASE_URL"
	for _, l := range cfg.Languages {
		b.langs[strings.ToLower(l)] = true
	}
	return b, nil
}

// Name returns "chat_compatible".
func (b *Backend) Name() string { return Name }

// Close drops the idle connections of the backend's HTTP client; the
// backend holds nothing else.
func (b *Backend) Close() error { return b.client.Close() }

// Transport gives access to the shared transport client (statistics, and
// the clock tests replace).
func (b *Backend) Transport() *transport.Client { return b.client }

// Info is what the run metadata records about the backend: never the key,
// only whether one is set.
func (b *Backend) Info() map[string]any {
	langs := append([]string(nil), b.cfg.Languages...)
	sort.Strings(langs)
	return map[string]any{
		"llm_base_url": b.cfg.BaseURL, "llm_model": b.cfg.Model, "llm_provider": b.cfg.Provider,
		"llm_api_key_set": b.cfg.APIKey != "", "llm_languages": langs, "llm_languages_from": b.cfg.LanguagesFrom,
		"llm_guard_min_ratio": b.cfg.Guard.MinRatio, "llm_guard_max_ratio": b.cfg.Guard.MaxRatio,
		"llm_max_retries": b.cfg.Policy.MaxRetries, "llm_backoff_base_s": b.cfg.Policy.BackoffBase.Seconds(),
		"llm_min_interval_s": b.cfg.Policy.MinInterval.Seconds(), "temperature": 0,
	}
}

// Supports checks both languages against the offered ones; a pair outside
// them is an error naming it.
func (b *Backend) Supports(_ context.Context, src, tgt string) error {
	src, tgt = strings.ToLower(src), strings.ToLower(tgt)
	if b.langs[src] && b.langs[tgt] && src != tgt {
		return nil
	}
	langs := append([]string(nil), b.cfg.Languages...)
	sort.Strings(langs)
	return fmt.Errorf("chat_compatible: language pair %s-%s is not offered (languages from %s: %s)",
		src, tgt, b.cfg.LanguagesFrom, strings.Join(langs, ", "))
}

// Translate translates text without a glossary.
func (b *Backend) Translate(ctx context.Context, text, src, tgt string) (string, error) {
	return b.TranslateWithGlossary(ctx, text, src, tgt, nil)
}

// Retry is the second attempt after a rejected reply: without the glossary.
func (b *Backend) Retry(ctx context.Context, text, src, tgt string) (string, error) {
	return b.TranslateWithGlossary(ctx, text, src, tgt, nil)
}

// TranslateWithGlossary translates text; each chunk's prompt carries the
// terms whose source occurs in that chunk (terms come longest first, at
// most LLM_MAX_GLOSSARY_TERMS, from vocab.Vocabulary.Glossary).
func (b *Backend) TranslateWithGlossary(ctx context.Context, text, src, tgt string, terms [][2]string) (string, error) {
	if err := b.Supports(ctx, src, tgt); err != nil {
		return "", err
	}
	src, tgt = strings.ToLower(src), strings.ToLower(tgt)
	out, err := chunker.Map(text, b.cfg.ChunkLimit, func(i int, core string) (string, error) {
		out, err := b.complete(ctx, SystemPrompt(src, tgt, termsIn(core, terms)), core)
		if err != nil {
			return "", fmt.Errorf("chat_compatible %s-%s chunk %d: %w", src, tgt, i+1, err)
		}
		// Code fences, a preamble or quotes around the reply are not part
		// of the translation.
		return backend.UnwrapReply(core, out), nil
	})
	if err != nil {
		return "", err
	}
	// Replies the guard rejects count too: a sign-in page is often
	// rejected as too short for a long text, and is no less one text
	// for everything.
	if err := b.same.Check(ctx, text, out); err != nil {
		return "", fmt.Errorf("chat_compatible %s-%s: %w", src, tgt, err)
	}
	if r := b.cfg.Guard.CheckLines(text, out, src, tgt); r != nil {
		return "", fmt.Errorf("chat_compatible %s-%s: %w", src, tgt, r)
	}
	return out, nil
}

// languageName is the English name of a language code for the prompt:
// backend.LanguageName's for the twenty languages of spec 10.2, CLDR's
// (golang.org/x/text/language/display) for any other ("el" is Greek, "he"
// Hebrew, "yue" Cantonese), the code itself for a code CLDR does not
// name.
func languageName(code string) string {
	if n := backend.LanguageName(code); n != code {
		return n
	}
	t, err := language.Parse(code)
	if err != nil {
		return code
	}
	if n := display.English.Tags().Name(t); n != "" {
		return n
	}
	return code
}

// termsIn keeps the terms whose source occurs in text (case-insensitive).
func termsIn(text string, terms [][2]string) [][2]string {
	low := strings.ToLower(text)
	var out [][2]string
	for _, t := range terms {
		if strings.Contains(low, strings.ToLower(t[0])) {
			out = append(out, t)
		}
	}
	return out
}

// SystemPrompt is the instruction for one chunk: written for OCR text and
// archival metadata, asking for a faithful, complete, line-preserving
// translation and nothing else, followed by the glossary as
// "source = target" lines.
func SystemPrompt(src, tgt string, terms [][2]string) string {
	s, t := languageName(src), languageName(tgt)
	var p strings.Builder
	fmt.Fprintf(&p, "You translate archival documents from %s into %s: OCR text of scanned pages and the fields of archaeological records.\n", s, t)
	p.WriteString("Rules:\n")
	p.WriteString("- Translate the whole user message faithfully and completely. Do not summarise, explain, comment or add anything.\n")
	p.WriteString("- Keep the line structure: the reply has exactly as many lines as the message, and line n of the reply translates line n of the message.\n")
	p.WriteString("- The text may contain OCR errors, hyphenated or broken words and abbreviations: translate what is there, do not correct or complete it.\n")
	p.WriteString("- Keep numbers, dates, measurements, reference codes, signatures and proper names as they are, unless a name has an established form in " + t + ".\n")
	p.WriteString("- A line that is only a number, a code or a name is copied unchanged.\n")
	p.WriteString("- Reply with the translation only: no quotation marks, no notes, no preamble.\n")
	if len(terms) > 0 {
		p.WriteString("Use exactly these translations of terms (source = target):\n")
		for _, tm := range terms {
			fmt.Fprintf(&p, "%s = %s\n", oneLine(tm[0]), oneLine(tm[1]))
		}
	}
	return p.String()
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

type message struct {
	Role    string `json:"role"`
	Content string `json:"content"`
}

type request struct {
	Model       string    `json:"model"`
	Messages    []message `json:"messages"`
	Temperature float64   `json:"temperature"`
	MaxTokens   int       `json:"max_tokens,omitempty"`
	Stream      bool      `json:"stream"`
}

type response struct {
	Choices []struct {
		Message *struct {
			Content *string `json:"content"`
			Refusal *string `json:"refusal"`
		} `json:"message"`
		FinishReason *string `json:"finish_reason"`
	} `json:"choices"`
	Error *apiError `json:"error"`
}

type apiError struct {
	Message string `json:"message"`
	Type    string `json:"type"`
	Code    any    `json:"code"`
}

// complete sends one chat completion and returns the reply's text.
func (b *Backend) complete(ctx context.Context, system, user string) (string, error) {
	out, err := b.exchange(ctx, system, user)
	var te *transport.Error
	if err != nil && ctx.Err() == nil && !errors.As(err, &te) {
		// The service answered, with a refusal or no translation.
		err = backend.Failed(err)
	}
	return out, err
}

// exchange is complete's request and the reading of its answer.
func (b *Backend) exchange(ctx context.Context, system, user string) (string, error) {
	body, err := json.Marshal(request{Model: b.cfg.Model, Temperature: 0, MaxTokens: b.cfg.MaxTokens,
		Messages: []message{{"system", system}, {"user", user}}})
	if err != nil {
		return "", err
	}
	u := b.cfg.BaseURL + "/chat/completions"
	resp, raw, err := b.client.DoRead(ctx, maxResponseBytes, func(ctx context.Context) (*http.Request, error) {
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, u, bytes.NewReader(body))
		if err != nil {
			return nil, err
		}
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json")
		if b.cfg.APIKey != "" {
			req.Header.Set("Authorization", "Bearer "+b.cfg.APIKey)
		}
		return req, nil
	})
	if err != nil {
		return "", b.redact(err)
	}
	if len(raw) > maxResponseBytes {
		return "", fmt.Errorf("answer larger than %d bytes", maxResponseBytes)
	}
	if resp.StatusCode != http.StatusOK {
		msg := b.redactString(apiMessage(raw))
		switch resp.StatusCode {
		case http.StatusUnauthorized, http.StatusForbidden:
			hint := "LLM_API_KEY is not set"
			if b.cfg.APIKey != "" {
				hint = "LLM_API_KEY was refused"
			}
			return "", transport.RefusedError("POST "+u, resp.StatusCode, msg, hint)
		case http.StatusNotFound:
			return "", fmt.Errorf("POST %s: HTTP 404 (is LLM_BASE_URL the API root, and LLM_MODEL=%q served there?): %s", u, b.cfg.Model, msg)
		}
		return "", fmt.Errorf("POST %s: HTTP %d: %s", u, resp.StatusCode, msg)
	}
	return parseReply(raw)
}

// parseReply reads the first choice of a chat-completions answer.
func parseReply(raw []byte) (string, error) {
	var r response
	if err := json.Unmarshal(raw, &r); err != nil {
		return "", fmt.Errorf("answer is not chat-completions JSON: %v: %s", err, transport.Snippet(string(raw)))
	}
	if r.Error != nil {
		return "", fmt.Errorf("API error: %s", r.Error.Message)
	}
	if len(r.Choices) == 0 {
		return "", fmt.Errorf("answer has no choices: %s", transport.Snippet(string(raw)))
	}
	c := r.Choices[0]
	if c.FinishReason != nil {
		switch *c.FinishReason {
		case "length":
			return "", errors.New("reply cut by the token limit (finish_reason=length); the text is not translated")
		case "content_filter":
			return "", errors.New("reply withheld by the provider's content filter (finish_reason=content_filter)")
		}
	}
	if c.Message == nil || c.Message.Content == nil {
		if c.Message != nil && c.Message.Refusal != nil {
			return "", fmt.Errorf("the model refused: %s", transport.Snippet(*c.Message.Refusal))
		}
		return "", fmt.Errorf("answer has no message content: %s", transport.Snippet(string(raw)))
	}
	return strings.TrimSpace(*c.Message.Content), nil
}

// apiMessage extracts {"error":{"message":...}} (or {"error":"..."},
// {"detail":...}) from an error answer, else a snippet of the body.
func apiMessage(raw []byte) string {
	var e struct {
		Error  json.RawMessage `json:"error"`
		Detail any             `json:"detail"`
	}
	if json.Unmarshal(raw, &e) == nil {
		var ae apiError
		var s string
		switch {
		case len(e.Error) > 0 && json.Unmarshal(e.Error, &ae) == nil && ae.Message != "":
			return transport.Snippet(ae.Message)
		case len(e.Error) > 0 && json.Unmarshal(e.Error, &s) == nil && s != "":
			return transport.Snippet(s)
		case e.Detail != nil:
			return transport.Snippet(fmt.Sprint(e.Detail))
		}
	}
	return transport.Snippet(string(raw))
}

// redact removes the API key from an error (a server echoing the header).
func (b *Backend) redact(err error) error { return transport.RedactError(err, b.redactString) }

// redactString replaces the key in s where it stands as a token of its
// own (transport.RedactToken).
func (b *Backend) redactString(s string) string {
	return transport.RedactToken(s, b.cfg.APIKey, "[LLM_API_KEY]")
}

// Probe checks once, without retries, that the API answers at LLM_BASE_URL
// (GET {base}/models, which OpenAI-compatible servers offer) and accepts
// the key: a network error, a 401 or 403, or a 5xx is an error; any other
// answer, a 404 from a server without a model list included, counts as
// reachable. The service's deep health check reports a failed probe.
func (b *Backend) Probe(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	u := b.cfg.BaseURL + "/models"
	resp, err := b.client.DoRetries(ctx, 0, func(ctx context.Context) (*http.Request, error) {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
		if err == nil && b.cfg.APIKey != "" {
			req.Header.Set("Authorization", "Bearer "+b.cfg.APIKey)
		}
		return req, err
	})
	if err != nil {
		return b.redact(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	switch resp.StatusCode {
	case http.StatusUnauthorized, http.StatusForbidden:
		hint := "LLM_API_KEY is not set"
		if b.cfg.APIKey != "" {
			hint = "LLM_API_KEY was refused"
		}
		return fmt.Errorf("GET %s: HTTP %d (%s): %s", u, resp.StatusCode, hint, b.redactString(apiMessage(raw)))
	}
	return nil
}
