// Package lemmatizer is a client of the lemmatiser service, which speaks the
// UDPipe 2 REST protocol:
//
//	POST {base}/process   form fields: data (the text), model (see Models),
//	                      tokenizer, tagger (present, empty: default options)
//	200 application/json  {"model": "...", "acknowledgements": [...],
//	                       "result": "<CoNLL-U>"}
//
// The vocabulary uses it to match single words by lemma (spec 4.6).
package lemmatizer

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"archivekit/internal/translate/chunker"
	"archivekit/internal/translate/transport"
)

// DefaultBaseURL is the public lemmatiser host, used when LEMMATIZER_URL is
// not set.
const DefaultBaseURL = "https://lindat.mff.cuni.cz/services/udpipe/api"

// DefaultPolicy is the transport policy towards the lemmatiser: the same
// retry count and backoff as the hosted translation API's defaults.
var DefaultPolicy = transport.Policy{MaxRetries: 4, BackoffBase: time.Second}

// models maps ISO 639-1 source languages to the models of spec 10.2.
var models = map[string]string{
	"cs": "czech-pdt-ud-2.15-241121",
	"sk": "slovak-snk-ud-2.15-241121",
	"pl": "polish-pdb-ud-2.15-241121",
	"de": "german-gsd-ud-2.15-241121",
	"fr": "french-gsd-ud-2.15-241121",
	"ru": "russian-syntagrus-ud-2.15-241121",
	"uk": "ukrainian-iu-ud-2.15-241121",
	"en": "english-ewt-ud-2.15-241121",
}

// ModelFor returns the lemmatisation model for an ISO 639-1 language, or
// false when there is none (the caller skips the single-word pass and warns
// once).
func ModelFor(lang string) (string, bool) {
	m, ok := models[strings.ToLower(lang)]
	return m, ok
}

// ErrUnsupported is returned (wrapped) for a language without a model.
var ErrUnsupported = errors.New("no lemmatisation model for this language")

// Token is one surface token of the analysed text.
type Token struct {
	Form  string
	Lemma string // empty for a multiword token (German "zum" = zu + dem)
	UPOS  string
	Feats string // the FEATS column, "_" when empty
	// Plural is true when FEATS holds Number=Plur.
	Plural bool
	// Multiword marks the surface form of a multiword token.
	Multiword bool
	// Start and End are byte offsets of Form in the text given to
	// Lemmatize; both are -1 when the form could not be located.
	Start, End int
}

// DefaultMaxInFlight is how many requests a Client sends at once by
// default: the translator's page concurrency (each page in flight
// lemmatises its lines in one request).
const DefaultMaxInFlight = 4

// Client calls the lemmatiser service. It is safe for concurrent use.
type Client struct {
	BaseURL   string
	Transport *transport.Client
	// ChunkLimit bounds the characters sent per request; < 1 means
	// chunker.DefaultLimit.
	ChunkLimit int
	// MaxInFlight bounds the requests in flight at once, over all
	// callers; < 1 means DefaultMaxInFlight. Set it before first use.
	MaxInFlight int

	semOnce sync.Once
	sem     chan struct{}
}

// LineLemmatizer lemmatises many lines at once (a *Client, a *Breaker
// in front of one, a *Cache).
type LineLemmatizer interface {
	Lemmatizer
	LemmatizeLines(ctx context.Context, lines []string, lang string) ([][]Token, error)
}

// Prefetcher is a lemmatiser that keeps what it lemmatised (a *Cache):
// Prefetch lemmatises lines in as few requests as it can, so that later
// calls about them are answered from memory.
type Prefetcher interface {
	Prefetch(ctx context.Context, lines []string, lang string) error
}

// New returns a client for baseURL (no trailing slash needed); t nil means
// a transport with DefaultPolicy and a 60 s HTTP timeout.
func New(baseURL string, t *transport.Client) *Client {
	if t == nil {
		t = transport.New(DefaultPolicy, &http.Client{Timeout: 60 * time.Second})
	}
	return &Client{BaseURL: strings.TrimRight(baseURL, "/"), Transport: t}
}

// Off is the LEMMATIZER_URL value ("off", or "none") that turns the
// lemmatiser off: no text leaves the machine for it, and single-word
// vocabulary terms are not protected (multi-word terms still are).
const Off = "off"

