package service

import (
	"bytes"
	"encoding/json"
	"fmt"
	"html"
	"net/http"
	"strings"
)

// Index is what a tool adds to the service's GET / and GET /info, which the
// service builds from the routes registered with Route, so the list of
// endpoints cannot fall behind the routes served.
type Index struct {
	// Welcome is the message of GET /, whose body is
	// {"message": Welcome, "info": "/info"}.
	Welcome string
	// DeepHealth says what /health?deep=true checks, in the description of
	// /health; "" says it also reports draining.
	DeepHealth string
	// Limits, when not nil, is a value whose JSON object's members follow
	// max_upload_mb in the limits of /info.
	Limits any
	// Info, when not nil, is a value whose JSON object's members follow
	// limits in /info.
	Info any
}

// Endpoint is one entry of the endpoints of /info.
type Endpoint struct {
	Method      string `json:"method"`
	Path        string `json:"path"`
	Description string `json:"description"`
}

// Route registers a work route as Handle does and lists it, with its
// description, in the endpoints of /info. The endpoints list GET / and GET
// /info first, then the routes of other methods than GET and HEAD in the
// order they were registered, then the service's own routes, then the
// other GET and HEAD routes (pages such as a browser interface). Routes
// registered with Handle are not listed (assets of a listed page, tests).
func (s *Service) Route(pattern, description string, h http.HandlerFunc) {
	s.Handle(pattern, h)
	s.routes = append(s.routes, endpoint(pattern, description))
}

// endpoint is the entry of a route pattern ("METHOD /path", a root written
// "/{$}").
func endpoint(pattern, description string) Endpoint {
	method, path, _ := strings.Cut(pattern, " ")
	return Endpoint{Method: method, Path: strings.TrimSuffix(path, "{$}"), Description: description}
}

// handleIndex registers GET / and GET /info when the tool gave an Index.
func (s *Service) handleIndex() {
	if s.opts.Index == nil {
		return
	}
	s.Handle("GET /{$}", http.HandlerFunc(s.serveRoot))
	s.Handle("GET /info", http.HandlerFunc(s.serveInfo))
}

// Endpoints is the endpoints list of /info, as Route says.
func (s *Service) Endpoints() []Endpoint {
	deep := "also reports draining"
	if s.opts.Index != nil && s.opts.Index.DeepHealth != "" {
		deep = s.opts.Index.DeepHealth
	}
	var out []Endpoint
	if s.opts.Index != nil {
		out = append(out, endpoint("GET /{$}", "welcome message pointing at /info"), endpoint("GET /info", "this description"))
	}
	read := func(e Endpoint) bool { return e.Method == "GET" || e.Method == "HEAD" }
	for _, e := range s.routes {
		if !read(e) {
			out = append(out, e)
		}
	}
	out = append(out,
		endpoint("GET /health", `liveness: always 200 {"status": "ok"}; ?deep=true `+deep),
		endpoint("GET /ready", "readiness: 503 while starting or draining, 200 when ready"),
		endpoint("GET /metrics", "Prometheus metrics"),
		endpoint("GET /docs", "interactive API documentation"),
		endpoint("GET /openapi.json", "OpenAPI 3.1 document"),
	)
	for _, e := range s.routes {
		if read(e) {
			out = append(out, e)
		}
	}
	return out
}

func (s *Service) serveRoot(w http.ResponseWriter, r *http.Request) {
	if wantsHTML(r) {
		s.serveRootPage(w)
		return
	}
	WriteJSON(w, http.StatusOK, map[string]string{"message": s.opts.Index.Welcome, "info": s.Config.RootPath.Of("/info")})
}

// PagePolicy is the Content-Security-Policy of the services' pages: their
// scripts, styles and requests from the service alone (no inline script or
// style, no other site), images also from data: and blob: URLs (previews
// of the files a person chose, a document's pages) and the page's own
// blob: URLs read back (a download it made), no plugins, no <base>,
// forms sent to the service only, and no framing by another site (an upload
// form or the token prompt in a frame of someone else's page).
const PagePolicy = "default-src 'self'; img-src 'self' data: blob:; connect-src 'self' blob:; object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"

// PageHeaders sets the headers of a page the services serve to browsers:
// no type sniffing, no framing, and PagePolicy.
func PageHeaders(h http.Header) {
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("X-Frame-Options", "DENY")
	h.Set("Content-Security-Policy", PagePolicy)
}

