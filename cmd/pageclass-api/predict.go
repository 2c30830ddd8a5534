package main

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"archivekit/internal/docrecord"
	"archivekit/internal/licence"
	"archivekit/internal/pageclass/classify"
	"archivekit/internal/pageclass/imageio"
	"archivekit/internal/pageclass/registry"
	"archivekit/internal/pageclass/review"
	"archivekit/internal/service"
)

// predict serves /predict_image (document false) and /predict_document in
// three steps: parsePredict reads and checks the request, runPredict
// classifies its pages, respond writes the answer.
func (s *server) predict(document bool) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		req, ok := parsePredict(w, r, document)
		if !ok {
			return
		}
		req.maxPDFPages, req.decode, req.maxRender = s.maxPDFPages, s.decode, s.maxRender
		if document {
			service.AddLimit(w.Header(), "max_pdf_pages", s.maxPDFPages)
			service.AddLimit(w.Header(), "pdf_render_dpi", s.decode.DPI)
			service.AddLimit(w.Header(), "max_render_s", s.maxRender.Seconds())
		}
		res, fail := s.runPredict(r.Context(), req)
		if fail != nil {
			fail.write(w)
			return
		}
		res.licence = s.answerLicence(len(res.demo) > 0)
		res.respond(w, req)
	}
}

// answerLicence is the licence an answer carries: that of the models that
// answered, with the demo models' condition when they did.
func (s *server) answerLicence(demo bool) licence.Resolution {
	var conds []string
	if demo {
		conds = append(conds, "demo")
	}
	return s.comps.Resolve(s.comps.Counting(conds...)...)
}

// failure is an answer other than 200 OK. The zero failure writes nothing:
// the client went away or the request's deadline passed.
type failure struct {
	status int
	reason service.Reason
	msg    string
}

func failf(status int, reason service.Reason, format string, a ...any) *failure {
	return &failure{status: status, reason: reason, msg: fmt.Sprintf(format, a...)}
}

// gone is the failure of a request whose context is done.
var gone = &failure{}

func (f *failure) write(w http.ResponseWriter) {
	if f.status != 0 {
		service.WriteError(w, f.status, f.reason, f.msg)
	}
}

// predictRequest is a checked prediction request.
type predictRequest struct {
	*form
	document bool
	// base is the uploaded document_json parsed (nil: none).
	base *docrecord.Record
	// maxPDFPages and decode are the service's MAX_PDF_PAGES and decoding
	// options (PDF_RENDER_DPI).
	maxPDFPages int
	decode      imageio.Options
	// maxRender is the time the request may spend on its pages (-max-render).
	maxRender time.Duration
	// tiff: a /predict_document file not labelled application/pdf whose
	// content is a TIFF (a multi-page scan), classified page by page like
	// a PDF.
	tiff bool
}

// parsePredict reads the form (parseForm), checks the file's content type
// against the endpoint and parses the baseline record; it answers the
// request itself when they are not valid.
func parsePredict(w http.ResponseWriter, r *http.Request, document bool) (*predictRequest, bool) {
	f, ok := parseForm(w, r)
	if !ok {
		return nil, false
	}
	req := &predictRequest{form: f, document: document}
	fail := req.checkType()
	if fail == nil {
		fail = req.parseBaseline()
	}
	if fail != nil {
		fail.write(w)
		return nil, false
	}
	return req, true
}