// BaseURLFromEnv returns LEMMATIZER_URL (or the original tool's
// UDPIPE_URL when it is unset), DefaultBaseURL when neither is set, or ""
// when it is Off ("off" or "none"); a value that is not an http(s) URL is
// an error naming the variable.
func BaseURLFromEnv(getenv func(string) string) (string, error) {
	if getenv == nil {
		getenv = os.Getenv
	}
	name := "LEMMATIZER_URL"
	v := strings.TrimSpace(getenv(name))
	if v == "" && strings.TrimSpace(getenv("UDPIPE_URL")) != "" {
		// The original tool's name: a user's private lemmatiser named so
		// was ignored and the text went to the public host.
		name = "UDPIPE_URL"
		v = strings.TrimSpace(getenv(name))
	}
	if v == "" {
		refused, err := transport.PublicRefused(getenv)
		if err != nil {
			return "", err
		}
		if refused {
			return "", fmt.Errorf("LEMMATIZER_URL is unset and %s=refuse: give the address of your lemmatiser (UDPipe), or LEMMATIZER_URL=off to match no single vocabulary word (the public lemmatiser is refused)",
				transport.EnvPublicServices)
		}
		return DefaultBaseURL, nil
	}
	if strings.EqualFold(v, Off) || strings.EqualFold(v, "none") {
		return "", nil
	}
	u, err := url.Parse(v)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return "", fmt.Errorf("%s=%q: want an http(s) URL", name, v)
	}
	return strings.TrimRight(v, "/"), nil
}

// FromEnv returns a client configured from the environment (getenv nil
// means the process environment): LEMMATIZER_URL (DefaultBaseURL when
// unset; nil, no client, when Off) and the transport policy LEMMATIZER_MAX_RETRIES,
// LEMMATIZER_BACKOFF_BASE_S and LEMMATIZER_MIN_INTERVAL_S (DefaultPolicy).
// A bad value is an error naming the variable.
func FromEnv(getenv func(string) string) (*Client, error) {
	if getenv == nil {
		getenv = os.Getenv
	}
	u, err := BaseURLFromEnv(getenv)
	if err != nil || u == "" {
		return nil, err // off: no client
	}
	p, err := transport.FromEnv("LEMMATIZER", DefaultPolicy, getenv)
	if err != nil {
		return nil, err
	}
	t := transport.New(p, &http.Client{Timeout: 60 * time.Second})
	// A lemmatiser that is not there fails each call at once (naming
	// LEMMATIZER_URL), so the breaker opens within milliseconds instead of
	// after the whole backoff of DefaultTrip calls.
	t.FailFast, t.Setting = true, "LEMMATIZER_URL"
	return New(u, t), nil
}

// HostedNotice is the one-line notice a command gives when a vocabulary
// sends document text to the public lemmatiser because LEMMATIZER_URL is
// unset (baseURL is DefaultBaseURL); "" for any other address.
func HostedNotice(baseURL string) string {
	if strings.TrimRight(baseURL, "/") != DefaultBaseURL {
		return ""
	}
	host := DefaultBaseURL
	if u, err := url.Parse(host); err == nil {
		host = u.Host
	}
	return fmt.Sprintf("the vocabulary's single words are matched by lemma: document text is sent to the public lemmatiser at %s (LEMMATIZER_URL is unset, the default): set LEMMATIZER_URL to a self-hosted UDPipe service to keep it in house, or LEMMATIZER_URL=off to match no single word (multi-word terms are matched either way)", host)
}

// response is the service's JSON answer.
type response struct {
	Model  string  `json:"model"`
	Result *string `json:"result"`
}

// Lemmatize tokenises and tags text with the model for lang and returns its
// tokens with byte offsets into text. Texts longer than ChunkLimit
// characters are sent in several requests.
func (c *Client) Lemmatize(ctx context.Context, text, lang string) ([]Token, error) {
	model, ok := ModelFor(lang)
	if !ok {
		return nil, fmt.Errorf("lemmatiser: language %q: %w", lang, ErrUnsupported)
	}
	var all []Token
	offset := 0
	for _, chunk := range chunker.Split(text, c.ChunkLimit) {
		if strings.TrimSpace(chunk) != "" {
			conllu, err := c.process(ctx, chunk, model)
			if err != nil {
				return nil, err
			}
			toks, err := ParseCoNLLU(conllu)
			if err != nil {
				return nil, fmt.Errorf("lemmatiser %s: %w", model, err)
			}
			for _, t := range Locate(chunk, toks) {
				if t.Start >= 0 {
					t.Start += offset
					t.End += offset
				}
				all = append(all, t)
			}
		}
		offset += len(chunk)
	}
	return all, nil
}