// wantsHTML says a request is a browser's (its Accept header names
// text/html, which curl's and programs' do not): GET / then answers a page
// a person can follow instead of the welcome message's JSON.
func wantsHTML(r *http.Request) bool {
	for _, a := range strings.Split(r.Header.Get("Accept"), ",") {
		if mt, _, _ := strings.Cut(strings.TrimSpace(a), ";"); strings.EqualFold(mt, "text/html") {
			return true
		}
	}
	return false
}

// serveRootPage is GET / for a browser: the welcome message and links to
// the service's pages (the tool's GET routes, such as pageclass-api's
// /frontend), its API documentation and its description.
func (s *Service) serveRootPage(w http.ResponseWriter) {
	var links strings.Builder
	link := func(path, what string) {
		// The link is relative ("docs", not "/docs"): under a reverse
		// proxy's path the page is /pageclass/ and its links go there.
		fmt.Fprintf(&links, "<li><a href=\"%s\">%s</a>: %s</li>\n", html.EscapeString(strings.TrimPrefix(path, "/")), html.EscapeString(path), html.EscapeString(what))
	}
	for _, e := range s.routes {
		if e.Method == http.MethodGet && !strings.Contains(e.Path, "{") {
			link(e.Path, e.Description)
		}
	}
	link("/docs", "the API: every route, with a form to try it")
	link("/info", "what this service is and runs (JSON)")
	name := html.EscapeString(s.opts.Name)
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	PageHeaders(w.Header())
	fmt.Fprintf(w, `<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><title>%s</title>
<link rel="icon" href="data:,"><link rel="stylesheet" href="docs/docs.css"></head>
<body>
<h1>%s %s</h1>
<p>%s</p>
<ul>
%s</ul>
</body>
</html>
`, name, name, html.EscapeString(s.opts.Version), html.EscapeString(s.opts.Index.Welcome), links.String())
}

// info is the part of /info the service writes itself.
type info struct {
	Build
	Service string `json:"service"`
	// RootPath is ROOT_PATH (absent at the root): the browser pages tell
	// the links the service gave, which begin with it, from their own.
	RootPath  string          `json:"root_path,omitempty"`
	Version   string          `json:"version"`
	Endpoints []Endpoint      `json:"endpoints"`
	Limits    json.RawMessage `json:"limits"`
}

func (s *Service) serveInfo(w http.ResponseWriter, _ *http.Request) {
	b, err := s.info()
	if err != nil {
		s.Logger.Error("/info cannot be encoded", "error", err.Error())
		WriteError(w, http.StatusInternalServerError, ReasonInternal, "the service description cannot be encoded")
		return
	}
	WriteJSON(w, http.StatusOK, json.RawMessage(b))
}

// info is the body of /info: the service's members, then those of
// Index.Info; limits holds max_upload_mb, then the members of Index.Limits.
func (s *Service) info() ([]byte, error) {
	limits, err := joinObjects(map[string]float64{"max_upload_mb": s.Config.MaxUploadMB()}, s.opts.Index.Limits)
	if err != nil {
		return nil, err
	}
	return joinObjects(info{
		Build: s.Config.Build, Service: s.opts.Name, RootPath: string(s.Config.RootPath), Version: s.opts.Version,
		Endpoints: s.Endpoints(), Limits: limits,
	}, s.opts.Index.Info)
}

// joinObjects is the JSON object of base followed by the members of the
// JSON object of more (nil: none), each in its own order.
func joinObjects(base, more any) ([]byte, error) {
	b, err := json.Marshal(base)
	if err != nil || more == nil {
		return b, err
	}
	m, err := json.Marshal(more)
	if err != nil {
		return nil, err
	}
	if len(m) < 2 || m[0] != '{' || len(b) < 2 || b[0] != '{' {
		return nil, fmt.Errorf("%T and %T: want JSON objects", base, more)
	}
	if bytes.Equal(m, []byte("{}")) {
		return b, nil
	}
	if bytes.Equal(b, []byte("{}")) {
		return m, nil
	}
	out := append(b[:len(b)-1:len(b)-1], ',')
	return append(out, m[1:]...), nil
}

// RelativeRedirect answers 301 with a Location relative to the request's
// URL (as "../docs" for /docs/), which a client resolves against the URL it
// asked for: under a reverse proxy's path (/pageclass/docs/) it stays
// there. http.Redirect makes a relative location absolute from the path
// the service saw, which drops the proxy's path.
func RelativeRedirect(location string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Location", location)
		w.WriteHeader(http.StatusMovedPermanently)
	})
}
