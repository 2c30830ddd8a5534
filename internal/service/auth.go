package service

import (
	"context"
	"crypto/subtle"
	"net/http"
	"strings"
)

// open reports whether a route answers without the API token: the probes
// (/health, /ready) and the static browser pages (the /docs renderer and
// its OpenAPI document, and the tool's Options.Pages), which hold no data;
// the API calls those pages make need the token.
func (s *Service) open(pattern string) bool {
	switch pattern {
	case "GET /health", "GET /ready", "GET /docs", "GET /docs/{asset}", "GET /openapi.json":
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
	clients := s.Config.Clients
	if len(clients) == 0 {
		clients = []Client{{Token: s.Config.Token}}
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if _, pattern := s.mux.Handler(r); s.open(pattern) {
			next.ServeHTTP(w, r)
			return
		}
		scheme, got, _ := strings.Cut(r.Header.Get("Authorization"), " ")
		if c, ok := match(clients, strings.TrimSpace(got)); ok && strings.EqualFold(scheme, "Bearer") {
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
			skipBody(rec.ResponseWriter, r)
		} else {
			skipBody(w, r)
		}
		w.Header().Set("WWW-Authenticate", `Bearer realm="`+s.opts.Name+`"`)
		WriteError(w, http.StatusUnauthorized, ReasonUnauthorized, "this service requires a bearer token (Authorization: Bearer <token>; API_TOKEN on the server)")
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
