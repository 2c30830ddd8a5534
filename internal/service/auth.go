package service

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"errors"
	"log/slog"
	"net/http"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// open reports whether a route answers without the API token: the probes
// (/health, /ready) and the static browser pages (the /docs renderer and
// its OpenAPI document, and the tool's Options.Pages), which hold no data;
// the API calls those pages make need the token.
func (s *Service) open(pattern string) bool {
	switch pattern {
	case "GET /health", "GET /ready", "GET /docs", "GET /docs/{$}", "GET /docs/{asset}", "GET /openapi.json":
		return true
	}
	for _, p := range s.opts.Pages {
		if p == pattern {
			return true
		}
	}
	return false
}

// auth requires "Authorization: Bearer <token>" on every route but the
// open ones when a token is configured (API_TOKEN, or each client's of
// API_TOKENS_FILE: the request then carries the client's name, ClientOf,
// and the request log names it); a missing or wrong token gets 401 with
// WWW-Authenticate. CORS preflights are answered before it (they never
// carry the token).
func (s *Service) auth(next http.Handler) http.Handler {
	if !s.Config.Closed() {
		return next
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, pattern := s.mux.Handler(r)
		if s.open(pattern) {
			next.ServeHTTP(w, r)
			return
		}
		scheme, got, _ := strings.Cut(r.Header.Get("Authorization"), " ")
		if c, ok := match(s.tokens.current(), strings.TrimSpace(got)); ok && strings.EqualFold(scheme, "Bearer") {
			if c.Name != "" {
				if rec, ok := w.(*recorder); ok {
					rec.client = c.Name
				}
				r = r.WithContext(context.WithValue(r.Context(), clientNameKey{}, c.Name))
			}
			next.ServeHTTP(w, r)
			return
		}
		if rec, ok := w.(*recorder); ok {
			// Counted under its route (it was "unmatched": a dashboard
			// could not tell which route the refused calls were for).
			rec.pattern = pattern
			skipBody(rec.ResponseWriter, r)
		} else {
			skipBody(w, r)
		}
		w.Header().Set("WWW-Authenticate", `Bearer realm="`+s.opts.Name+`"`)
		WriteError(w, http.StatusUnauthorized, ReasonUnauthorized, "this service requires a bearer token (Authorization: Bearer <token>; API_TOKEN, API_TOKEN_FILE, or the client's line of API_TOKENS_FILE, on the server)")
	})
}

// match returns the client whose token got is. Every token is compared,
// each in constant time, so the time taken does not tell which one, or
// how much of one, matched.
func match(clients []Client, got string) (Client, bool) {
	var found Client
	ok := false
	for _, c := range clients {
		if subtle.ConstantTimeCompare([]byte(got), []byte(c.Token)) == 1 {
			found, ok = c, true
		}
	}
	return found, ok
}

type clientNameKey struct{}

// ClientOf is the name of the API_TOKENS_FILE client that sent the
// request whose context ctx is; "" without such a file, or on an open
// route.
func ClientOf(ctx context.Context) string {
	n, _ := ctx.Value(clientNameKey{}).(string)
	return n
}

// tokenList is the tokens auth accepts: API_TOKEN's, or the clients of
// API_TOKENS_FILE, whose file is read again (at most once every recheck)
// and taken when its content changed, so that a client added or removed,
// a Secret updated in place, counts without a restart. A file that then
// cannot be read keeps the clients read before, and says so.
type tokenList struct {
	path    string
	recheck time.Duration
	log     *slog.Logger

	mu      sync.Mutex
	checked time.Time
	sum     [sha256.Size]byte // of the content last read
	list    atomic.Pointer[[]Client]
}

// newTokenList is the tokens of c, logging to log.
func newTokenList(c Config, log *slog.Logger) *tokenList {
	t := &tokenList{path: c.ClientsFile, recheck: time.Second, log: log, checked: time.Now(), sum: c.clientsSum}
	list := c.Clients
	if len(list) == 0 && c.Token != "" {
		list = []Client{{Token: c.Token}}
	}
	t.list.Store(&list)
	return t
}

// current is the tokens accepted now.
func (t *tokenList) current() []Client {
	if t.path != "" {
		t.reload()
	}
	return *t.list.Load()
}

// reload reads the file again when recheck has passed, and takes its
// clients when its content changed.
func (t *tokenList) reload() {
	t.mu.Lock()
	defer t.mu.Unlock()
	if time.Since(t.checked) < t.recheck {
		return
	}
	t.checked = time.Now()
	data, err := os.ReadFile(t.path)
	sum := sha256.Sum256(data)
	if err == nil && sum == t.sum {
		return
	}
	t.sum = sum
	var list []Client
	var rerr error
	if err == nil {
		list, rerr = parseClients(t.path, data)
	}
	if err != nil || rerr != nil {
		t.log.Error("API_TOKENS_FILE changed and cannot be read: the clients read before are kept", "error", errors.Join(err, rerr).Error(), "clients", len(*t.list.Load()))
		return
	}
	t.list.Store(&list)
	t.log.Info("API_TOKENS_FILE read again", "clients", len(list))
}
