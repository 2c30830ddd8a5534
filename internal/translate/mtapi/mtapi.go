// Package mtapi is the hosted machine-translation API backend ("mtapi",
// spec 10.1). Its protocol follows the public LINDAT translation API v2:
//
//	GET  {base}/models           the model list (JSON, see parseModels)
//	POST {base}/models/{src}-{tgt}?src={src}&tgt={tgt}
//	     form field input_text   the text; Accept: text/plain
//	     200 text/plain          the translation, line breaks kept
//
// Text is sent in chunks of at most chunker.DefaultLimit characters, one
// retried call per chunk, under the transport policy of the MTAPI_*
// environment variables.
package mtapi

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
	"os"
	"regexp"
	"sort"
	"strings"
	"sync"
	"time"
	"unicode"
	"unicode/utf8"

	"archivekit/internal/translate/backend"
	"archivekit/internal/translate/chunker"
	"archivekit/internal/translate/guard"
	"archivekit/internal/translate/transport"
)

// Name is the backend's configuration name.
const Name = "mtapi"

// DefaultBaseURL is the public host of the hosted API, used when neither
// TRANSLATION_URL nor MTAPI_BASE_URL is set.
const DefaultBaseURL = "https://lindat.mff.cuni.cz/services/translation/api/v2"

// publicHost is DefaultBaseURL's host, as the notices and refusals name it.
const publicHost = "lindat.mff.cuni.cz"

// DefaultPolicy is the spec's MTAPI_* defaults: 0.0 s spacing, 4 retries,
// 1.0 s backoff base.
var DefaultPolicy = transport.Policy{MinInterval: 0, MaxRetries: 4, BackoffBase: time.Second}

// BuiltinPairs is the model list used when GET {base}/models cannot be
// read: six Czech-centric pairs into English (Czech and its neighbours'
// languages, plus French).
var BuiltinPairs = []string{"cs-en", "sk-en", "pl-en", "de-en", "uk-en", "fr-en"}

// maxResponseBytes bounds one answer; a chunk of 4,000 characters never
// legitimately translates into more.
const maxResponseBytes = 1 << 20

// Config configures a Backend.
type Config struct {
	BaseURL    string           // without trailing slash
	Policy     transport.Policy // retry and spacing policy
	ChunkLimit int              // characters per call; < 1 means chunker.DefaultLimit
	HTTP       *http.Client     // nil: a client with a 120 s timeout
	// Guard rejects degenerate replies (MTAPI_GUARD_MIN_RATIO /
	// MTAPI_GUARD_MAX_RATIO, added beyond the spec; zero means
	// guard.Default, 0.25 to 4.0).
	Guard guard.Config
	// ModelsTimeout bounds the single model-list request; 0 means 10 s.
	ModelsTimeout time.Duration
	// Setting names the variable BaseURL came from (TRANSLATION_URL or
	// MTAPI_BASE_URL); "" means TRANSLATION_URL. An unreachable API is
	// reported with it.
	Setting string
}

// ConfigFromEnv builds a Config from TRANSLATION_URL (aliases MTAPI_BASE_URL
// and the original tool's LINDAT_BASE_URL, in that order when several are
// set) and MTAPI_MIN_INTERVAL_S, MTAPI_MAX_RETRIES, MTAPI_BACKOFF_BASE_S
// (or the original's LINDAT_ ones). getenv nil means os.Getenv.
func ConfigFromEnv(getenv func(string) string) (Config, error) {
	if getenv == nil {
		getenv = os.Getenv
	}
	setting := "TRANSLATION_URL"
	base := strings.TrimSpace(getenv(setting))
	// The aliases, in order: this project's MTAPI_BASE_URL and the
	// original tool's LINDAT_BASE_URL (a user's private instance named so
	// was ignored and the text went to the public host).
	for _, alias := range URLSettings[1:] {
		if base == "" && strings.TrimSpace(getenv(alias)) != "" {
			setting = alias
			base = strings.TrimSpace(getenv(setting))
		}
	}
	if base == "" {
		refused, err := transport.PublicRefused(getenv)
		if err != nil {
			return Config{}, err
		}
		if refused {
			return Config{}, fmt.Errorf("TRANSLATION_URL is unset and %s=refuse: give the address of your translation service (the public one at %s is refused)",
				transport.EnvPublicServices, publicHost)
		}
		base = DefaultBaseURL
	}
	u, err := url.Parse(base)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return Config{}, fmt.Errorf("%s=%q: want an http(s) URL", setting, base)
	}
	// The original tool's LINDAT_MIN_INTERVAL_S, LINDAT_MAX_RETRIES and
	// LINDAT_BACKOFF_BASE_S stand for the MTAPI_ ones left unset.
	policyEnv := func(k string) string {
		if v := getenv(k); v != "" || !strings.HasPrefix(k, "MTAPI_") {
			return v
		}
		return getenv("LINDAT_" + strings.TrimPrefix(k, "MTAPI_"))
	}
	p, err := transport.FromEnv("MTAPI", DefaultPolicy, policyEnv)
	if err != nil {
		return Config{}, err
	}
	g, err := guard.FromEnv("MTAPI", getenv)
	if err != nil {
		return Config{}, err
	}
	return Config{BaseURL: strings.TrimRight(base, "/"), Policy: p, Guard: g, Setting: setting}, nil
}

