// Package chattest is a local stand-in for an OpenAI-compatible
// chat-completions API (the chat_compatible backend, internal/translate/chat) for tests
// and local measurements: it translates with backendtest.Translate,
// applies the glossary lines of the system prompt the way an obedient
// model would, and can answer with the API's error shapes.
package chattest

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"

	"archivekit/internal/translate/backend/backendtest"
)

// Config shapes the stand-in.
type Config struct {
	// Key, when set, is the bearer token every request must carry (401
	// otherwise, in the OpenAI error shape).
	Key string
	// Fail lists statuses answered to the first requests, in order.
	Fail []int
	// RetryAfter is sent with 429 and 503 answers.
	RetryAfter string
	// Raw, when not nil, is answered (status 200) to every request instead
	// of a translation: malformed JSON, missing choices and the like.
	Raw func(n int) string
	// Reply, when not nil, replaces the translation of the user message
	// for request n (0-based), given the system prompt too; the answer is
	// otherwise well formed.
	Reply func(n int, system, user string) string
	// FinishReason is sent in the choice; "" means "stop".
	FinishReason string
}

// Request is one request as received.
type Request struct {
	Model       string
	Temperature *float64
	System      string
	User        string
	Auth        string
}

// Server is a running stand-in.
type Server struct {
	*httptest.Server
	cfg   Config
	Posts atomic.Int32
	mu    sync.Mutex
	reqs  []Request
}

// New starts a stand-in; the caller closes it. The API root is URL + "/v1".
func New(cfg Config) *Server {
	s := &Server{cfg: cfg}
	s.Server = httptest.NewServer(http.HandlerFunc(s.serve))
	return s
}

// BaseURL is the value for LLM_BASE_URL.
func (s *Server) BaseURL() string { return s.URL + "/v1" }

// Requests returns the requests received so far.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Request(nil), s.reqs...)
}

func writeError(w http.ResponseWriter, status int, msg, typ string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(map[string]any{"error": map[string]any{"message": msg, "type": typ, "code": nil}})
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	if r.Method == http.MethodGet && r.URL.Path == "/v1/models" {
		if s.cfg.Key != "" && r.Header.Get("Authorization") != "Bearer "+s.cfg.Key {
			writeError(w, http.StatusUnauthorized, "Incorrect API key provided.", "invalid_request_error")
			return
		}
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `{"object":"list","data":[{"id":"stand-in","object":"model"}]}`)
		return
	}
	if r.Method != http.MethodPost || r.URL.Path != "/v1/chat/completions" {
		writeError(w, http.StatusNotFound, "Unknown request URL: "+r.Method+" "+r.URL.Path, "invalid_request_error")
		return
	}
	n := int(s.Posts.Add(1)) - 1
	var body struct {
		Model       string   `json:"model"`
		Temperature *float64 `json:"temperature"`
		Messages    []struct {
			Role    string `json:"role"`
			Content string `json:"content"`
		} `json:"messages"`
	}
	if err := json.NewDecoder(r.Body).Decode(&body); err != nil {
		writeError(w, http.StatusBadRequest, "invalid JSON body: "+err.Error(), "invalid_request_error")
		return
	}
	req := Request{Model: body.Model, Temperature: body.Temperature, Auth: r.Header.Get("Authorization")}
	for _, m := range body.Messages {
		switch m.Role {
		case "system":
			req.System += m.Content
		case "user":
			req.User += m.Content
		}
	}
	s.mu.Lock()
	s.reqs = append(s.reqs, req)
	s.mu.Unlock()
	if s.cfg.Key != "" && req.Auth != "Bearer "+s.cfg.Key {
		writeError(w, http.StatusUnauthorized, "Incorrect API key provided.", "invalid_request_error")
		return
	}
	if n < len(s.cfg.Fail) {
		if st := s.cfg.Fail[n]; st != 0 {
			if s.cfg.RetryAfter != "" && (st == 429 || st == 503) {
				w.Header().Set("Retry-After", s.cfg.RetryAfter)
			}
			writeError(w, st, http.StatusText(st), "server_error")
			return
		}
	}
	if s.cfg.Raw != nil {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, s.cfg.Raw(n))
		return
	}
	var out string
	if s.cfg.Reply != nil {
		out = s.cfg.Reply(n, req.System, req.User)
	} else {
		out = Translate(req.System, req.User)
	}
	fr := s.cfg.FinishReason
	if fr == "" {
		fr = "stop"
	}
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(map[string]any{
		"id": fmt.Sprintf("chatcmpl-%d", n), "object": "chat.completion", "model": body.Model,
		"choices": []any{map[string]any{"index": 0, "finish_reason": fr,
			"message": map[string]any{"role": "assistant", "content": out}}},
		"usage": map[string]any{"prompt_tokens": len(strings.Fields(req.System + " " + req.User)), "completion_tokens": len(strings.Fields(out))},
	})
}

var termLine = regexp.MustCompile(`(?m)^(.+) = (.+)$`)

// Translate is the stand-in's reply: the glossary's source terms (the
// "source = target" lines of the system prompt) are replaced by their
// targets, then the rest goes through backendtest.Translate, line by
// line.
func Translate(system, user string) string {
	type term struct {
		re  *regexp.Regexp
		tgt string
	}
	var terms []term
	for _, m := range termLine.FindAllStringSubmatch(system, -1) {
		re, err := regexp.Compile(`(?i)(^|[^\pL\pN])(` + regexp.QuoteMeta(m[1]) + `)($|[^\pL\pN])`)
		if err == nil {
			terms = append(terms, term{re, m[2]})
		}
	}
	// Glossary targets are protected from the upper-casing by a marker.
	var kept []string
	for _, t := range terms {
		user = t.re.ReplaceAllStringFunc(user, func(s string) string {
			sub := t.re.FindStringSubmatch(s)
			kept = append(kept, t.tgt)
			return sub[1] + fmt.Sprintf("QZX%dQZX", len(kept)-1) + sub[3]
		})
	}
	out := backendtest.Translate(user)
	for i, k := range kept {
		out = strings.Replace(out, fmt.Sprintf("QZX%dQZX", i), k, 1)
	}
	return out
}
