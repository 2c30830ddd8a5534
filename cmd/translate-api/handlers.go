package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"mime"
	"mime/multipart"
	"net/http"
	"net/textproto"
	"net/url"
	"runtime/debug"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"archivekit/internal/book"
	"archivekit/internal/docrecord"
	"archivekit/internal/jobs"
	"archivekit/internal/licence"
	"archivekit/internal/service"
	"archivekit/internal/translate/alto"
	"archivekit/internal/translate/backend"
	"archivekit/internal/translate/langid"
	"archivekit/internal/translate/metadata"
	"archivekit/internal/translate/runmeta"
	"archivekit/internal/translate/session"
	"archivekit/internal/translate/translator"
	"archivekit/internal/translate/transport"
	"archivekit/internal/translate/xmlsplice"
	"archivekit/internal/utf8name"
	"archivekit/internal/version"
)

// maxFieldBytes bounds one scalar form field.
const maxFieldBytes = 64 << 10

// Memory estimate of one request (memoryEstimate), fitted to two
// measurements of the peak resident memory above the warm service
// (docs/services.md): the 35 MB ALTO of TestTwoBigALTOMemory (569,856
// nodes, 977 MiB) and the dense 15.9 MB ALTO of
// BenchmarkLargeDocumentMemory (984,000 nodes, 858 MiB) give about 600
// bytes per XML node ('<' in the document) and 19.4 per byte of document;
// the estimate rounds up (20) and adds requestBase (1,004 and 874 MiB).
const (
	bytesPerNode = 600
	bytesPerByte = 20
	requestBase  = 8 << 20
)

// memoryEstimate is the memory a request for src (and baseline) is
// admitted with. The rule holds for PAGE-XML and hOCR too: measured on
// four producers of each (2026-11-28, docs/services.md), their peaks are
// 1.2 to 4.2 times under it (TestMemoryEstimateHolds); a rule of their own
// fitted to one producer was under the peaks of others (bytes alone do not
// tell: a PAGE file of many small words peaks at three times one of the
// same size with whole lines).
func memoryEstimate(src, baseline []byte) int64 {
	nodes := int64(bytes.Count(src, []byte("<")))
	return requestBase + nodes*bytesPerNode + int64(len(src)+len(baseline))*bytesPerByte
}

// freeAfterBytes: after a document larger than this, memory is returned to
// the system at once (debug.FreeOSMemory).
const freeAfterBytes = 4 << 20

// index is what translate-api adds to the service's / and /info (spec 4.2).
var index = &service.Index{
	Welcome:    "translate-api: POST an XML document (ALTO, PAGE-XML, hOCR or a metadata record) to /translate; see /info for the service description, /docs for the API and /frontend for the browser interface",
	DeepHealth: "checks the backend and the language identifier",
	Info: struct {
		SupportedFormats []docFormat `json:"supported_formats"`
	}{formats},
}

// docFormat is an entry of the supported_formats of /info.
type docFormat struct {
	Name        string `json:"name"`
	Extension   string `json:"extension"`
	Description string `json:"description"`
}

var formats = []docFormat{
	{"alto", ".alto.xml", "ALTO OCR XML: the text of every TextLine is translated; tags, attributes and coordinates are kept"},
	{"metadata", ".xml", "archaeological-record metadata XML, bare or in an OAI-PMH GetRecord envelope: the fields of the AMCR_FIELDS_PATH list are translated"},
	{"page", ".xml", "PAGE-XML (2013-07-15 to 2019-07-15), recognised by its root element PcGts: each TextLine gets a TextEquiv with the translation (append, PAGE's default) or its text replaced"},
	{"hocr", ".hocr", "hOCR (HTML), recognised by its ocr_page elements: a parallel hOCR whose only differences are the translated lines' text and lang"},
	{"book", "", "a METS file or IIIF manifest or collection, sent as the book_url form field instead of a file: its text files (ALTO, PAGE-XML, hOCR) are fetched (BOOK_HOSTS) and translated in page order; the answer is multipart/mixed, one part per translated file named by its path in the book, then book.json"},
}

// request is a parsed /translate request.
type request struct {
	name     string // the client's file name, reduced to its last element
	hasFile  bool
	files    int // file parts in the form (more than one is refused)
	src      []byte
	baseline []byte
	hasBase  bool
	fields   map[string]string
	// given counts each form field's parts (repeated: refused).
	given map[string]int
}

// scalarFields are the fields /translate reads as form fields or query
// parameters, each at most once in each place.
var scalarFields = []string{"source_lang", "target_lang", "is_alto", "output_mode", "element_lang", "book_url", "response_format"}

// repeated refuses each scalar field sent more than once in the body or
// in the query: the first was taken, so that two target_lang fields (en,
// de) translated into English without a word (pageclass-api refused them).
func (q *request) repeated(r *http.Request) []service.ValidationError {
	var verrs []service.ValidationError
	query := r.URL.Query()
	for _, name := range scalarFields {
		if n := q.given[name]; n > 1 {
			verrs = append(verrs, service.DuplicateError(n, "body", name))
		}
		if n := len(query[name]); n > 1 {
			verrs = append(verrs, service.DuplicateError(n, "query", name))
		}
	}
	return verrs
}