// LemmatizeLines lemmatises lines in few requests and returns each
// line's tokens, with byte offsets into the line. The lines go out as the
// paragraphs of one document (joined by blank lines, where UDPipe's
// tokeniser ends a paragraph and so a sentence), as many per request as
// ChunkLimit characters allow; the answer's sentences are given back to
// their lines in order. Requests are sent concurrently, at most
// MaxInFlight at once. A blank line has no tokens and costs nothing; a
// line longer than ChunkLimit or holding a line break goes alone through
// Lemmatize.
func (c *Client) LemmatizeLines(ctx context.Context, lines []string, lang string) ([][]Token, error) {
	model, ok := ModelFor(lang)
	if !ok {
		return nil, fmt.Errorf("lemmatiser: language %q: %w", lang, ErrUnsupported)
	}
	out := make([][]Token, len(lines))
	jobs := c.requests(lines)
	errs := make([]error, len(jobs))
	var wg sync.WaitGroup
	for j, idx := range jobs {
		wg.Add(1)
		go func(j int, idx []int) {
			defer wg.Done()
			if len(idx) == 1 && !c.shareable(lines[idx[0]]) {
				out[idx[0]], errs[j] = c.Lemmatize(ctx, lines[idx[0]], lang)
				return
			}
			group := make([]string, len(idx))
			for k, i := range idx {
				group[k] = lines[i]
			}
			conllu, err := c.process(ctx, strings.Join(group, "\n\n"), model)
			if err != nil {
				errs[j] = err
				return
			}
			sents, err := parseSentences(conllu)
			if err != nil {
				errs[j] = fmt.Errorf("lemmatiser %s: %w", model, err)
				return
			}
			for k, toks := range byLine(group, sents) {
				out[idx[k]] = toks
			}
		}(j, idx)
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return nil, err
		}
	}
	return out, nil
}

func (c *Client) limit() int {
	if c.ChunkLimit < 1 {
		return chunker.DefaultLimit
	}
	return c.ChunkLimit
}

// shareable reports whether line can be a paragraph of a request shared
// with other lines.
func (c *Client) shareable(line string) bool {
	return !strings.ContainsAny(line, "\r\n") && utf8.RuneCountInString(line) <= c.limit()
}

// requests groups the indices of the non-blank lines into requests: runs
// of shareable lines whose blank-line-joined length is at most the limit,
// and each other line alone.
func (c *Client) requests(lines []string) [][]int {
	var jobs [][]int
	var cur []int
	size := 0
	for i, l := range lines {
		if strings.TrimSpace(l) == "" {
			continue
		}
		if !c.shareable(l) {
			jobs = append(jobs, []int{i})
			continue
		}
		n := utf8.RuneCountInString(l)
		if len(cur) > 0 && size+2+n > c.limit() {
			jobs = append(jobs, cur)
			cur, size = nil, 0
		}
		if len(cur) > 0 {
			size += 2
		}
		cur = append(cur, i)
		size += n
	}
	if len(cur) > 0 {
		jobs = append(jobs, cur)
	}
	return jobs
}

