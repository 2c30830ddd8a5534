package main

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"path"
	"strings"

	"archivekit/internal/book"
	"archivekit/internal/fetch"
	"archivekit/internal/jobs"
	"archivekit/internal/lookahead"
	"archivekit/internal/pageclass/classify"
	"archivekit/internal/service"
)

// Books: /predict_document takes, instead of an uploaded PDF, a book
// field naming a METS file or a IIIF manifest or collection by its http(s)
// URL. The book is read with internal/book and its pages (all, or those the
// pages field selects by their position in the book, at most
// MAX_PDF_PAGES) are fetched as the derivative at the models' largest input
// size that each IIIF Image service's level guarantees (else the image as
// it is) and classified in physical order.
//
// A request fetches BOOK_FETCH_WORKERS pages at once (default 4; 1: one
// after another), in order ahead of their classification, so that a slow
// image server does not pace it; at most that many fetched images wait
// in memory. A book job fetches its pages ahead the same way, while the
// page before them is classified (jobs.BookInput.Fetchers). Fetches are
// bounded as internal/fetch bounds them. By default a book and
// its links may be at any public address and never at a loopback, private
// or link-local one (the URL comes from a client); BOOK_HOSTS, a
// comma-separated list of host or host:port, limits fetches to those hosts,
// which may then be private (an institution's own IIIF server, or a test's
// loopback server).

// EnvBookHosts is the setting of the hosts books may be fetched from,
// shared with translate-api (read by internal/service, which also reads
// translate-api's old name BOOK_ALLOW_HOSTS).
const EnvBookHosts = service.EnvBookHosts

// EnvBookFetchWorkers is the setting of the pages of a book a request
// fetches at once (default 4, as pageclass --fetch-workers), shared with
// translate-api's book jobs (read by internal/service).
const EnvBookFetchWorkers = service.EnvBookFetchWorkers

// skippedPage is a page of a book that was not classified.
type skippedPage struct {
	Page  int    `json:"page"`
	ID    string `json:"id"`
	Label string `json:"label,omitempty"` // the canvas label or the METS div's
	Error string `json:"error"`
}

// checkBookField is the problem of a book field ("" when none).
func checkBookField(v string, withFile bool) string {
	u, err := url.Parse(v)
	switch {
	case withFile:
		return "give a file or a book, not both"
	case err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "":
		return "book " + fmt.Sprintf("%q", v) + ": want the http(s) URL of a METS file or a IIIF manifest or collection"
	}
	return ""
}

// bookName is the name of a book in answers and records: the last segment
// of its URL's path.
func bookName(v string) string {
	u, err := url.Parse(v)
	if err != nil {
		return "book"
	}
	base := path.Base(strings.TrimRight(u.Path, "/"))
	if base == "." || base == "/" || base == "" {
		return "book"
	}
	return base
}

// bookFetcher is a request's (or a book job item's) fetcher: a Fresh one
// of s.books, sharing its connections, with a cache of its own.
func (s *server) bookFetcher() *fetch.Fetcher { return s.books.Fresh() }

// newBookFetcher is the fetcher whose connections every book request
// shares: the services' book policy (service.Config.BookPolicy: any public
// host without BOOK_HOSTS, else only those; a redirect to another host
// refused once, not retried as its own transport's refusal was).
func newBookFetcher(c service.Config) *fetch.Fetcher {
	return fetch.New(c.BookPolicy(), nil)
}

// bookSize is the long side a book's pages are fetched at: the largest
// input size of the members and the orientation model.
func (s *server) bookSize(members []*member) int {
	size := 0
	for _, m := range modelsOf(members) {
		size = max(size, m.Size())
	}
	if s.engine.orient != nil {
		size = max(size, s.engine.orient.Size())
	}
	return size
}