// scalar returns a form field, else the query parameter of that name.
func (q *request) scalar(r *http.Request, name string) (value, where string, ok bool) {
	if v, ok := q.fields[name]; ok {
		return v, "body", true
	}
	if vs, ok := r.URL.Query()[name]; ok && len(vs) > 0 {
		return vs[0], "query", true
	}
	return "", "", false
}

// readRequest reads the multipart body into memory (the document is parsed
// from memory; nothing of a request is written to disk). A problem with the
// body itself is answered here and reported as handled.
func readRequest(w http.ResponseWriter, r *http.Request) (*request, bool) {
	q := &request{fields: map[string]string{}, given: map[string]int{}}
	mr, err := r.MultipartReader()
	if err != nil {
		service.WriteError(w, http.StatusBadRequest, service.ReasonBadRequest, "the multipart body cannot be read: "+err.Error())
		return nil, false
	}
	for {
		p, err := mr.NextPart()
		if err == io.EOF {
			break
		}
		if err != nil {
			service.WriteBodyError(w, err)
			return nil, false
		}
		switch p.FormName() {
		case "file":
			q.files++
			q.hasFile = true
			q.name = service.ClientName(p.FileName())
			q.src, err = io.ReadAll(p)
		case "document_json":
			q.hasBase = true
			q.baseline, err = io.ReadAll(p)
		default:
			var b []byte
			b, err = io.ReadAll(io.LimitReader(p, maxFieldBytes+1))
			if err == nil && len(b) > maxFieldBytes {
				service.WriteError(w, http.StatusBadRequest, service.ReasonBadField, fmt.Sprintf("form field %q is longer than %d bytes", p.FormName(), maxFieldBytes))
				return nil, false
			}
			if _, dup := q.fields[p.FormName()]; !dup {
				q.fields[p.FormName()] = strings.TrimSpace(string(b))
			}
			q.given[p.FormName()]++
		}
		if err != nil {
			service.WriteBodyError(w, err)
			return nil, false
		}
	}
	return q, true
}

// serveTranslate is POST /translate: the request is parsed and checked
// (parseTranslate), the document translated (runTranslate) and the answer
// written (respondTranslate). A job's item attaches the translation's
// statistics to the item (jobs.Annotate), for the job's run metadata
// (jobRecord).
func (s *server) serveTranslate(w http.ResponseWriter, r *http.Request) {
	q, ok := readUpload(w, r)
	if !ok {
		return
	}
	// Admission by memory: the document's estimated peak against the
	// process budget (MEMORY_BUDGET_MB or the container limit).
	estimate := memoryEstimate(q.src, q.baseline)
	service.AddLimit(w.Header(), "memory_estimate_bytes", estimate)
	if s.mem != nil && s.mem.Total > 0 {
		service.AddLimit(w.Header(), "memory_budget_bytes", s.mem.Total)
	}
	release, err := s.mem.Acquire(r.Context(), estimate)
	if err != nil {
		if errors.Is(err, service.ErrOverBudget) {
			service.WriteOverBudget(w, err)
		}
		return
	}
	defer release()
	if len(q.src) > freeAfterBytes {
		// A large document leaves hundreds of MB of garbage (tree, edits,
		// alignment): give it back to the system once answered instead of
		// holding it until the runtime's background return gets to it.
		defer debug.FreeOSMemory()
	}
	if u, _, ok := q.scalar(r, "book_url"); ok && u != "" {
		s.serveBook(w, r, q, u)
		return
	}
	job, ok := s.parseTranslate(w, r, q)
	if !ok {
		return
	}
	job.docLang = bookLanguage(r.Context(), job.source)
	job.next, job.prev = hyphenLink(r.Context())
	res, fail := s.runTranslate(r.Context(), job)
	if fail != nil {
		if fail.status != 0 {
			if fail.retryAfter != "" {
				w.Header().Set("Retry-After", fail.retryAfter)
			}
			service.WriteError(w, fail.status, fail.reason, fail.msg)
		}
		return
	}
	if err := jobs.Annotate(r.Context(), itemSummary{Item: runmeta.ItemOf(res.out), HyphenNext: res.out.Carried}); err != nil {
		s.log.WarnContext(r.Context(), "the job item's statistics are not kept for the job's run metadata", "file", q.name, "error", err)
	}
	// The translation's working memory is garbage now; what is left is the
	// answer, about the document's size. Its reservation goes before the
	// answer is written: a client reading slowly, or not at all, held it
	// for the write deadline (up to half an hour for a large answer),
	// refusing other documents meanwhile.
	if len(q.src) > freeAfterBytes {
		debug.FreeOSMemory()
	}
	release()
	s.respondTranslate(w, job, res)
}