// Variables are the MTAPI_ variables the backend reads (besides
// TRANSLATION_URL and the original tool's LINDAT_ names).
var Variables = []string{"MTAPI_BASE_URL", "MTAPI_MIN_INTERVAL_S", "MTAPI_MAX_RETRIES", "MTAPI_BACKOFF_BASE_S",
	"MTAPI_GUARD_MIN_RATIO", "MTAPI_GUARD_MAX_RATIO"}

// URLSettings are the variables that name the API, in the order
// ConfigFromEnv takes them: TRANSLATION_URL, then its aliases.
var URLSettings = []string{"TRANSLATION_URL", "MTAPI_BASE_URL", "LINDAT_BASE_URL"}

// CheckURLSettings checks what lookup (os.LookupEnv, or a service's
// lookup) gives for the variables that name the API: one set but empty
// (TRANSLATION_URL=$(cat a-missing-file)) is an error, for it sent the
// documents to the public hosted service as if it were unset; and when
// two of them name different addresses, note says which one is used.
func CheckURLSettings(lookup func(string) (string, bool)) (note string, err error) {
	var used, usedVal string
	for _, k := range URLSettings {
		v, ok := lookup(k)
		if !ok {
			continue
		}
		v = strings.TrimSpace(v)
		if v == "" {
			return "", fmt.Errorf("%s is set but empty: give the translation API's address (http(s)://...), or unset it to send the text to the public hosted service at %s",
				k, publicHost)
		}
		switch {
		case used == "":
			used, usedVal = k, v
		case note == "" && strings.TrimRight(v, "/") != strings.TrimRight(usedVal, "/"):
			note = fmt.Sprintf("%s and %s name different translation APIs: %s is used, %s is not", used, k, used, k)
		}
	}
	return note, nil
}

// Backend is the mtapi backend. It is safe for concurrent use; the
// transport policy (spacing in particular) is shared by all callers.
type Backend struct {
	cfg    Config
	client *transport.Client

	modelsOnce   sync.Once
	pairs        map[string]bool
	modelsSource string
	// same refuses the replies of a service that answers every text
	// alike (a sign-in page or a notice served as text).
	same backend.SameReplies
	// shown is BaseURL with its password, if any, replaced (what logs and
	// run metadata show); secrets are the URL's password and its Basic
	// credentials, each with what stands for it in error messages.
	shown   string
	secrets [][2]string
}

var _ backend.Backend = (*Backend)(nil)

// New returns a Backend for cfg. No request is made until first use.
func New(cfg Config) *Backend {
	cfg.BaseURL = strings.TrimRight(cfg.BaseURL, "/")
	if cfg.ChunkLimit < 1 {
		cfg.ChunkLimit = chunker.DefaultLimit
	}
	if cfg.Guard == (guard.Config{}) {
		cfg.Guard = guard.Default
	}
	if cfg.ModelsTimeout <= 0 {
		cfg.ModelsTimeout = 10 * time.Second
	}
	hc := cfg.HTTP
	if hc == nil {
		hc = &http.Client{Timeout: 120 * time.Second}
	}
	b := &Backend{cfg: cfg, client: transport.New(cfg.Policy, hc), shown: cfg.BaseURL}
	// An API that is not there (connection refused, unknown host) is
	// reported at the first call, naming the variable to check, instead
	// of after MTAPI_MAX_RETRIES backoffs per chunk.
	b.client.FailFast = true
	b.client.Setting = cfg.Setting
	if b.client.Setting == "" {
		b.client.Setting = "TRANSLATION_URL"
	}
	b.setSecrets()
	return b
}

// Transport gives access to the shared transport client, whose Stats feed
// the WARNING summary and whose clock tests may replace.
func (b *Backend) Transport() *transport.Client { return b.client }

// Close drops the idle connections of the backend's HTTP client; the
// backend holds nothing else.
func (b *Backend) Close() error { return b.client.Close() }