// checkType refuses a file whose content type the endpoint does not take.
func (req *predictRequest) checkType() *failure {
	f := req.form
	if f.book != "" {
		if !req.document {
			return failf(http.StatusUnprocessableEntity, service.ReasonBadField, "the book field names a METS file or a IIIF manifest: send it to /predict_document (/predict_image classifies one image)")
		}
		return nil
	}
	if req.document {
		// A TIFF is taken by its content, whatever its label (image/tiff,
		// application/pdf, or application/octet-stream from a client that
		// does not know the name); so is a PDF sent without a label of its
		// own (none, or application/octet-stream: Python's requests sends
		// none). A PDF labelled as something else is refused (spec 4.3).
		req.tiff = imageio.Sniff(f.file) == ".tif"
		unlabelledPDF := unlabelled(f.ctype) && imageio.IsPDF(f.file)
		if !req.tiff && f.ctype != "application/pdf" && !unlabelledPDF {
			return failf(http.StatusBadRequest, service.ReasonUnsupportedFormat,
				"file %q has content type %q: /predict_document accepts application/pdf only, and TIFF files by their content (send other page images to /predict_image)%s", f.name, f.ctype, pdfHint(f.file))
		}
	}
	if !req.document && !strings.HasPrefix(f.ctype, "image/") && !unlabelledImage(f.ctype, f.file) {
		return failf(http.StatusBadRequest, service.ReasonUnsupportedFormat,
			"file %q has content type %q: /predict_image accepts image/* only, and an image sent as application/octet-stream by its content (send PDFs to /predict_document)", f.name, f.ctype)
	}
	if !req.document && imageio.IsPDF(f.file) {
		// By its content, whatever its image/* label (a PDF labelled image/png was
		// classified as an image, its first page only).
		return failf(http.StatusBadRequest, service.ReasonUnsupportedFormat,
			"file %q is a PDF (content type %q): send PDFs to /predict_document, labelled application/pdf (or without a content type): /predict_document takes a PDF by its label", f.name, f.ctype)
	}
	if !req.document && f.pages != nil {
		return failf(http.StatusUnprocessableEntity, service.ReasonBadField, "the pages field selects pages of a PDF: send it to /predict_document (/predict_image classifies one image)")
	}
	return nil
}

// pdfHint is what the refusal of a PDF labelled other than
// application/pdf adds (a PDF named .jpg, labelled image/jpeg by its
// client, was sent from /predict_image to /predict_document and back).
func pdfHint(data []byte) string {
	if imageio.IsPDF(data) {
		return "; this file is a PDF by its content: send it labelled application/pdf, or without a content type"
	}
	return ""
}

// unlabelledImage says whether a file sent without a type of its own
// (application/octet-stream, or none: what curl and most clients send for
// a .tif or .webp they have no type for) is a page image by its content,
// which /predict_image then takes as if it were labelled image/*. A PDF is
// not: it goes to /predict_document.
func unlabelledImage(ctype string, data []byte) bool {
	if !unlabelled(ctype) {
		return false
	}
	ext := imageio.Sniff(data)
	return ext != "" && ext != ".pdf"
}

// unlabelled says whether a part's content type says nothing of its own:
// none, or application/octet-stream.
func unlabelled(ctype string) bool { return ctype == "" || ctype == "application/octet-stream" }

// parseBaseline parses the uploaded document_json, if any.
func (req *predictRequest) parseBaseline() *failure {
	if !req.hasBase {
		return nil
	}
	var err error
	req.base, err = docrecord.Parse(req.baseline)
	switch {
	case errors.Is(err, docrecord.ErrNewerSchema):
		return &failure{http.StatusUnprocessableEntity, service.ReasonSchemaTooNew, "document_json was written by a newer schema than this service supports: " + err.Error()}
	case err != nil:
		return &failure{http.StatusUnprocessableEntity, service.ReasonBadField, "document_json cannot be parsed: " + err.Error()}
	}
	return nil
}

// predicted is what runPredict found for a request: the mean
// probabilities and the review of every page, the calibration applied, the
// thumbnails asked for, and the updated record asked for.
type predicted struct {
	// pages is the document's page count; numbers the 1-based numbers of
	// the pages classified (every page, or those the pages field selected)
	// and labels their PDF page labels ("" where the PDF defines none).
	pages     int
	numbers   []int
	labels    []string
	maxRender time.Duration // rendering budget of the request (-max-render)
	probs     [][]float64
	reviews   []*review.Page
	cal       calibration
	thumbs    []string
	rec       any
	schemaErr []string
	// demo names the shipped demo models among those that answered;
	// models are all of them, with their digests.
	demo   []string
	models []modelRef
	// licence is the licence the answer carries (answerLicence).
	licence licence.Resolution
	// ids and orders are a book's pages' IDs and METS ORDERs, skipped its
	// pages not classified (book.go).
	ids, orders []string
	skipped     []skippedPage
	// bookProblems are what the reader said of the book (a canvas painted
	// by two images, files listed by no page).
	bookProblems []string
}