// bookLanguage is, for an item of a book job with source source, the
// document language of the item's text file: the book's, detected over
// all its files when the job read its book, else the one its METS
// declares (bookRecord, jobs.BookNote); "" for an explicit source, or
// outside a book job.
func bookLanguage(ctx context.Context, source string) string {
	var b runmeta.Book
	if note := jobs.BookNote(ctx); source != "auto" || note == nil || json.Unmarshal(note, &b) != nil {
		return ""
	}
	return b.Language()
}

// readUpload reads a multipart/form-data request (readRequest); any other
// content type is answered here (415, or 422 for JSON, which cannot carry
// the file) and reported as handled.
func readUpload(w http.ResponseWriter, r *http.Request) (*request, bool) {
	ct := r.Header.Get("Content-Type")
	mt, _, err := mime.ParseMediaType(ct)
	switch {
	case err == nil && mt == "multipart/form-data":
	case err == nil && mt == "application/json":
		// A JSON body cannot carry the file: the field is missing.
		service.WriteValidation(w, service.MissingError("body", "file"))
		return nil, false
	case ct == "" && r.ContentLength == 0 && r.URL.Query().Get("book_url") != "":
		// A book needs no upload: POST /translate?book_url=...&source_lang=
		// with no body, the query holding the fields (it was 415).
		return &request{fields: map[string]string{}}, true
	default:
		if ct == "" {
			ct = "none"
		}
		service.WriteError(w, http.StatusUnsupportedMediaType, service.ReasonUnsupportedMediaType,
			fmt.Sprintf("Content-Type %s is not supported: send the document as multipart/form-data with a file field", ct))
		return nil, false
	}
	return readRequest(w, r)
}

// translateJob is a checked /translate request.
type translateJob struct {
	q                    *request
	source, target, mode string
	isALTO               bool
	baseline             *docrecord.Record // nil without document_json
	book                 bool              // a book_url request: no file
	// json: response_format=json, the answer as one JSON body (json.go).
	json bool
	// docLang is, for a book's text file, the book's language (the
	// document rule of the source-language order).
	docLang string
	// next and prev join a word hyphenated across this book job item's
	// ALTO file and the next or previous item's (hyphenLink).
	next []byte
	prev *alto.Carried
	// element is the element_lang field: whether the element rule of the
	// source-language order is used; "" keeps the service's
	// (TRANSLATE_ELEMENT_LANG).
	element alto.ElementRule
}

// parseTranslate checks the fields of q, all reported at once, then the
// file name and the baseline record; a bad request is answered here and
// reported as handled.
func (s *server) parseTranslate(w http.ResponseWriter, r *http.Request, q *request) (*translateJob, bool) {
	job := &translateJob{q: q, source: "auto", target: "en", mode: s.set.OutputMode, isALTO: true}
	if verrs := job.parseFields(r); len(verrs) > 0 {
		service.WriteValidation(w, verrs...)
		return nil, false
	}
	if q.name == "" {
		service.WriteError(w, http.StatusUnprocessableEntity, service.ReasonBadField, "the file has no file name: upload the document as a file with its name (doc.alto.xml, doc.alto, record.xml, ...)")
		return nil, false
	}
	// As the command line: a document is recognised by its content
	// (ALTO, metadata, ...), whatever its name (.alto, .xml, .txt, ...;
	// spec 4.3 asks for names ending in .xml). A list of books by URL, the
	// command line's input, is not a document.
	if book.ListsURLs(q.src) {
		service.WriteError(w, http.StatusUnprocessableEntity, service.ReasonUnsupportedFormat, fmt.Sprintf("%q is a list of books (its first line is a URL), not a document: give the list to the command line (translate %s), send each book as book_url, or upload the XML document itself", q.name, q.name))
		return nil, false
	}
	if q.hasBase {
		var err error
		job.baseline, err = docrecord.Parse(q.baseline)
		switch {
		case errors.Is(err, docrecord.ErrNewerSchema):
			service.WriteError(w, http.StatusUnprocessableEntity, service.ReasonSchemaTooNew, "document_json was written by a newer schema than this service supports: "+err.Error())
			return nil, false
		case err != nil:
			service.WriteError(w, http.StatusUnprocessableEntity, service.ReasonBadField, "document_json cannot be parsed: "+err.Error())
			return nil, false
		}
		// Refused before anything is translated.
		if err := docrecord.CheckBaseline(job.baseline); err != nil {
			service.WriteError(w, http.StatusUnprocessableEntity, service.ReasonBadField, "document_json fails the record schema, so no valid record can be made from it: "+err.Error())
			return nil, false
		}
	}
	return job, true
}

// parseFields fills the job's languages, kind and mode from the form (or
// the query) and returns the problems found.
func (job *translateJob) parseFields(r *http.Request) []service.ValidationError {
	q := job.q
	var verrs []service.ValidationError
	if !q.hasFile && !job.book {
		verrs = append(verrs, service.MissingError("body", "file"))
	}
	if q.files > 1 {
		verrs = append(verrs, service.DuplicateError(q.files, "body", "file"))
	}
	verrs = append(verrs, q.repeated(r)...)
	return append(verrs, job.parseOptions(func(name string) (string, string, bool) { return q.scalar(r, name) })...)
}

