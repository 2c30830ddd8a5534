package service

import (
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

// auth requires "Authorization: Bearer <API_TOKEN>" on every route but
// the open ones when a token is configured; a missing or wrong token gets
// 401 with WWW-Authenticate. CORS preflights are answered before it (they
// never carry the token).
func (s *Service) auth(next http.Handler) http.Handler {
	if s.Config.Token == "" {
		return next
	}
	want := []byte(s.Config.Token)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if _, pattern := s.mux.Handler(r); s.open(pattern) {
			next.ServeHTTP(w, r)
			return
		}
		scheme, got, _ := strings.Cut(r.Header.Get("Authorization"), " ")
		if strings.EqualFold(scheme, "Bearer") && subtle.ConstantTimeCompare([]byte(strings.TrimSpace(got)), want) == 1 {
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
