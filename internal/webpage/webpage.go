// Package webpage serves the browser pages of both services at /frontend:
// a tool's own files (index.html, its script and style, embedded in its
// binary, nothing fetched from elsewhere) and what they share: common.js
// (the service's calls with its token, and its errors in words: api,
// detailText, answerOf, errorWords) and common.css (the page's frame, the
// form, the error box).
package webpage

import (
	"embed"
	"io/fs"
	"net/http"
	"path"

	"archivekit/internal/service"
)

//go:embed common.js common.css
var common embed.FS

// Common is the shared files' tree: common.js and common.css.
var Common fs.FS = common

// Routes are the routes of a tool's browser page: the page, its files, and
// /frontend/ leading to the page. They load without the API token (give
// them as service.Options.Pages); Serve registers them.
var Routes = []string{"GET /frontend", "GET /frontend/{asset}", "GET /frontend/{$}"}

// Serve registers Routes on svc, served by h (a tool's Handler): the page
// listed in /info as what.
func Serve(svc *service.Service, what string, h http.Handler) {
	svc.Route(Routes[0], what, h.ServeHTTP)
	for _, r := range Routes[1:] {
		svc.Handle(r, h)
	}
}

// Handler serves /frontend (the tool's index.html) and /frontend/<asset>:
// common.js and common.css from Common, any other asset from the folder
// dir of files (a tool's embedded "static"). Unknown assets answer 404.
func Handler(tree fs.FS, dir string) http.Handler {
	files, err := fs.Sub(tree, dir)
	if err != nil {
		panic(err) // dir is a constant of the caller's; fs.Sub fails only on an invalid name
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		name := path.Base(r.URL.Path)
		if r.URL.Path == "/frontend/" || (name == "index.html" && r.URL.Path != "/frontend") {
			// The page's links are relative to /frontend (frontend/app.js,
			// docs), so that they hold under a reverse proxy's path: it
			// is served there only.
			service.RelativeRedirect("../frontend").ServeHTTP(w, r)
			return
		}
		if r.URL.Path == "/frontend" {
			name = "index.html"
		}
		from := files
		if name == "common.js" || name == "common.css" {
			from = Common
		}
		b, err := fs.ReadFile(from, name)
		if err != nil {
			service.WriteError(w, http.StatusNotFound, service.ReasonNotFound, "Not Found: no asset "+name+" in /frontend")
			return
		}
		w.Header().Set("Content-Type", contentType(name))
		w.Header().Set("Cache-Control", "no-cache")
		service.PageHeaders(w.Header())
		_, _ = w.Write(b)
	})
}

func contentType(name string) string {
	switch path.Ext(name) {
	case ".html":
		return "text/html; charset=utf-8"
	case ".js":
		return "text/javascript; charset=utf-8"
	case ".css":
		return "text/css; charset=utf-8"
	}
	return "application/octet-stream"
}
