// Package frontend is the translator's browser interface, served by
// translate-api at /frontend: a static page (embedded in the binary,
// nothing fetched from elsewhere; the shared script and style of
// internal/webpage) that uploads one XML document (ALTO, PAGE-XML, hOCR or
// a metadata record) to POST /translate with the source and target
// languages and the output mode, asks for the JSON answer, and shows what
// a person checks: the counts (units, translated, skipped, backend calls),
// the document's warnings in words, the units translated (source beside
// target, first 500), and a download of the translated document under the
// service's name for it.
package frontend

import (
	"embed"
	"net/http"

	"archivekit/internal/webpage"
)

// static holds index.html, app.js and style.css (common.js and common.css
// are internal/webpage's).
//
//go:embed static
var static embed.FS

// Handler serves /frontend (the page) and /frontend/<asset> (its files and
// the shared ones). Unknown assets answer 404.
func Handler() http.Handler { return webpage.Handler(static, "static") }