// acquire waits for a request slot (MaxInFlight); release gives it back.
func (c *Client) acquire(ctx context.Context) error {
	c.semOnce.Do(func() {
		n := c.MaxInFlight
		if n < 1 {
			n = DefaultMaxInFlight
		}
		c.sem = make(chan struct{}, n)
	})
	select {
	case c.sem <- struct{}{}:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (c *Client) release() { <-c.sem }

func (c *Client) process(ctx context.Context, text, model string) (string, error) {
	if err := c.acquire(ctx); err != nil {
		return "", err
	}
	defer c.release()
	u := c.BaseURL + "/process"
	form := url.Values{"data": {text}, "model": {model}, "tokenizer": {""}, "tagger": {""}}.Encode()
	resp, body, err := c.Transport.DoRead(ctx, 32<<20, func(ctx context.Context) (*http.Request, error) {
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, u, strings.NewReader(form))
		if err == nil {
			req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
			req.Header.Set("Accept", "application/json")
		}
		return req, err
	})
	if err != nil {
		return "", fmt.Errorf("lemmatiser: %w", err)
	}
	if resp.StatusCode != http.StatusOK {
		return "", fmt.Errorf("lemmatiser %s: HTTP %d: %s", u, resp.StatusCode, strings.TrimSpace(string(body)))
	}
	var r response
	if err := json.Unmarshal(body, &r); err != nil || r.Result == nil {
		return "", fmt.Errorf("lemmatiser %s: answer is not UDPipe JSON with a \"result\" field", u)
	}
	return *r.Result, nil
}

// ParseCoNLLU reads the tokens of a CoNLL-U document: every word line, with
// the words inside a multiword-token range replaced by the range's surface
// token. Comment lines, blank lines and empty nodes (ids like 3.1) are
// skipped. A word line without ten tab-separated columns is an error naming
// the line.
func ParseCoNLLU(s string) ([]Token, error) {
	sents, err := parseSentences(s)
	var toks []Token
	for _, st := range sents {
		toks = append(toks, st...)
	}
	return toks, err
}

// parseSentences is ParseCoNLLU keeping the sentences apart (a blank line
// ends one).
func parseSentences(s string) ([][]Token, error) {
	var sents [][]Token
	var toks []Token
	skipUntil := 0 // last word id covered by the current multiword range
	for i, line := range strings.Split(s, "\n") {
		line = strings.TrimRight(line, "\r")
		if line == "" || strings.HasPrefix(line, "#") {
			if line == "" {
				skipUntil = 0
				if len(toks) > 0 {
					sents, toks = append(sents, toks), nil
				}
			}
			continue
		}
		cols := strings.Split(line, "\t")
		if len(cols) != 10 {
			return nil, fmt.Errorf("CoNLL-U line %d: %d columns, want 10", i+1, len(cols))
		}
		id := cols[0]
		if strings.Contains(id, ".") {
			continue
		}
		if lo, hi, ok := strings.Cut(id, "-"); ok {
			var a, b int
			if _, err := fmt.Sscanf(lo+" "+hi, "%d %d", &a, &b); err != nil {
				return nil, fmt.Errorf("CoNLL-U line %d: bad range id %q", i+1, id)
			}
			skipUntil = b
			toks = append(toks, Token{Form: cols[1], Multiword: true, Feats: "_", Start: -1, End: -1})
			continue
		}
		var n int
		if _, err := fmt.Sscanf(id, "%d", &n); err != nil {
			return nil, fmt.Errorf("CoNLL-U line %d: bad id %q", i+1, id)
		}
		if n <= skipUntil {
			continue
		}
		toks = append(toks, Token{
			Form: cols[1], Lemma: cols[2], UPOS: cols[3], Feats: cols[5],
			Plural: hasFeature(cols[5], "Number", "Plur"),
			Start:  -1, End: -1,
		})
	}
	if len(toks) > 0 {
		sents = append(sents, toks)
	}
	return sents, nil
}

func hasFeature(feats, name, value string) bool {
	for _, f := range strings.Split(feats, "|") {
		k, v, ok := strings.Cut(f, "=")
		if ok && k == name {
			for _, one := range strings.Split(v, ",") {
				if one == value {
					return true
				}
			}
		}
	}
	return false
}

// Locate sets each token's Start and End by finding its form in text, in
// order, from the end of the previous located token. A form not found
// (a tokeniser that normalised it) keeps -1 and does not move the cursor.
func Locate(text string, toks []Token) []Token {
	out, _ := locateFrom(text, 0, toks)
	return out
}

// locateFrom is Locate starting at byte cursor; it also returns where the
// last located token ends (cursor when none was).
func locateFrom(text string, cursor int, toks []Token) ([]Token, int) {
	out := make([]Token, len(toks))
	for i, t := range toks {
		t.Start, t.End = -1, -1
		if t.Form != "" {
			if j := strings.Index(text[cursor:], t.Form); j >= 0 {
				t.Start = cursor + j
				t.End = t.Start + len(t.Form)
				cursor = t.End
			}
		}
		out[i] = t
	}
	return out, cursor
}

// byLine gives the tokens of the answer about lines (sent as paragraphs)
// back to their lines, in order, located in them. A sentence starts on the
// line being read while that line has unread text; otherwise on the next
// line. When its first form is not in the unread text but a later line
// holds it, it starts there (a tokeniser that normalised the rest of the
// line). A sentence that runs on past the end of its line (a tokeniser
// that did not end it at the blank line) goes on in the next line.
func byLine(lines []string, sents [][]Token) [][]Token {
	out := make([][]Token, len(lines))
	li, cursor := 0, 0
	// next moves to the next line while the current one has no unread text.
	next := func() {
		for li+1 < len(lines) && strings.TrimSpace(lines[li][cursor:]) == "" {
			li, cursor = li+1, 0
		}
	}
	for _, st := range sents {
		next()
		if first := firstForm(st); first != "" && !strings.Contains(lines[li][cursor:], first) {
			for k := li + 1; k < len(lines); k++ {
				if strings.Contains(lines[k], first) {
					li, cursor = k, 0
					break
				}
			}
		}
		for _, t := range st {
			next()
			var one []Token
			one, cursor = locateFrom(lines[li], cursor, []Token{t})
			out[li] = append(out[li], one[0])
		}
	}
	return out
}

func firstForm(toks []Token) string {
	for _, t := range toks {
		if t.Form != "" {
			return t.Form
		}
	}
	return ""
}
