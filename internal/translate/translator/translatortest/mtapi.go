// Package translatortest provides a local stand-in for the hosted
// translation API (the mtapi protocol, see internal/translate/mtapi) for the tests of the
// translator and its commands: slow, failing, rate-limiting and
// garbage-answering variants included.
package translatortest

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"archivekit/internal/translate/backend/backendtest"
)

// Config shapes the stand-in's behaviour.
type Config struct {
	// Pairs is the model list; nil means cs-en, sk-en, pl-en, de-en.
	Pairs []string
	// NoModels answers 404 to GET /models (the client then falls back to
	// its built-in list).
	NoModels bool
	// HoldModels, when not nil, is called before each model list is
	// answered: a test keeps a service warming up there.
	HoldModels func()
	// Delay is the latency of every translate request.
	Delay time.Duration
	// Hold, when not nil, is called with each translate request's
	// input before it is answered (after Delay): a test holds a
	// translation there until what it waits for has happened.
	Hold func(input string)
	// Fail lists the statuses answered to the first translate requests,
	// in order (e.g. 429, 503); later requests succeed.
	Fail []int
	// FailAlways, when not 0, is answered to every translate request.
	FailAlways int
	// Failing, when not nil, is called with each translate request: the
	// status it returns, when not 0, is answered (a test ends an outage).
	Failing func() int
	// RetryAfter is sent as the Retry-After header with failure answers.
	RetryAfter string
	// Garbage, when not nil, replaces the translation of each request.
	Garbage func(input string) string
}

// Server is a running stand-in.
type Server struct {
	*httptest.Server
	cfg Config
	// Posts counts translate requests (failed ones included); Models
	// counts model-list requests.
	Posts, Models atomic.Int32
	mu            sync.Mutex
	inputs        []string
}

// Dict is the stand-in's vocabulary (backendtest.Dict): these lower-case
// Czech words get an English translation; every other word with a
// lower-case letter is upper-cased, and words without one are copied.
var Dict = backendtest.Dict

// New starts a stand-in; the caller closes it.
func New(cfg Config) *Server {
	if cfg.Pairs == nil {
		cfg.Pairs = []string{"cs-en", "sk-en", "pl-en", "de-en"}
	}
	s := &Server{cfg: cfg}
	s.Server = httptest.NewServer(http.HandlerFunc(s.serve))
	return s
}

// Inputs returns the texts of the successful translate requests.
func (s *Server) Inputs() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.inputs...)
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	switch {
	case r.Method == http.MethodGet && (r.URL.Path == "/models" || r.URL.Path == "/models/"):
		s.Models.Add(1)
		if s.cfg.HoldModels != nil {
			s.cfg.HoldModels()
		}
		if s.cfg.NoModels {
			http.NotFound(w, r)
			return
		}
		var items []string
		for _, p := range s.cfg.Pairs {
			src, tgt, _ := strings.Cut(p, "-")
			items = append(items, fmt.Sprintf(`{"model":%q,"supports":{%q:[%q]}}`, p, src, tgt))
		}
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"_embedded":{"item":[%s]}}`, strings.Join(items, ","))
	case r.Method == http.MethodPost && strings.HasPrefix(r.URL.Path, "/models/"):
		n := int(s.Posts.Add(1)) - 1
		if s.cfg.Delay > 0 {
			time.Sleep(s.cfg.Delay)
		}
		if s.cfg.Hold != nil {
			s.cfg.Hold(r.FormValue("input_text"))
		}
		status := s.cfg.FailAlways
		if n < len(s.cfg.Fail) {
			status = s.cfg.Fail[n]
		}
		if s.cfg.Failing != nil && status == 0 {
			status = s.cfg.Failing()
		}
		if status != 0 {
			if s.cfg.RetryAfter != "" {
				w.Header().Set("Retry-After", s.cfg.RetryAfter)
			}
			http.Error(w, http.StatusText(status), status)
			return
		}
		pair := strings.TrimPrefix(r.URL.Path, "/models/")
		if q := r.URL.Query(); q.Get("src")+"-"+q.Get("tgt") != pair {
			http.Error(w, "src/tgt disagree with the model", http.StatusBadRequest)
			return
		}
		known := false
		for _, p := range s.cfg.Pairs {
			known = known || p == pair
		}
		if !known {
			http.Error(w, "no such model "+pair, http.StatusNotFound)
			return
		}
		in := r.FormValue("input_text")
		s.mu.Lock()
		s.inputs = append(s.inputs, in)
		s.mu.Unlock()
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		if s.cfg.Garbage != nil {
			fmt.Fprint(w, s.cfg.Garbage(in))
			return
		}
		fmt.Fprint(w, Translate(in))
	default:
		http.NotFound(w, r)
	}
}

// Translate is the stand-in's translation of text, line by line (line
// breaks and the number of lines are kept): backendtest.Translate.
func Translate(text string) string { return backendtest.Translate(text) }

// TermsRecord is a small metadata record whose fields hold vocabulary
// terms ("kostrový hrob", "sídlištní jáma", "hrob"), for tests of the
// vocabulary's handling.
const TermsRecord = `<?xml version="1.0" encoding="UTF-8"?>
<amcr:amcr xmlns:amcr="https://api.aiscr.cz/schema/amcr/2.2/"><amcr:projekt><amcr:popis>Kostrový hrob</amcr:popis><amcr:poznamka>Záchranný výzkum odkryl kostrový hrob a sídlištní jámu.</amcr:poznamka><amcr:lokalizace>Hrob</amcr:lokalizace></amcr:projekt></amcr:amcr>`
