package service

import (
	"embed"
	"encoding/json"
	"net/http"
)

// The /docs page: a self-written HTML+JS renderer of /openapi.json, embedded
// in the binary so that the page needs nothing but the service itself.
//
//go:embed docs/index.html docs/docs.js docs/docs.css
var docsFS embed.FS

//go:embed openapi_service.json
var serviceFragment []byte

var docsAssets = map[string]string{
	"docs.js":  "text/javascript; charset=utf-8",
	"docs.css": "text/css; charset=utf-8",
}

func serveDocsPage(w http.ResponseWriter, _ *http.Request) {
	b, err := docsFS.ReadFile("docs/index.html")
	if err != nil {
		WriteError(w, http.StatusInternalServerError, ReasonInternal, "documentation page missing from the build")
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	PageHeaders(w.Header())
	_, _ = w.Write(b)
}

func serveDocsAsset(w http.ResponseWriter, r *http.Request) {
	name := r.PathValue("asset")
	ct, ok := docsAssets[name]
	if !ok {
		WriteError(w, http.StatusNotFound, ReasonNotFound, "Not Found")
		return
	}
	b, err := docsFS.ReadFile("docs/" + name)
	if err != nil {
		WriteError(w, http.StatusInternalServerError, ReasonInternal, "documentation asset missing from the build")
		return
	}
	w.Header().Set("Content-Type", ct)
	PageHeaders(w.Header())
	w.Header().Set("Cache-Control", "public, max-age=3600")
	_, _ = w.Write(b)
}

// serviceOpenAPI is a fresh copy of the service's own OpenAPI paths and
// schemas (probes, metrics, error bodies), merged into every tool document.
// Tools refer to the error bodies as #/components/schemas/HTTPError and
// #/components/schemas/HTTPValidationError.
func serviceOpenAPI() map[string]any {
	var m map[string]any
	if err := json.Unmarshal(serviceFragment, &m); err != nil {
		panic("service: embedded openapi_service.json is not JSON: " + err.Error())
	}
	return m
}