// Name returns "mtapi".
func (b *Backend) Name() string { return Name }

// MinInterval implements backend.Spaced: the configured request spacing
// (MTAPI_MIN_INTERVAL_S).
func (b *Backend) MinInterval() time.Duration { return b.client.Policy.MinInterval }

// Placeholders implements backend.Placeholders: the API copies
// placeholders, and single-word terms are matched by lemma.
func (b *Backend) Placeholders() (backend.Protection, bool) {
	return backend.Protection{Lemmas: true}, true
}

// BaseURL returns the API base URL in use (for logs and the run
// metadata), its password, if any, replaced by "xxxxx".
func (b *Backend) BaseURL() string { return b.shown }

// setSecrets notes the credentials of a base URL that has them
// (https://user:password@host/...: the API's Basic authentication), so
// that they are shown nowhere: in the URL logs and run metadata show, nor
// in errors (a server echoing the Authorization header it was sent), nor
// in the ledger's key.
func (b *Backend) setSecrets() {
	u, err := url.Parse(b.cfg.BaseURL)
	if err != nil || u.User == nil {
		return
	}
	b.shown = u.Redacted()
	setting := b.client.Setting
	pass, hasPass := u.User.Password()
	basic := base64.StdEncoding.EncodeToString([]byte(u.User.String()))
	if raw, err := url.PathUnescape(u.User.String()); err == nil {
		basic = base64.StdEncoding.EncodeToString([]byte(raw))
	}
	b.secrets = append(b.secrets, [2]string{basic, "[credentials of " + setting + "]"})
	if hasPass && pass != "" {
		b.secrets = append(b.secrets, [2]string{u.User.String(), "[credentials of " + setting + "]"}, [2]string{pass, "[password of " + setting + "]"})
	}
}

// refusedHint is what to check when the service refuses this program
// (401, 403). It has no URL: a service's answer hides URLs ("<internal
// service>"), and the hint read "credentials, <internal service> in
// TRANSLATION_URL?".
func (b *Backend) refusedHint() string {
	if strings.Contains(b.cfg.BaseURL, "@") {
		return "are the credentials in " + b.client.Setting + " right?"
	}
	return "does the service need credentials? give them in " + b.client.Setting + " as user:password@ before its host"
}

// redact takes the base URL's credentials out of s (setSecrets).
func (b *Backend) redact(s string) string {
	for _, sec := range b.secrets {
		s = transport.RedactToken(s, sec[0], sec[1])
	}
	return s
}

// HostedNotice is the one-line notice a command gives when the backend
// sends text to the public hosted API because TRANSLATION_URL (and its
// alias) is unset, the spec's default; "" for any other address.
func (b *Backend) HostedNotice() string {
	if b.cfg.BaseURL != strings.TrimRight(DefaultBaseURL, "/") {
		return ""
	}
	return fmt.Sprintf("document text is sent to the public hosted translation service at %s (TRANSLATION_URL is unset, the default): set TRANSLATION_URL to a self-hosted service to keep it in house", publicHost)
}

// Models returns the offered "<src>-<tgt>" pairs, sorted, and where they
// came from: "api" or "builtin (<reason>)". The list is read once, with a
// single attempt (no retries) so an unreachable API falls back quickly.
func (b *Backend) Models(ctx context.Context) (pairs []string, source string) {
	b.modelsOnce.Do(func() { b.loadModels(ctx) })
	for p := range b.pairs {
		pairs = append(pairs, p)
	}
	sort.Strings(pairs)
	return pairs, b.modelsSource
}

// Probe asks the service for its model list now (one attempt, within the
// models time-out): nil when it answers one, else why not. The deep
// health check uses it to tell a service that stopped answering.
func (b *Backend) Probe(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, b.cfg.ModelsTimeout)
	defer cancel()
	_, err := b.fetchModels(ctx)
	return transport.RedactError(err, b.redact)
}

func (b *Backend) loadModels(ctx context.Context) {
	ctx, cancel := context.WithTimeout(ctx, b.cfg.ModelsTimeout)
	defer cancel()
	pairs, err := b.fetchModels(ctx)
	if err != nil {
		b.pairs = map[string]bool{}
		for _, p := range BuiltinPairs {
			b.pairs[p] = true
		}
		b.modelsSource = "builtin (" + b.redact(err.Error()) + ")"
		return
	}
	b.pairs = pairs
	b.modelsSource = "api"
}