// parseOptions fills the job's languages, kind and mode from the fields
// get reads (value, "body" or "query", and whether it was given) and
// returns the problems found.
func (job *translateJob) parseOptions(get func(name string) (value, where string, ok bool)) []service.ValidationError {
	var verrs []service.ValidationError
	if v, where, ok := get("source_lang"); ok && v != "" {
		job.source = translator.NormalizeLang(v)
		if !translator.ValidLang(job.source, true) {
			verrs = append(verrs, service.LanguageError(true, where, "source_lang"))
		}
	}
	if v, where, ok := get("target_lang"); ok && v != "" {
		job.target = translator.NormalizeLang(v)
		if !translator.ValidLang(job.target, false) {
			verrs = append(verrs, service.LanguageError(false, where, "target_lang"))
		}
	}
	if v, where, ok := get("is_alto"); ok {
		b, valid := service.ParseBool(v)
		if !valid {
			verrs = append(verrs, service.BoolParsingError(where, "is_alto"))
		}
		job.isALTO = b
	}
	if v, where, ok := get("output_mode"); ok && v != "" {
		if !translator.ValidMode(v) {
			verrs = append(verrs, service.ValidationError{Loc: []any{where, "output_mode"},
				Msg: "Input should be 'replace', 'append' or 'alternative'", Type: "literal_error"})
		}
		job.mode = v
	}
	if v, where, ok := get("element_lang"); ok && v != "" {
		e, err := translator.ParseElementRule("element_lang", v)
		if err != nil {
			verrs = append(verrs, service.ValidationError{Loc: []any{where, "element_lang"},
				Msg: "Input should be 'use' or 'ignore'", Type: "literal_error"})
		}
		job.element = e
	}
	if v, where, ok := get("response_format"); ok && v != "" {
		switch v {
		case "xml":
		case "json":
			job.json = true
		default:
			verrs = append(verrs, service.ValidationError{Loc: []any{where, "response_format"},
				Msg: "Input should be 'xml' or 'json'", Type: "literal_error"})
		}
	}
	return verrs
}

// pairRefused says why be does not translate from source (or, "auto",
// from any language detection tells) into target; nil when it does.
func pairRefused(ctx context.Context, be backend.Backend, source, target string) error {
	if source != "auto" {
		if err := be.Supports(ctx, source, target); err != nil {
			return fmt.Errorf("language pair %s-%s: %w", source, target, err)
		}
		return nil
	}
	// As translate refuses it up front: a target the backend translates
	// into from no language (before, nothing_translated).
	if err := backend.OffersTarget(ctx, be, source, target, langid.Languages()); err != nil {
		return fmt.Errorf("target_lang: %w", err)
	}
	return nil
}

// checkJobFields checks a job's fields as POST /translate checks each of
// its items' (jobs.Options.CheckFields): a language or output mode refused,
// a language pair the backend does not offer (when it answers), a
// document_json that cannot be parsed or fails the record schema. Before,
// such a job was accepted and every item failed 422.
func (s *server) checkJobFields(fields map[string]string) []service.ValidationError {
	job := &translateJob{source: "auto", target: "en", mode: s.set.OutputMode, isALTO: true}
	verrs := job.parseOptions(func(name string) (string, string, bool) {
		v, ok := fields[name]
		return v, "body", ok
	})
	if be := s.backend(); len(verrs) == 0 && be != nil {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		// A backend that does not answer now refuses nothing: the items
		// wait for it.
		if err := pairRefused(ctx, be, job.source, job.target); err != nil && !passing(err) && ctx.Err() == nil {
			verrs = append(verrs, service.ValidationError{Loc: []any{"body", "target_lang"}, Msg: service.Redact(err.Error()), Type: "value_error"})
		}
	}
	if v, ok := fields["document_json"]; ok {
		base, err := docrecord.Parse([]byte(v))
		if err == nil {
			err = docrecord.CheckBaseline(base)
		}
		if err != nil {
			verrs = append(verrs, service.ValidationError{Loc: []any{"body", "document_json"}, Msg: "document_json cannot be used: " + err.Error(), Type: "value_error"})
		}
	}
	return verrs
}

// translated is the outcome of a translation.
type translated struct {
	out     *translator.Output
	backend string // the backend's name
	// backendInfo says what the backend is (session.Describe): the JSON
	// answer names the model that produced it.
	backendInfo map[string]any
	usage       *translator.Usage
}

// answerError is a failed translation's answer: its status, reason and
// message; a zero status means no answer (the client went away).
type answerError struct {
	status int
	reason service.Reason
	msg    string
	// retryAfter, when not "", is sent as Retry-After: the backend was
	// unreachable, overloaded or failing, so the same request may succeed
	// later.
	retryAfter string
}

// backendRetryAfter is the Retry-After of an answer failed by the backend
// (not by the document), in seconds: the backend's own retries, spaced
// by their back-off, were spent already.
const backendRetryAfter = "30"

