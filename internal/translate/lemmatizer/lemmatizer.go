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
	"io"
	"net/http"
	"net/url"
	"os"
	"strings"
	"time"

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

// Client calls the lemmatiser service. It is safe for concurrent use.
type Client struct {
	BaseURL   string
	Transport *transport.Client
	// ChunkLimit bounds the characters sent per request; < 1 means
	// chunker.DefaultLimit.
	ChunkLimit int
}

// New returns a client for baseURL (no trailing slash needed); t nil means
// a transport with DefaultPolicy and a 60 s HTTP timeout.
func New(baseURL string, t *transport.Client) *Client {
	if t == nil {
		t = transport.New(DefaultPolicy, &http.Client{Timeout: 60 * time.Second})
	}
	return &Client{BaseURL: strings.TrimRight(baseURL, "/"), Transport: t}
}

// BaseURLFromEnv returns LEMMATIZER_URL, or DefaultBaseURL when unset; a
// value that is not an http(s) URL is an error naming the variable.
func BaseURLFromEnv(getenv func(string) string) (string, error) {
	if getenv == nil {
		getenv = os.Getenv
	}
	v := strings.TrimSpace(getenv("LEMMATIZER_URL"))
	if v == "" {
		return DefaultBaseURL, nil
	}
	u, err := url.Parse(v)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return "", fmt.Errorf("LEMMATIZER_URL=%q: want an http(s) URL", v)
	}
	return strings.TrimRight(v, "/"), nil
}

// FromEnv returns a client configured from the environment (getenv nil
// means the process environment): LEMMATIZER_URL (DefaultBaseURL when
// unset) and the transport policy LEMMATIZER_MAX_RETRIES,
// LEMMATIZER_BACKOFF_BASE_S and LEMMATIZER_MIN_INTERVAL_S (DefaultPolicy).
// A bad value is an error naming the variable.
func FromEnv(getenv func(string) string) (*Client, error) {
	if getenv == nil {
		getenv = os.Getenv
	}
	u, err := BaseURLFromEnv(getenv)
	if err != nil {
		return nil, err
	}
	p, err := transport.FromEnv("LEMMATIZER", DefaultPolicy, getenv)
	if err != nil {
		return nil, err
	}
	return New(u, transport.New(p, &http.Client{Timeout: 60 * time.Second})), nil
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

func (c *Client) process(ctx context.Context, text, model string) (string, error) {
	u := c.BaseURL + "/process"
	form := url.Values{"data": {text}, "model": {model}, "tokenizer": {""}, "tagger": {""}}.Encode()
	resp, err := c.Transport.Do(ctx, func(ctx context.Context) (*http.Request, error) {
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
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 32<<20))
	if err != nil {
		return "", fmt.Errorf("lemmatiser %s: reading answer: %v", u, err)
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
	var toks []Token
	skipUntil := 0 // last word id covered by the current multiword range
	for i, line := range strings.Split(s, "\n") {
		line = strings.TrimRight(line, "\r")
		if line == "" || strings.HasPrefix(line, "#") {
			if line == "" {
				skipUntil = 0
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
	return toks, nil
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
	out := make([]Token, len(toks))
	cursor := 0
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
	return out
}