// unservedVersion says why a version asked for is not served, and what is.
func unservedVersion(v string) string {
	return fmt.Sprintf("this service has no model of that revision, or could not load it (its log says why); the ensemble revisions %s and all are always available%s", strings.Join(registry.Ensemble, ", "), registry.GenerationNote(v))
}

// runPredict classifies every page of the request's file with the models
// of its version and makes the document record asked for.
func (s *server) runPredict(ctx context.Context, req *predictRequest) (*predicted, *failure) {
	f := req.form
	members, err := s.engine.members(ctx, f.version)
	if err != nil {
		// The cause names the service's folders and files: it is for the
		// operator's log, not the client's answer (which showed them).
		s.svc.Logger.WarnContext(ctx, "version asked for cannot be served", "version", f.version, "error", err.Error())
		return nil, failf(http.StatusUnprocessableEntity, service.ReasonUnknownVersion, "version %s cannot be served: %s", f.version, unservedVersion(f.version))
	}
	// The joint per-page step of internal/pageclass/classify (the command line's):
	// each member's forward passes go through its batcher.
	step := classify.NewStep(modelsOf(members), s.engine.orient, func(ctx context.Context, i int, pages [][]float32) ([][]float32, error) {
		return members[i].probabilities(ctx, pages)
	})
	var res *predicted
	var pages []classify.Page
	var fail *failure
	if f.book != "" {
		res, pages, fail = s.classifyBook(ctx, req, step, s.bookSize(members))
	} else {
		res, pages, fail = req.classifyFile(ctx, step)
	}
	if fail != nil {
		return nil, fail
	}
	if res.cal, err = s.engine.calibration(members); err != nil {
		return nil, &failure{http.StatusInternalServerError, service.ReasonInternal, "calibration: " + err.Error()}
	}
	res.probs = make([][]float64, len(pages))
	res.reviews = make([]*review.Page, len(pages))
	// A request cut meanwhile (its client gone, its job canceled) gets no
	// answer: its pages are not counted (a canceled job's metrics counted
	// a page its results did not have).
	counted := ctx.Err() == nil
	for i, p := range pages {
		res.probs[i] = p.Mean
		rv := p.Review(res.cal.applied).Rounded()
		res.reviews[i] = &rv
		if !counted {
			continue
		}
		s.svc.Metrics.AddCount(metricPages, top(p.Mean, 1)[0].Label, 1)
		if rv.NeedsReview != nil && *rv.NeedsReview {
			s.svc.Metrics.AddCount(metricFlagged, "", 1)
		}
	}
	for _, m := range members {
		if m.demo {
			res.demo = append(res.demo, m.model.Name)
		}
		res.models = append(res.models, modelRef{Name: m.model.Name, Digest: m.digest})
	}
	if f.wantRecord {
		if res.rec, res.schemaErr, err = s.record(req.base, f, res, len(res.demo) > 0); errors.Is(err, docrecord.ErrBaseline) {
			// The baseline's own structure cannot take the page
			// categories (its pages a string): the request's fault, as
			// translate-api answers it (it was 500 internal).
			return nil, &failure{http.StatusUnprocessableEntity, service.ReasonBadField, "document_json: " + err.Error()}
		} else if err != nil {
			return nil, &failure{http.StatusInternalServerError, service.ReasonInternal, err.Error()}
		}
	}
	return res, nil
}