// passing says a translation failed on something that may pass: the
// backend could not be reached, or answered 429 or a 5xx after every retry,
// or answered every text alike (a sign-in page, a notice: ErrSameReply).
// A backend that refuses the service's credentials does not pass: its
// answer has no Retry-After, and a job does not run its item again.
func passing(err error) bool {
	var te *transport.Error
	if errors.As(err, &te) {
		return !te.Refused && (te.StatusCode == 0 || te.StatusCode == http.StatusTooManyRequests || te.StatusCode >= 500)
	}
	return errors.Is(err, backend.ErrSameReply)
}

// runTranslate translates the job's document with the backend in use and
// marks a cold backend that answered warm.
func (s *server) runTranslate(ctx context.Context, job *translateJob) (*translated, *answerError) {
	q := job.q
	be := s.backend()
	if be == nil {
		return nil, &answerError{status: http.StatusServiceUnavailable, reason: service.ReasonBackendUnavailable, msg: q.name + " cannot be translated now: the translation backend is not available (the deep health check says why); retry later", retryAfter: backendRetryAfter}
	}
	item, isItem := jobs.ItemName(ctx)
	probe, refused := s.admitSync(q.name, isItem)
	if refused != nil {
		return nil, refused
	}
	called := false
	defer func() {
		if !called {
			s.breaker.abandon(probe)
		}
	}()
	kind := translator.KindAuto
	if !job.isALTO {
		kind = translator.KindMetadata
	}
	if kind == translator.KindMetadata || translator.DetectKind(q.src) == translator.KindMetadata {
		kind = translator.KindMetadata
	}
	var fields []*metadata.XPath
	if kind == translator.KindMetadata {
		var err error
		if fields, err = translator.LoadFields(s.set.Fields, s.set.FieldsErr); err != nil {
			return nil, &answerError{status: http.StatusUnprocessableEntity, reason: service.ReasonFieldListUnreadable, msg: fmt.Sprintf(
				"%s is handled as metadata, but the field list (%s) cannot be read: %v", q.name, envFields, err)}
		}
	}
	if err := pairRefused(ctx, be, job.source, job.target); err != nil {
		return nil, &answerError{status: http.StatusUnprocessableEntity, reason: service.ReasonUnsupportedLanguage, msg: service.Redact(err.Error())}
	}

	usage := &translator.Usage{}
	opt := s.sess.Options()
	opt.Backend, opt.Source, opt.Target, opt.Mode, opt.Kind = be, job.source, job.target, alto.Mode(job.mode), kind
	opt.Fields, opt.Usage, opt.DocumentLang = fields, usage, job.docLang
	opt.Next, opt.Prev = job.next, job.prev
	if job.element != "" {
		order := *opt.Order
		order.Element = job.element
		opt.Order = &order
	}
	opt.Warn = func(m string) { s.log.WarnContext(ctx, m, "file", q.name) }
	if !isItem {
		// A synchronous request is named too, so that a refusal of the
		// reply it got can say which answers went out with it.
		item = syncRequestName(q.name, time.Now())
	}
	out, err := translator.Translate(backend.ForItem(ctx, item), q.src, q.name, opt)
	called = s.breakerDone(ctx, probe, out, err)
	if err != nil {
		if ctx.Err() != nil {
			return nil, &answerError{} // the client went away
		}
		if errors.As(err, new(*transport.Error)) {
			s.svc.Metrics.AddCount(metricBackendErrors, "", 1)
		}
		status, reason := failureStatus(err)
		// With the request's id (the access line's), and its client: the
		// two lines were tied by their times only.
		s.log.WarnContext(ctx, "translation failed", "file", q.name, "status", status, "reason", string(reason), "error", err)
		s.withdraw(ctx, item, err)
		what, hint := "translation failed: ", ""
		if errors.Is(err, alto.ErrNoAlternative) {
			what = "output_mode alternative refused: " // the document is fine in the other modes
		}
		if errors.Is(err, translator.ErrNothingTranslated) && book.Looks(q.src) {
			// A METS file or IIIF manifest uploaded as a document: its
			// text is in its text files, which book_url translates.
			hint = "; it looks like a book (a METS file or IIIF manifest): send its URL as book_url to translate its text files"
		}
		fail := &answerError{status: status, reason: reason, msg: what + service.Redact(err.Error()) + hint}
		if passing(err) {
			fail.retryAfter = backendRetryAfter
		}
		return nil, fail
	}
	level := slog.LevelInfo
	if out.Stats.NeedsAttention() {
		level = slog.LevelWarn // as translate logs it
	}
	s.log.Log(ctx, level, out.Summary, "file", q.name, "kind", string(out.Kind), "units", out.Stats.Units, "calls", out.Stats.Calls)
	if ctx.Err() == nil {
		// A request cut meanwhile (its job canceled) gets no answer: its
		// units are not counted (they were, and no record had them).
		s.svc.Metrics.AddCount(metricUnits, "", float64(out.Stats.Translated))
	}
	s.svc.Metrics.AddCount(metricBackendErrors, "", float64(out.Stats.TransportErrors))
	if st := s.state.Load(); st != nil && !st.warm && out.Stats.Calls > 0 && out.Stats.TransportErrors == 0 {
		s.state.Store(&warmth{be: be, warm: true}) // it answered: it is warm now
	}
	return &translated{out: out, backend: be.Name(), backendInfo: session.Describe(be), usage: usage}, nil
}