// classifyBook reads the request's book, and fetches and classifies its
// pages selected; a page that cannot be fetched or read is skipped with
// its reason, the others are classified.
func (s *server) classifyBook(ctx context.Context, req *predictRequest, step *classify.Step, size int) (*predicted, []classify.Page, *failure) {
	f := s.bookFetcher()
	b, err := book.Read(ctx, req.book, book.Options{Text: book.TextNone, Fetcher: f, MaxPages: 100000})
	if err != nil {
		if ctx.Err() != nil {
			return nil, nil, gone
		}
		// As translate-api and the jobs say it: the refused host's way to
		// allow it, else the error with the addresses it resolved to and
		// its resolver's left out (they were named).
		return nil, nil, failf(http.StatusUnprocessableEntity, bookReason(err), "book %q cannot be read: %s", req.book, service.BookReadError(err).Error())
	}
	n := len(b.Pages)
	idx, err := selectPages(req.pages, n)
	if err != nil {
		return nil, nil, failf(http.StatusUnprocessableEntity, service.ReasonBadField, "book %q: %v", req.book, err)
	}
	if len(idx) > req.maxPDFPages {
		return nil, nil, failf(http.StatusRequestEntityTooLarge, service.ReasonTooManyPages, "book %q has %d pages (%d selected): at most %d pages are classified per request (MAX_PDF_PAGES); select some with the pages field, such as pages=1-%d",
			req.book, n, len(idx), req.maxPDFPages, req.maxPDFPages)
	}
	res := &predicted{pages: n}
	for _, p := range b.Problems {
		res.bookProblems = append(res.bookProblems, p.String())
	}
	var pages []classify.Page
	// The selected pages' images are fetched ahead, in order.
	next, stop := lookahead.Run(ctx, len(idx), s.bookWorkers, func(ctx context.Context, k int) fetchedPage {
		return fetchPageImage(ctx, f, b.Remote, b.Pages[idx[k]], size)
	})
	defer stop()
	for start := 0; start < len(idx); start += pageChunk {
		end := min(len(idx), start+pageChunk)
		data := make([]float32, 0, (end-start)*step.Width())
		k := 0
		for _, i := range idx[start:end] {
			p := b.Pages[i]
			img, ok := next()
			if !ok {
				return nil, nil, gone
			}
			row, reason, fail := res.bookPage(ctx, req, img, step)
			if fail != nil {
				return nil, nil, fail
			}
			if reason != "" {
				res.skipped = append(res.skipped, skippedPage{Page: i + 1, ID: p.ID, Label: p.Label, Error: service.ClipURLs(reason)})
				continue
			}
			data = append(data, row...)
			res.numbers = append(res.numbers, i+1)
			res.labels = append(res.labels, p.Label)
			res.ids = append(res.ids, p.ID)
			res.orders = append(res.orders, p.Order)
			k++
		}
		if k == 0 {
			continue
		}
		ps, err := step.Run(ctx, data, k)
		if err != nil {
			if ctx.Err() != nil {
				return nil, nil, gone
			}
			return nil, nil, failf(http.StatusInternalServerError, service.ReasonInternal, "book %q: inference failed: %v", req.book, err)
		}
		pages = append(pages, ps...)
	}
	if len(pages) == 0 {
		return nil, nil, failf(http.StatusUnprocessableEntity, service.ReasonBadBook, "book %q: no page could be classified (first: page %d: %s)", req.book, res.skipped[0].Page, res.skipped[0].Error)
	}
	return res, pages, nil
}

// fetchedPage is a book page's image as fetched (fetchPageImage): its
// bytes and where they came from, or why there are none.
type fetchedPage struct {
	data   []byte
	target string
	reason string // the page is skipped for this reason ("" when fetched)
}

// fetchPageImage fetches a book page's image, as the derivative at size
// when the page has a IIIF Image service.
func fetchPageImage(ctx context.Context, f *fetch.Fetcher, remote bool, p book.Page, size int) fetchedPage {
	if p.Image == nil {
		return fetchedPage{reason: "page without an image"}
	}
	var b []byte
	var target string
	var err error
	if p.Image.Service != nil {
		// within what the image server says when the manifest says too little
		b, target, err = book.FetchDerivative(ctx, f, remote, p.Image.Service, size)
	} else {
		target = p.Image.Location
		b, err = f.Getter(remote)(ctx, target)
		f.Drop(target)
	}
	if err != nil {
		return fetchedPage{target: target, reason: "image not fetched: " + err.Error()}
	}
	return fetchedPage{data: b, target: target}
}

// bookPage prepares one fetched page of a book: its row, or the reason it
// is skipped.
func (res *predicted) bookPage(ctx context.Context, req *predictRequest, img fetchedPage, step *classify.Step) ([]float32, string, *failure) {
	if ctx.Err() != nil {
		return nil, "", gone
	}
	if img.reason != "" {
		return nil, img.reason, nil
	}
	doc, err := req.decode.Decode(img.data, img.target)
	if err != nil {
		return nil, "image not read: " + err.Error(), nil
	}
	row, fail := res.prepare(ctx, req, doc, step, 0, nil)
	if fail != nil && fail != gone && fail.status != http.StatusInternalServerError {
		return nil, "image not decoded: " + fail.msg, nil
	}
	return row, "", fail
}

// bookReason is the reason of a book that cannot be read: its host
// refused (a private address, or not in BOOK_HOSTS), its server answered
// an error or could not be reached, else it is not a usable book.
func bookReason(err error) service.Reason {
	var se *fetch.StatusError
	switch {
	case errors.Is(err, fetch.ErrPrivate), errors.Is(err, fetch.ErrHost):
		return service.ReasonHostNotAllowed
	case errors.Is(err, book.ErrNotABook), errors.Is(err, book.ErrNoPages), errors.Is(err, book.ErrLimit):
		return service.ReasonBadBook
	case errors.As(err, &se), errors.As(err, new(net.Error)):
		return service.ReasonFetchFailed
	}
	return service.ReasonBadBook
}