// classifyFile classifies the pages of the request's file.
func (req *predictRequest) classifyFile(ctx context.Context, step *classify.Step) (*predicted, []classify.Page, *failure) {
	doc, fail := req.open()
	if fail != nil {
		return nil, nil, fail
	}
	res := &predicted{pages: doc.Pages(), maxRender: req.maxRender}
	if doc.IsPDF() {
		// Rendering leaves C memory (poppler, libvips) in glibc's
		// arenas: give it back once the document is done.
		defer imageio.ReleaseMemory()
	}
	idx, _ := selectPages(req.pages, doc.Pages()) // checked by open
	for _, i := range idx {
		res.numbers = append(res.numbers, i+1)
		res.labels = append(res.labels, doc.Label(i))
	}
	pages, fail := res.classify(ctx, req, doc, step, idx)
	return res, pages, fail
}

// open decodes the request's file and refuses a document that is not a
// PDF (or a TIFF, req.tiff) or has too many pages, and an image of several
// pages.
func (req *predictRequest) open() (*imageio.Doc, *failure) {
	f := req.form
	if req.document && !req.tiff && !imageio.IsPDF(f.file) {
		// Told before decoding, by the content rule every input is told
		// by: text or an image labelled application/pdf is a file of the
		// wrong kind, not a PDF that cannot be read.
		return nil, failf(http.StatusUnprocessableEntity, service.ReasonUnsupportedFormat, "%q is labelled application/pdf but is not a PDF", f.name)
	}
	doc, err := req.decode.Decode(f.file, f.name)
	if err != nil {
		kind := "an image"
		switch {
		case req.tiff:
			kind = "a TIFF"
		case req.document:
			kind = "a PDF"
		}
		return nil, decodeFailure(err, "%q cannot be read as %s: %v", f.name, kind, err)
	}
	n := doc.Pages()
	idx, err := selectPages(f.pages, n)
	if err != nil {
		return nil, failf(http.StatusUnprocessableEntity, service.ReasonBadField, "%q: %v", f.name, err)
	}
	if req.document && len(idx) > req.maxPDFPages {
		if f.pages != nil {
			return nil, failf(http.StatusRequestEntityTooLarge, service.ReasonTooManyPages, "%q: %d pages selected: at most %d pages are classified per request (MAX_PDF_PAGES)", f.name, len(idx), req.maxPDFPages)
		}
		return nil, failf(http.StatusRequestEntityTooLarge, service.ReasonTooManyPages, "%q has %d pages: at most %d pages are classified per request (MAX_PDF_PAGES); select some with the pages field, such as pages=1-%d", f.name, n, req.maxPDFPages, req.maxPDFPages)
	}
	if !req.document && n > 1 {
		// A multi-page TIFF: the image response holds one page, and
		// answering the first alone would drop the others unseen.
		return nil, failf(http.StatusUnprocessableEntity, service.ReasonTooManyPages,
			"%q has %d pages: /predict_image classifies one page; send it to /predict_document, which classifies every page of a TIFF (as pageclass -f does)", f.name, n)
	}
	return doc, nil
}

// decodeFailure is the failure of a file that cannot be decoded: 413
// too_many_pixels for one over the pixel budget, else 422 undecodable.
func decodeFailure(err error, format string, a ...any) *failure {
	if errors.Is(err, imageio.ErrTooManyPixels) {
		return failf(http.StatusRequestEntityTooLarge, service.ReasonTooManyPixels, format, a...)
	}
	return failf(http.StatusUnprocessableEntity, service.ReasonUndecodable, format, a...)
}

// classify runs the step over the pages of doc at the indexes idx,
// pageChunk pages at a time, and keeps the thumbnails asked for.
func (res *predicted) classify(ctx context.Context, req *predictRequest, doc *imageio.Doc, step *classify.Step, idx []int) ([]classify.Page, *failure) {
	n := len(idx)
	pages := make([]classify.Page, 0, n)
	for start := 0; start < n; start += pageChunk {
		if ctx.Err() != nil {
			return nil, gone
		}
		end := min(n, start+pageChunk)
		data := make([]float32, 0, (end-start)*step.Width()) // the chunk's prepared pages
		for k, i := range idx[start:end] {
			var fail *failure
			if data, fail = res.prepare(ctx, req, doc, step, i, data); fail != nil {
				return nil, fail
			}
			if done := start + k + 1; done < n {
				if fail := res.overRender(req, doc, done, n); fail != nil {
					return nil, fail
				}
			}
		}
		ps, err := step.Run(ctx, data, end-start)
		if err != nil {
			if ctx.Err() != nil {
				return nil, gone
			}
			return nil, failf(http.StatusInternalServerError, service.ReasonInternal, "%q: inference failed: %v", req.name, err)
		}
		pages = append(pages, ps...)
	}
	return pages, nil
}