func (b *Backend) fetchModels(ctx context.Context) (map[string]bool, error) {
	u := b.cfg.BaseURL + "/models"
	resp, err := b.client.DoRetries(ctx, 0, func(ctx context.Context) (*http.Request, error) {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
		if err == nil {
			req.Header.Set("Accept", "application/json")
		}
		return req, err
	})
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	switch resp.StatusCode {
	case http.StatusOK:
	case http.StatusUnauthorized, http.StatusForbidden:
		// Refused, not absent: the deep check said "does not answer".
		return nil, transport.RefusedError("GET "+b.shown+"/models", resp.StatusCode, "", b.refusedHint())
	default:
		return nil, fmt.Errorf("GET %s: HTTP %d", u, resp.StatusCode)
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxResponseBytes))
	if err != nil {
		return nil, fmt.Errorf("GET %s: %v", u, err)
	}
	pairs, err := parseModels(body)
	if err != nil {
		return nil, fmt.Errorf("GET %s: %v", u, err)
	}
	return pairs, nil
}

var pairRE = regexp.MustCompile(`^[a-z]{2}-[a-z]{2}$`)

// parseModels reads a model list. Accepted shapes:
//   - the LINDAT v2 HAL document: {"_embedded":{"item":[{"model":"cs-en",
//     "supports":{"cs":["en"]}}, ...]}}; every src->tgt in "supports" is a
//     pair, and so is a "model" name of the form xx-yy;
//   - a JSON array of "xx-yy" strings or of such model objects;
//   - {"models": [...]} holding either of those.
//
// A list with no pair at all is an error.
func parseModels(body []byte) (map[string]bool, error) {
	var raw any
	if err := json.Unmarshal(body, &raw); err != nil {
		return nil, fmt.Errorf("model list is not JSON: %v", err)
	}
	pairs := map[string]bool{}
	addPair := func(s string) {
		s = strings.ToLower(strings.TrimSpace(s))
		if pairRE.MatchString(s) {
			pairs[s] = true
		}
	}
	var items []any
	switch v := raw.(type) {
	case []any:
		items = v
	case map[string]any:
		if emb, ok := v["_embedded"].(map[string]any); ok {
			items, _ = emb["item"].([]any)
		} else {
			items, _ = v["models"].([]any)
		}
	}
	for _, it := range items {
		switch m := it.(type) {
		case string:
			addPair(m)
		case map[string]any:
			if name, ok := m["model"].(string); ok {
				addPair(name)
			}
			if sup, ok := m["supports"].(map[string]any); ok {
				for src, tgts := range sup {
					list, _ := tgts.([]any)
					for _, t := range list {
						if tgt, ok := t.(string); ok {
							addPair(src + "-" + tgt)
						}
					}
				}
			}
		}
	}
	if len(pairs) == 0 {
		return nil, fmt.Errorf("model list holds no <src>-<tgt> pair")
	}
	return pairs, nil
}

// PairsGuessed says whether the pairs Supports goes by are the built-in
// list, taken because the service's own could not be read: a guess, by
// which no target is refused ahead of a document (backend.OffersTarget).
func (b *Backend) PairsGuessed(ctx context.Context) bool {
	b.modelsOnce.Do(func() { b.loadModels(ctx) })
	return strings.HasPrefix(b.modelsSource, "builtin")
}

// Supports reports whether src-tgt is in the model list; an unsupported
// pair is an error naming it.
func (b *Backend) Supports(ctx context.Context, src, tgt string) error {
	pairs, source := b.Models(ctx)
	pair := strings.ToLower(src) + "-" + strings.ToLower(tgt)
	if b.pairs[pair] {
		return nil
	}
	return fmt.Errorf("mtapi: language pair %s is not offered (models from %s: %s)", pair, source, pairList(pairs, strings.ToLower(tgt)))
}

// maxPairsSaid is how many pairs an error lists before it counts the rest.
const maxPairsSaid = 12

// pairList says the pairs of a refusal: all of them when they are few;
// else those into tgt (at most maxPairsSaid), and how many there are in
// all (a service of 90 pairs filled nine lines of a terminal).
func pairList(pairs []string, tgt string) string {
	if len(pairs) <= maxPairsSaid {
		return strings.Join(pairs, ", ")
	}
	var into []string
	for _, p := range pairs {
		if strings.HasSuffix(p, "-"+tgt) {
			into = append(into, p)
		}
	}
	more := ""
	if len(into) > maxPairsSaid {
		into, more = into[:maxPairsSaid], ", ..."
	}
	if len(into) == 0 {
		return fmt.Sprintf("%d pairs, none into %s: %s, ...", len(pairs), tgt, strings.Join(pairs[:maxPairsSaid], ", "))
	}
	return fmt.Sprintf("%d pairs; into %s: %s%s", len(pairs), tgt, strings.Join(into, ", "), more)
}