// breakerDone gives the breaker a translation's outcome, and reports
// whether it did: a request that ran out of REQUEST_TIMEOUT_S counts as the
// backend's failure (a backend that accepts connections and never answers
// fails so); one whose client went away does not count.
func (s *server) breakerDone(ctx context.Context, probe bool, out *translator.Output, err error) bool {
	timedOut := errors.Is(ctx.Err(), context.DeadlineExceeded)
	if ctx.Err() != nil && !timedOut {
		return false
	}
	// The backend's error alone: the document's name is another client's,
	// not for the answers the breaker gives.
	var te *transport.Error
	detail := ""
	switch {
	case errors.As(err, &te):
		detail = service.Redact(te.Error())
	case timedOut:
		detail = fmt.Sprintf("no answer within REQUEST_TIMEOUT_S=%g s", s.svc.Config.RequestTimeout.Seconds())
	}
	s.breaker.done(probe, err != nil && (passing(err) || timedOut), err == nil && out != nil && out.Stats.Calls > 0, detail)
	return true
}

// admitSync asks the breaker whether a synchronous request (not a job's
// item) may call the backend: refused is its 503 answer when it may not;
// probe is the breaker's (its outcome goes to done or abandon).
func (s *server) admitSync(name string, isItem bool) (probe bool, refused *answerError) {
	if isItem {
		return false, nil
	}
	probe, wait, why, ok := s.breaker.admit()
	if ok {
		return probe, nil
	}
	secs := max(1, int(wait.Round(time.Second)/time.Second))
	return false, &answerError{status: http.StatusServiceUnavailable, reason: service.ReasonBackendUnavailable, retryAfter: strconv.Itoa(secs),
		msg: fmt.Sprintf("%s cannot be translated now: the translation backend failed the last %d requests (%s); it is tried again in %d s", name, breakerTrip, why, secs)}
}

// failureStatus is the status and reason of a failed translation: 422 for
// a document with nothing to translate or over a work limit, a page image
// or PDF (not XML), or an ALTO
// version without ALTERNATIVE in output_mode alternative, 415 for an
// encoding not read, else 500 (malformed XML, backend failures: spec 7).
func failureStatus(err error) (int, service.Reason) {
	switch {
	case errors.Is(err, translator.ErrNothingTranslated):
		return http.StatusUnprocessableEntity, service.ReasonNothingTranslated
	case errors.Is(err, translator.ErrNotXML):
		return http.StatusUnprocessableEntity, service.ReasonUnsupportedFormat // a page image or PDF
	case errors.Is(err, alto.ErrNoAlternative):
		// As the command line refuses it: an ALTO version without
		// ALTERNATIVE asked for output_mode alternative.
		return http.StatusUnprocessableEntity, service.ReasonUnsupportedFormat
	case errors.Is(err, xmlsplice.ErrEncoding):
		return http.StatusUnsupportedMediaType, service.ReasonUnsupportedEncoding
	case errors.As(err, new(*xmlsplice.LimitError)):
		return http.StatusUnprocessableEntity, service.ReasonTooComplex // the document is over a work limit
	case errors.Is(err, xmlsplice.ErrDTD):
		return http.StatusInternalServerError, service.ReasonDTDRefused
	case errors.As(err, new(*xmlsplice.SyntaxError)):
		return http.StatusInternalServerError, service.ReasonNotWellFormed
	case errors.As(err, new(*transport.Error)), errors.Is(err, backend.ErrSameReply), errors.Is(err, backend.ErrFailed):
		// The backend failed after its retries, answers one text for
		// every request (a sign-in page, a notice, a refusal), or
		// answered with a refusal or no translation (a chat API's 401, a
		// reply cut by its token limit: it was "internal").
		return http.StatusInternalServerError, service.ReasonBackendError
	}
	return http.StatusInternalServerError, service.ReasonInternal
}

