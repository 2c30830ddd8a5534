// Package frontend is the page classifier's browser interface, served by
// pageclass-api at /frontend: a static page (HTML, CSS and JavaScript
// embedded in the binary, nothing fetched from elsewhere) that uploads page
// images and PDFs to the service, one or several at once (one request per
// file, or one job), lets the user pick one model or the ensemble and the number of
// categories, and, for PDFs and TIFFs, the pages to classify (the pages
// field of /predict_document, such as 1-3,7; empty: every page), and shows
// every page in a table (file, page with its PDF page label, category, score,
// second choice, review in words) with CSV and JSON downloads of the table
// (the page number and, in page_label, its PDF page label),
// the category legend (the glossary from /info), and each page's card (its
// Top-N with score bars and a thumbnail), 20 at a time with Previous and
// Next; a click on a row of the table shows that page's card. The review is
// said in words ("models disagree", "close second choice", "nearly blank
// page", "probably turned"), a page condition only when it fires. Errors show the API's detail; a file
// that fails gets a row with its error and the others go on. On a service
// with jobs (POST /jobs among the endpoints of /info) a batch is sent as
// one job whose id the address keeps (#job=<id>): the page polls its
// progress, shows its pages as its items end, offers the pages done so
// far as partial downloads (named so, the JSON with the job's state and
// counts) until it ends, and shows them again when opened again, a page
// image's card with the service's thumbnail of the file the job keeps
// (GET /jobs/{id}/results/{item}/thumbnail; a book's page says it has no
// preview).
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