// Translate translates text from src to tgt: the pair is checked, the text
// is cut into chunks of at most ChunkLimit characters and each chunk's
// content is sent in one retried call. The whitespace around each chunk is
// kept as it was; whitespace-only chunks make no call. A reply failing the
// degeneracy guard (line by line when the line count survived) is a
// *guard.Rejection error.
func (b *Backend) Translate(ctx context.Context, text, src, tgt string) (string, error) {
	out, err := b.translate(ctx, text, src, tgt)
	return out, transport.RedactError(err, b.redact)
}

func (b *Backend) translate(ctx context.Context, text, src, tgt string) (string, error) {
	if err := b.Supports(ctx, src, tgt); err != nil {
		return "", err
	}
	src, tgt = strings.ToLower(src), strings.ToLower(tgt)
	out, err := chunker.Map(text, b.cfg.ChunkLimit, func(i int, core string) (string, error) {
		tr, err := b.translateChunk(ctx, core, src, tgt)
		if err != nil {
			// Before it is wrapped (its message is copied then): the
			// text sent is taken out of an answer that quotes it.
			err = transport.RedactError(err, transport.RedactSent(core))
			return "", fmt.Errorf("mtapi %s-%s chunk %d: %w", src, tgt, i+1, err)
		}
		return tr, nil
	})
	if err != nil {
		return "", err
	}
	// Replies the guard rejects count too: a sign-in page is often
	// rejected as too short for a long text, and is no less one text
	// for everything.
	if err := b.same.Check(ctx, text, out); err != nil {
		return "", fmt.Errorf("mtapi %s-%s: %w", src, tgt, err)
	}
	if r := b.cfg.Guard.CheckLines(text, out, src, tgt); r != nil {
		return "", fmt.Errorf("mtapi %s-%s: %w", src, tgt, r)
	}
	return out, nil
}

func (b *Backend) translateChunk(ctx context.Context, text, src, tgt string) (string, error) {
	u := fmt.Sprintf("%s/models/%s-%s?%s", b.cfg.BaseURL, src, tgt, url.Values{"src": {src}, "tgt": {tgt}}.Encode())
	form := url.Values{"input_text": {text}}.Encode()
	resp, body, err := b.client.DoRead(ctx, maxResponseBytes, func(ctx context.Context) (*http.Request, error) {
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, u, strings.NewReader(form))
		if err != nil {
			return nil, err
		}
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		req.Header.Set("Accept", "text/plain")
		return req, nil
	})
	if err != nil {
		return "", err
	}
	switch resp.StatusCode {
	case http.StatusOK:
	case http.StatusUnauthorized, http.StatusForbidden:
		// Every other request would be refused alike: the run stops (it
		// tried every file), and the service answers backend_error (it
		// was internal).
		return "", transport.RefusedError(b.shown+"/models/"+src+"-"+tgt, resp.StatusCode, b.redact(string(body)), b.refusedHint())
	default:
		return "", backend.Failed(fmt.Errorf("HTTP %d: %s", resp.StatusCode, transport.Snippet(string(body))))
	}
	return checkAnswer(resp.Header.Get("Content-Type"), body)
}

// serviceFault is an answer that is no translation of any text: an HTML
// or JSON document (a proxy's error page, a network's sign-in page), not
// UTF-8, or too large. It is the service's fault, not the input's, so it
// is a passing failure (Transient): the input is not recorded failed, the
// run's breaker counts it, and a --resume tries it again once the service
// answers.
type serviceFault struct{ msg string }

func (e *serviceFault) Error() string   { return e.msg }
func (e *serviceFault) Transient() bool { return true }

// checkAnswer rejects answers that cannot be a translation: too large, not
// UTF-8, an HTML or JSON document (each a serviceFault), or empty.
func checkAnswer(contentType string, body []byte) (string, error) {
	if len(body) > maxResponseBytes {
		return "", &serviceFault{fmt.Sprintf("garbage answer: larger than %d bytes", maxResponseBytes)}
	}
	if !utf8.Valid(body) {
		return "", &serviceFault{"garbage answer: not UTF-8 text"}
	}
	if contentType != "" {
		mt, _, err := mime.ParseMediaType(contentType)
		if err != nil || mt != "text/plain" {
			return "", &serviceFault{fmt.Sprintf("garbage answer: Content-Type %q, want text/plain (the service's own page, a proxy's or a network's sign-in page?): %s", contentType, transport.Snippet(string(body)))}
		}
	}
	s := strings.TrimFunc(string(body), unicode.IsSpace)
	if s == "" {
		return "", fmt.Errorf("garbage answer: empty translation")
	}
	return s, nil
}