// respondTranslate answers the translated document, with the updated
// record in a multipart/mixed answer when a baseline was sent.
func (s *server) respondTranslate(w http.ResponseWriter, job *translateJob, res *translated) {
	out := res.out
	setCountHeaders(w.Header(), out.Stats)
	// The document's warnings (lines left without a word, languages left
	// untouched) were only in the service's log for an XML answer: their
	// count says to look (response_format=json gives their text).
	w.Header().Set(headerWarnings, fmt.Sprint(len(out.Warnings)))
	setLicence(w.Header(), s.answerLicence(res.usage.Components()))
	// What translated it, in every answer (the XML one named it nowhere;
	// the JSON one has backend and backend_info).
	w.Header().Set(headerBackend, res.backend)
	if job.json {
		s.respondJSON(w, job, res)
		return
	}
	ctype := textType(out.Kind == translator.KindHOCR) // an hOCR document is HTML, as its book item is typed
	if job.baseline == nil {
		w.Header().Set("Content-Type", ctype)
		w.Header().Set("Content-Disposition", attachment(out.Name))
		w.Header().Set("Content-Length", fmt.Sprint(len(out.Data)))
		w.WriteHeader(http.StatusOK)
		_, _ = w.Write(out.Data)
		return
	}
	rec, recName, err := s.record(job.baseline, out, job.q, job.target, res.backend, res.usage)
	if err != nil {
		clearAnswerHeaders(w.Header())
		service.WriteError(w, http.StatusInternalServerError, service.ReasonInternal, service.Redact(err.Error()))
		return
	}
	writeMixed(w, []mixedPart{
		{Name: out.Name, Type: ctype, Data: out.Data},
		{Name: recName, Type: "application/json", Data: rec},
	})
}

// Count headers of a 200 answer: how many units (ALTO blocks or metadata
// fields with text) the document has, how many were translated, and how
// many were left as they were (already translated, already in the target
// language, or in a language the backend does not offer).
const (
	headerUnits      = "X-Translation-Units"
	headerTranslated = "X-Translation-Translated"
	headerSkipped    = "X-Translation-Skipped"
	headerCalls      = "X-Translation-Backend-Calls"
	// headerWarnings counts the document's warnings (one document's
	// answer only).
	headerWarnings = "X-Translation-Warnings"
	// headerFilesFailed counts a book_url answer's text files that failed
	// (listed in its book.json).
	headerFilesFailed = "X-Translation-Files-Failed"
	// headerFilesNoText counts a book_url answer's text files without
	// text (blank pages, written as they were; status no_text in its
	// book.json).
	headerFilesNoText = "X-Translation-Files-Without-Text"
	// headerLicense names the licence the answer carries (setLicence).
	headerLicense = "X-Translation-License"
	// headerBackend names the backend that translated the answer's
	// documents (mtapi, chat_compatible, ct2).
	headerBackend = "X-Translation-Backend"
)

// clearAnswerHeaders removes the headers of a translation's answer (its
// counts, licence, backend) before an error is answered instead: a 500
// went out with them.
func clearAnswerHeaders(h http.Header) {
	for k := range h {
		if strings.HasPrefix(k, "X-Translation-") || k == "Link" {
			h.Del(k)
		}
	}
}

// answerLicence is the licence an answer carries: the most restrictive of
// the licence components the translation used (the backend, its model,
// the vocabulary), resolved as the CLI's run metadata and a record's
// provenance resolve it.
func (s *server) answerLicence(used []string) licence.Resolution {
	return translator.Resolve(s.components, used)
}

// setLicence names an answer's licence in its headers, whatever its body:
// X-Translation-License with the licence's name and, when it has one, a
// Link to its text with the relation "license" (RFC 4946). An XML answer
// has no field to carry it.
func setLicence(h http.Header, r licence.Resolution) {
	h.Set(headerLicense, r.EffectiveLicense)
	if r.EffectiveLicenseURL != "" {
		h.Set("Link", "<"+r.EffectiveLicenseURL+`>; rel="license"`)
	}
}

func setCountHeaders(h http.Header, st translator.Stats) {
	h.Set(headerUnits, fmt.Sprint(st.Units))
	h.Set(headerTranslated, fmt.Sprint(st.Translated))
	h.Set(headerSkipped, fmt.Sprint(st.Skipped))
	h.Set(headerCalls, fmt.Sprint(st.Calls))
}

// record accretes the translation block onto the baseline and returns it,
// validated, with its file name: the mode the document got (out.Mode;
// alternative as translator.AccreteRecord writes it) and its
// machine-translation tag, as the command line records them.
func (s *server) record(rec *docrecord.Record, out *translator.Output, q *request, target, backendName string, usage *translator.Usage) ([]byte, string, error) {
	runID := service.RunID()
	err := translator.AccreteRecord(rec, translator.RecordInfo{
		SourceLang: out.SourceLang, TargetLang: target, Backend: backendName, Mode: string(out.Mode), LanguageTag: out.Tag,
		TranslatedXML: out.Name, Licence: s.answerLicence(usage.Components()),
		RunID: runID, At: time.Now(), HadBaseline: true, Version: version.String(),
		ContainerImage: s.svc.Config.Build.ContainerImage, RunnerRef: s.svc.Config.Build.RunnerRef,
	})
	if err != nil {
		return nil, "", fmt.Errorf("document_json: the translation block cannot be added: %w", err)
	}
	schema, err := docrecord.ProjectSchema()
	if err != nil {
		return nil, "", fmt.Errorf("document record schema: %w", err)
	}
	b, err := rec.ValidBytes(schema)
	if err != nil {
		return nil, "", fmt.Errorf("the updated document record failed validation and is not returned: %w", err)
	}
	for _, wmsg := range rec.Warnings {
		s.log.Warn(wmsg, "file", q.name)
	}
	return b, docrecord.FileName(rec.DocID()), nil
}