// overRender refuses the request when the time spent on its pages (done of
// n so far) is over its budget (-max-render); nil otherwise.
func (res *predicted) overRender(req *predictRequest, doc *imageio.Doc, done, n int) *failure {
	t := doc.RenderTime()
	if res.maxRender <= 0 || t <= res.maxRender {
		return nil
	}
	return failf(http.StatusUnprocessableEntity, service.ReasonRenderBudget,
		"%q: its pages cost more time than one request may spend on them (%.0f s decoding and preparing %d of %d pages; the limit is %g s, -max-render; PDF pages are rendered to at most %d pixels each)",
		req.name, t.Seconds(), done, n, res.maxRender.Seconds(), imageio.DefaultMaxPDFPagePixels)
}

// prepare decodes page i inside the process-wide pixel budget, prepares it
// for the step (appended to data) and drops it: a request holds one decoded
// page at a time.
func (res *predicted) prepare(ctx context.Context, req *predictRequest, doc *imageio.Doc, step *classify.Step, i int, data []float32) ([]float32, *failure) {
	var preErr error
	err := doc.Use(ctx, i, func(img imageio.Image) error {
		row, err := step.Prepare(img)
		if err != nil {
			preErr = err
			return err
		}
		data = append(data, row...)
		if req.thumbnails {
			res.thumbs = append(res.thumbs, thumbnail(img, thumbWidth))
		}
		return nil
	})
	switch {
	case ctx.Err() != nil:
		return nil, gone
	case preErr != nil:
		return nil, failf(http.StatusInternalServerError, service.ReasonInternal, "%q: page %d: preprocessing failed: %v", req.name, i+1, preErr)
	case err != nil:
		return nil, decodeFailure(err, "%q cannot be decoded: %v", req.name, err)
	}
	return data, nil
}

// demoStatus says whether demo models answered, and which.
func (res *predicted) demoStatus() demoStatus {
	return demoStatus{Demo: len(res.demo) > 0, DemoModels: res.demo, Models: res.models,
		License: res.licence.EffectiveLicense, LicenseURL: res.licence.EffectiveLicenseURL}
}

// respond writes the answer of a classified request: the image response
// (its one page) or the document response (every page).
func (res *predicted) respond(w http.ResponseWriter, req *predictRequest) {
	f := req.form
	if !req.document {
		resp := imageResponse{Type: "image", Version: f.version,
			Predictions: top(res.probs[0], f.topn), Record: res.rec, SchemaError: res.schemaErr,
			Review: res.reviews[0], ReviewCalibration: res.cal.applied.Public(), demoStatus: res.demoStatus()}
		if len(res.thumbs) > 0 {
			resp.Thumbnail = res.thumbs[0]
		}
		service.WriteJSON(w, http.StatusOK, resp)
		return
	}
	resp := documentResponse{Type: "document", Version: f.version, PageCount: res.pages, Record: res.rec, SchemaError: res.schemaErr,
		ReviewCalibration: res.cal.applied.Public(), demoStatus: res.demoStatus()}
	resp.Skipped, resp.BookProblems = res.skipped, res.bookProblems
	for i, p := range res.probs {
		pr := pageResult{Page: res.numbers[i], Label: res.labels[i], Predictions: top(p, f.topn), Review: res.reviews[i]}
		if i < len(res.ids) {
			pr.ID, pr.Order = res.ids[i], res.orders[i]
		}
		if i < len(res.thumbs) {
			pr.Thumbnail = res.thumbs[i]
		}
		resp.Pages = append(resp.Pages, pr)
	}
	service.WriteJSON(w, http.StatusOK, resp)
}