// bookJobs lets POST /jobs take a book field: the job's items are the
// book's pages (all, or those the pages field selects), each page's image
// fetched by the worker as the derivative at the models' largest input
// size (as /predict_document fetches it) and classified as a job's
// uploaded item is (pick: a page image as /predict_image classifies it);
// no MAX_PDF_PAGES bound. BOOK_FETCH_WORKERS pages are fetched at once,
// ahead of the page being classified.
func (s *server) bookJobs() *jobs.BookInput {
	return &jobs.BookInput{Field: "book", Fields: []string{"pages"}, Items: s.bookItems, Fetch: s.fetchPage, Fetchers: s.bookWorkers}
}

// bookItems reads a book job's book and lists its pages selected; a page
// without an image file is an item skipped (noImage), nothing fetched.
func (s *server) bookItems(ctx context.Context, location string, fields map[string]string) ([]jobs.BookItem, error) {
	version := cmp.Or(strings.TrimSpace(fields["version"]), "all")
	members, err := s.engine.members(ctx, version)
	if err != nil {
		return nil, err
	}
	var ranges []pageRange
	if v := strings.TrimSpace(fields["pages"]); v != "" {
		if ranges, err = parsePages(v); err != nil {
			return nil, fmt.Errorf("pages %q: %w", v, err)
		}
	}
	b, err := book.Read(ctx, location, book.Options{Text: book.TextNone, Fetcher: s.bookFetcher(), MaxPages: 100000})
	if err != nil {
		return nil, service.BookReadError(err) // a refused host names BOOK_HOSTS
	}
	// What the reader left out or found (a canvas painted by two images,
	// files listed by no page) and the METS image group, for the job's
	// run metadata (jobRunMeta): they were said nowhere.
	note := bookNote{ImageGroup: b.ImageGroup}
	for i, p := range b.Problems {
		if i == maxNoteProblems {
			// The note is bounded (jobs.MaxSummary): the rest counted.
			note.Problems = append(note.Problems, fmt.Sprintf("and %d more", len(b.Problems)-i))
			break
		}
		note.Problems = append(note.Problems, p.String())
	}
	if err := jobs.AnnotateBook(ctx, note); err != nil {
		s.engine.opt.Log.Warn("the book's problems are not kept for the job's run metadata", "book", location, "error", err)
	}
	idx, err := selectPages(ranges, len(b.Pages))
	if err != nil {
		return nil, err
	}
	size := s.bookSize(members)
	items := make([]jobs.BookItem, 0, len(idx))
	for _, i := range idx {
		p := b.Pages[i]
		it := jobs.BookItem{Name: fmt.Sprintf("page-%04d", i+1),
			Ref: jobs.BookRef{Page: i + 1, ID: p.ID, Order: p.Order, Label: p.Label, Manifest: p.Manifest}}
		switch {
		case p.Image == nil:
			it.Skip = noImage(b, p)
		case p.Image.Service != nil:
			it.Source, it.Type = p.Image.Service.Derivative(size), "image/jpeg"
		default:
			it.Source, it.Type = p.Image.Location, p.Image.MIMEType
		}
		items = append(items, it)
	}
	return items, nil
}

// maxNoteProblems is how many of a book's problems its job's note keeps
// (each a line of some 150 bytes: the note must stay under
// jobs.MaxSummary, or the job keeps none).
const maxNoteProblems = 100

// bookNote is what a book job keeps of its book (jobs.AnnotateBook) for
// its run metadata.
type bookNote struct {
	ImageGroup string   `json:"image_group,omitempty"`
	Problems   []string `json:"problems,omitempty"`
}

// noImage is why a book job's page without an image file is skipped:
// that, and what the reader said of the page beyond it (the image group
// the METS has no file of it in, a file pointer to nothing, a file without
// a location).
func noImage(b *book.Book, p book.Page) string {
	why := "no image file for this page"
	for _, pr := range b.Problems {
		if pr.Page != p.ID || pr.Reason == "no image" {
			continue
		}
		why += "; " + strings.TrimPrefix(pr.String(), p.ID+": ")
	}
	return why
}

// fetchPage fetches a book page's image; its type is sniffed from its
// bytes when they say an image type.
func (s *server) fetchPage(ctx context.Context, source string) ([]byte, string, error) {
	// A IIIF request planned from a manifest that said too little of its
	// image service, or one the server refuses, is asked within what the
	// service's info.json says (book.FetchPlanned), at the ensemble's size.
	ensemble, _ := s.engine.members(ctx, "all")
	b, _, err := book.FetchPlanned(ctx, s.bookFetcher(), true, source, s.bookSize(ensemble))
	if err != nil {
		return nil, "", err
	}
	if t := http.DetectContentType(b); strings.HasPrefix(t, "image/") {
		return b, t, nil
	}
	return b, "", nil
}