// mixedPart is one part of a multipart/mixed answer.
type mixedPart struct {
	Name, Type string
	Data       []byte
}

// writeMixed answers 200 with multipart/mixed parts, each with its own
// Content-Disposition file name, under a random uuid4 boundary.
func writeMixed(w http.ResponseWriter, parts []mixedPart) {
	var buf bytes.Buffer
	mw := multipart.NewWriter(&buf)
	_ = mw.SetBoundary(service.RunID())
	for _, p := range parts {
		h := textproto.MIMEHeader{}
		h.Set("Content-Type", p.Type)
		h.Set("Content-Disposition", attachment(p.Name))
		pw, _ := mw.CreatePart(h)
		_, _ = pw.Write(p.Data)
	}
	_ = mw.Close()
	w.Header().Set("Content-Type", "multipart/mixed; boundary="+mw.Boundary())
	w.Header().Set("Content-Length", fmt.Sprint(buf.Len()))
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(buf.Bytes())
}

// attachment is a Content-Disposition value naming a file: the quoted name
// for plain ASCII names, each other character (and each byte of a name
// that is not UTF-8) written "_", plus an RFC 8187 filename* for a name
// that is UTF-8 but not plain ASCII, without bidirectional controls
// (dropBidi).
//
// A name that is not UTF-8 (a cp852 or Windows-1250 name from a zip made
// on Windows, "\x8e\xe1dost_en.alto.xml") gets no filename*: it declares
// UTF-8, so its raw bytes percent-encoded would be a false declaration,
// which browsers answer by dropping it (or by saving mojibake); the bytes'
// real charset is not known, and RFC 8187 asks recipients for UTF-8 only;
// and the \xNN text the run metadata and tables write, percent-encoded,
// is saved with its backslashes, a folder separator on Windows, which
// browsers turn into "_" or cut the name at. The ASCII name
// ("__dost_en.alto.xml") is what a browser saves then: the name's ASCII
// part, with the extension that says what the file is.
func attachment(name string) string {
	ascii := true
	var b strings.Builder
	for _, r := range name { // a byte that is not UTF-8 reads as U+FFFD, one "_"
		switch {
		case r == '"' || r == '\\' || r < 0x20 || r == 0x7f:
			b.WriteByte('_')
		case r > 0x7e:
			ascii = false
			b.WriteByte('_')
		default:
			b.WriteRune(r)
		}
	}
	v := `attachment; filename="` + b.String() + `"`
	if !ascii && utf8.ValidString(name) {
		v += "; filename*=UTF-8''" + url.PathEscape(strings.Map(dropBidi, name))
	}
	return v
}

// dropBidi drops the Unicode bidirectional controls from a name a browser
// saves (-1), keeping every other rune: an upload named
// "report\u202Efdp.xml" was offered as a file whose name reads backwards
// from the override on (utf8name.IsBidiControl).
func dropBidi(r rune) rune {
	if utf8name.IsBidiControl(r) {
		return -1
	}
	return r
}

// withdraw fails the job items translated before item with the replies a
// refusal (*backend.SameReplyError in err) names: a service that answers
// one text to everything is told only from its third such reply, and the
// items before succeeded with it (jobs.Queue.Withdraw). An item of a job
// that has ended, and a synchronous request's answer, cannot be taken
// back: each is logged.
func (s *server) withdraw(ctx context.Context, item string, err error) {
	var se *backend.SameReplyError
	if !errors.As(err, &se) {
		return
	}
	var sync []string
	for _, name := range se.Items {
		if name == item {
			continue
		}
		if strings.HasPrefix(name, syncPrefix) {
			sync = append(sync, strings.TrimPrefix(name, syncPrefix))
			continue
		}
		if s.jobs == nil {
			continue
		}
		detail := "translated earlier, then withdrawn: its translation holds a reply refused since: " + service.Redact(se.Error())
		stands, werr := s.jobs.Withdraw(ctx, name, http.StatusInternalServerError, service.ReasonBackendError, detail)
		switch {
		case werr != nil:
			s.log.Error("job item not withdrawn", "item", name, "error", werr)
		case stands:
			s.log.Warn("a job item whose translation holds the refused reply could not be withdrawn (its job has ended): check its answer", "item", name)
		}
	}
	if len(sync) > 0 || se.Unnamed > 0 {
		s.log.Warn("answers to synchronous requests given before hold the refused reply: they went out and cannot be taken back; check them",
			"requests", sync, "calls", len(sync)+se.Unnamed)
	}
}

// syncPrefix begins the name a synchronous request's translation is
// known by to the backend's refusal of one reply for everything
// (backend.ForItem; job items are named by jobs.ItemName).
const syncPrefix = "request "

// syncRequestName names a synchronous request: its file and when it was
// received, as the warning of a later refusal lists it.
func syncRequestName(file string, at time.Time) string {
	return syncPrefix + file + " received " + at.UTC().Format(time.RFC3339)
}
