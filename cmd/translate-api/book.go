package main

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"path"
	"slices"
	"strings"
	"time"

	"archivekit/internal/book"
	"archivekit/internal/fetch"
	"archivekit/internal/filekind"
	"archivekit/internal/jobs"
	"archivekit/internal/lookahead"
	"archivekit/internal/service"
	"archivekit/internal/translate/alto"
	"archivekit/internal/translate/runmeta"
	"archivekit/internal/translate/translator"
)

// maxBookFiles bounds the text files one book_url request translates.
const maxBookFiles = 500

// bookFile is one text file of a book in book.json.
type bookFile struct {
	Path   string `json:"path"`             // in the book (book.RelPath)
	Source string `json:"source"`           // its URL
	Format string `json:"format"`           // ALTO, PAGE, hOCR
	Output string `json:"output,omitempty"` // the answer part's name
	Status string `json:"status"`           // translated, no_text (written as it was) or failed
	Error  string `json:"error,omitempty"`
	// Warnings are the translation's warnings (lines left without a
	// word, languages left untouched), as a document's answer counts them.
	Warnings []string `json:"warnings,omitempty"`
}

// bookSummary is the book.json part of a book answer.
type bookSummary struct {
	Source           string     `json:"source"`
	Kind             string     `json:"kind"`
	ID               string     `json:"id,omitempty"`
	Pages            int        `json:"pages"`
	PagesWithoutText []string   `json:"pages_without_text"`
	Problems         []string   `json:"problems"`
	Files            []bookFile `json:"files"`
	// DocumentLanguage is the book's language, detected over all its text
	// files as one document (with source_lang auto; "" otherwise, or when
	// it cannot be told): each file's document language.
	DocumentLanguage string `json:"document_language"`
	// DeclaredLanguage is the language the book's METS MODS declares: the
	// document language when none was detected.
	DeclaredLanguage string `json:"declared_language,omitempty"`
	// License and LicenseURL are the licence the book's translations carry,
	// resolved over the components every file's translation used.
	License    string `json:"license"`
	LicenseURL string `json:"license_url,omitempty"`
}

// bookFetcher fetches a book and its text files: private addresses
// refused, every file within the upload cap; with BOOK_HOSTS (read by
// internal/service, as pageclass-api's; BOOK_ALLOW_HOSTS is its old name)
// only those hosts, at any address.
func (s *server) bookFetcher() *fetch.Fetcher {
	p := s.svc.Config.BookPolicy()
	p.MaxBytes = s.svc.Config.MaxUploadBytes
	return fetch.New(p, nil)
}

// serveBook is POST /translate with a book_url: the METS file or manifest
// is read (internal/book), its text files fetched and translated in page
// order, each as its format is, and answered as multipart/mixed: one part
// per translated file, named by its path in the book, then book.json
// (pages without text, the reader's problems, each file's outcome). A
// text file that fails is listed as failed; none translated is a 422.
func (s *server) serveBook(w http.ResponseWriter, r *http.Request, q *request, location string) {
	job := &translateJob{q: q, source: "auto", target: "en", mode: s.set.OutputMode, isALTO: true, book: true}
	verrs := job.parseFields(r)
	if q.hasFile {
		verrs = append(verrs, service.ValidationError{Loc: []any{"body", "file"}, Msg: "send either a file or a book_url, not both", Type: "value_error"})
	}
	if len(verrs) > 0 {
		service.WriteValidation(w, verrs...)
		return
	}
	if u, err := url.Parse(location); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		service.WriteError(w, http.StatusUnprocessableEntity, service.ReasonBadField, fmt.Sprintf("book_url %q is not an http(s) URL", location))
		return
	}
	if q.hasBase {
		service.WriteError(w, http.StatusUnprocessableEntity, service.ReasonBadField, "document_json is taken with a file, not with a book_url")
		return
	}
	f := s.bookFetcher()
	b, err := book.Read(r.Context(), location, book.Options{Fetcher: f, MaxBytes: s.svc.Config.MaxUploadBytes, Fetchers: s.bookWorkers})
	if err != nil {
		status, reason := bookStatus(err)
		service.WriteError(w, status, reason, "book_url: "+bookError(err))
		return
	}
	sum := bookSummary{Source: location, Kind: string(b.Kind), ID: b.ID, Pages: len(b.Pages), PagesWithoutText: []string{}, Problems: []string{}, Files: []bookFile{},
		DeclaredLanguage: translator.DeclaredLanguage(b.Languages)}
	for _, p := range b.Problems {
		sum.Problems = append(sum.Problems, p.String())
	}
	var texts []bookText
	for _, bt := range bookTexts(b) {
		if bt.none {
			sum.PagesWithoutText = append(sum.PagesWithoutText, bt.page.ID)
		}
		if bt.none || bt.shared {
			continue
		}
		texts = append(texts, bt)
	}
	if len(texts) > maxBookFiles {
		service.WriteError(w, http.StatusUnprocessableEntity, service.ReasonTooManyFiles, fmt.Sprintf("book_url: the book has %d text files; one request translates at most %d", len(texts), maxBookFiles))
		return
	}
	parts, stats, used, backend, ok := s.translateBook(w, r, job, f, location, texts, &sum)
	if !ok {
		return
	}
	if len(parts) == 0 {
		detail := fmt.Sprintf("book_url: none of the book's %d text files was translated (%d pages, %d without text)", len(texts), len(b.Pages), len(sum.PagesWithoutText))
		if len(sum.Files) > 0 {
			detail += "; " + sum.Files[0].Path + ": " + sum.Files[0].Error
		}
		service.WriteError(w, http.StatusUnprocessableEntity, service.ReasonNothingTranslated, detail)
		return
	}
	lic := s.answerLicence(used)
	sum.License, sum.LicenseURL = lic.EffectiveLicense, lic.EffectiveLicenseURL
	setLicence(w.Header(), lic)
	w.Header().Set(headerBackend, backend)
	js, _ := json.MarshalIndent(sum, "", "  ")
	setCountHeaders(w.Header(), stats)
	warnings, failed, noText := 0, 0, 0
	for _, f := range sum.Files {
		warnings += len(f.Warnings)
		switch f.Status {
		case "failed":
			failed++
		case "no_text":
			noText++
		}
	}
	w.Header().Set(headerWarnings, fmt.Sprint(warnings)) // the files' own, listed in book.json
	// A 200 with files failed said so only inside book.json.
	w.Header().Set(headerFilesFailed, fmt.Sprint(failed))
	w.Header().Set(headerFilesNoText, fmt.Sprint(noText))
	writeMixed(w, append(parts, mixedPart{Name: "book.json", Type: "application/json", Data: js}))
}

// translateBook fetches and translates texts in order, filling sum.Files;
// ok is false when the answer was written (the client went away). A word
// hyphenated across two files is joined as a book job joins it
// (bookJoins): the first file is translated with the next one's
// (translator's Options.Next) and sends the whole word, and the next
// file, given the word the first carried (Options.Prev), empties its
// part; only when the first file was translated.
func (s *server) translateBook(w http.ResponseWriter, r *http.Request, job *translateJob, f *fetch.Fetcher, location string, texts []bookText, sum *bookSummary) (parts []mixedPart, stats translator.Stats, used []string, backend string, ok bool) {
	// The files are fetched BOOK_FETCH_WORKERS at once ahead of their
	// translation, in order (a METS file's were fetched when the book was
	// read, and come from the fetcher's cache; a manifest's were not).
	var locations []string
	for _, bt := range texts {
		if bt.unread == nil {
			locations = append(locations, bt.text.Location)
		}
	}
	// A file joined with the next one takes that one's file while it is
	// translated (held): one fewer is fetched ahead then, as a book job
	// holds it (jobs.BookInput.Joins).
	joins, workers := bookJoins(location, texts), s.bookWorkers
	if slices.Contains(joins, true) && workers > 1 {
		workers--
	}
	ahead := func() *lookahead.Keyed[string, fetch.Result] {
		return lookahead.RunKeyed(r.Context(), locations, workers, func(ctx context.Context, u string) fetch.Result {
			data, err := f.GetLinked(ctx, u)
			return fetch.Result{Data: data, Err: err}
		})
	}
	if job.source == "auto" {
		// The book is one document for language detection: its files
		// are fetched first (the fetcher keeps them for the request).
		units, _ := s.bookUnits(r.Context(), f, locations, true, nil)
		sum.DocumentLanguage = translator.BookLanguage(units, nil, s.sess.Order, nil)
		if job.docLang = sum.DocumentLanguage; job.docLang == "" {
			job.docLang = sum.DeclaredLanguage
		}
	}
	fetched := ahead()
	defer fetched.Stop()
	take := func(u string) fetch.Result {
		got, ok := fetched.Take(u)
		if !ok { // the request's context is done, or not fetched ahead
			got.Data, got.Err = f.GetLinked(r.Context(), u)
		}
		return got
	}
	var held *fetch.Result  // the next file, taken for the one before it
	var carry *alto.Carried // what the file before carried to this one
	for i, bt := range texts {
		t := bt.text
		rel := book.RelPath(location, t)
		bf := bookFile{Path: rel, Source: t.Location, Format: string(t.Format), Status: "failed"}
		if bt.unread != nil { // read with the book, and failed then
			bf.Error = bookError(bt.unread)
			sum.Files = append(sum.Files, bf)
			continue
		}
		var got fetch.Result
		if held != nil {
			got, held = *held, nil
		} else {
			got = take(t.Location)
		}
		prev := carry
		carry = nil
		data, err := got.Data, got.Err
		if err != nil {
			bf.Error = bookError(err)
			sum.Files = append(sum.Files, bf)
			continue
		}
		fq := *job.q
		fq.src, fq.name = data, path.Base(rel)
		fjob := *job
		fjob.q = &fq
		if i > 0 && joins[i-1] {
			fjob.prev = prev
		}
		if joins[i] {
			n := take(texts[i+1].text.Location)
			held = &n
			if n.Err == nil {
				fjob.next = altoFile(n.Data)
			}
		}
		res, fail := s.runTranslate(r.Context(), &fjob)
		if fail != nil {
			if fail.status == 0 {
				return nil, stats, nil, "", false // the client went away
			}
			bf.Error = strings.TrimPrefix(fail.msg, "translation failed: ")
			sum.Files = append(sum.Files, bf)
			continue
		}
		out := res.out
		if joins[i] {
			carry = out.Carried
		}
		bf.Status, bf.Output = "translated", path.Join(path.Dir(rel), out.Name)
		if out.NoText {
			bf.Status = "no_text" // a blank page, written as it was
		}
		bf.Warnings = out.Warnings
		sum.Files = append(sum.Files, bf)
		parts = append(parts, mixedPart{Name: bf.Output, Type: textType(out.Kind == translator.KindHOCR), Data: out.Data})
		stats.Units += out.Stats.Units
		stats.Translated += out.Stats.Translated
		stats.Skipped += out.Stats.Skipped
		stats.Calls += out.Stats.Calls
		used = append(used, res.usage.Components()...)
		backend = res.backend
	}
	return parts, stats, used, backend, true
}

// bookUnits fetches the text files at locations with f,
// BOOK_FETCH_WORKERS at once in order, and returns the units' texts of
// those fetched (translator.UnitTexts of each, in order) and how many
// were fetched. keep leaves each file in f's cache (a request that
// translates them next); otherwise each is dropped once read, so that at
// most BOOK_FETCH_WORKERS files are in memory at once (a job), after
// kept, when not nil, was given it (a job keeps it on disk for its item).
func (s *server) bookUnits(ctx context.Context, f *fetch.Fetcher, locations []string, keep bool, kept func(location string, data []byte)) (units []string, read int) {
	all := lookahead.RunKeyed(ctx, locations, s.bookWorkers, func(ctx context.Context, u string) fetch.Result {
		data, err := f.GetLinked(ctx, u)
		return fetch.Result{Data: data, Err: err}
	})
	defer all.Stop()
	for _, u := range locations {
		if got, ok := all.Take(u); ok && got.Err == nil {
			units = append(units, translator.UnitTexts(got.Data)...)
			read++
			if kept != nil {
				kept(u, got.Data)
			}
		}
		if !keep {
			f.Drop(u)
		}
	}
	return units, read
}

// bookError is a book's (or its text file's) fetch error as a client
// reads it: a host refused is named with the variable that allows it (the
// host is the client's, or its book's link, not an internal service's);
// anything else has its addresses hidden (service.Redact).
func bookError(err error) string {
	return service.ClipURLs(service.BookReadError(err).Error())
}

// bookStatus is the status and reason of a book that cannot be read: 403
// host_not_allowed for a host or address the policy refuses, 502
// fetch_failed for a server that answered an error or could not be
// reached, 422 bad_book for a file that is no book.
func bookStatus(err error) (int, service.Reason) {
	var se *fetch.StatusError
	switch {
	case errors.Is(err, fetch.ErrPrivate), errors.Is(err, fetch.ErrHost):
		return http.StatusForbidden, service.ReasonHostNotAllowed
	case errors.As(err, &se):
		return http.StatusBadGateway, service.ReasonFetchFailed
	case errors.Is(err, book.ErrNotABook), errors.Is(err, book.ErrNoPages), errors.Is(err, book.ErrLimit):
		return http.StatusUnprocessableEntity, service.ReasonBadBook
	}
	return http.StatusBadGateway, service.ReasonFetchFailed
}

// bookText is a text file of a book with its page, in page order, or
// (none) a page without text, or (shared) a page whose text files all go
// with earlier pages. unread is the error of a text file the reader could
// not read (book.Page.Unread: a refused host, a 404): it is one of the
// book's text files, failed, not a page without text.
type bookText struct {
	page   book.Page
	index  int // the page's position, from 0
	text   book.Text
	none   bool
	shared bool
	unread error
}

// bookTexts lists a book's text files in page order, each once (a file
// that several pages list goes with the first), those read before those
// that could not be, its pages without text, and the pages whose text
// files all went with earlier pages.
func bookTexts(b *book.Book) []bookText {
	var out []bookText
	seen := map[string]bool{}
	for i, p := range b.Pages {
		if len(p.Texts) == 0 && len(p.Unread) == 0 {
			out = append(out, bookText{page: p, index: i, none: true})
		}
		n := len(out)
		for _, t := range p.Texts {
			if !seen[t.Location] {
				seen[t.Location] = true
				out = append(out, bookText{page: p, index: i, text: t})
			}
		}
		for _, u := range p.Unread {
			if !seen[u.Text.Location] {
				seen[u.Text.Location] = true
				out = append(out, bookText{page: p, index: i, text: u.Text, unread: u.Err})
			}
		}
		if len(p.Texts)+len(p.Unread) > 0 && len(out) == n {
			out = append(out, bookText{page: p, index: i, shared: true})
		}
	}
	return out
}

// bookJobs lets POST /jobs take a book_url: the job's items are the book's
// text files in page order, each fetched by the worker (within the upload
// cap and BOOK_HOSTS, as /translate fetches them), told by its
// content (checkText) and translated as /translate translates an upload;
// a page without a text file is an item too, skipped ("no text file for
// this page"; a page whose text files are an earlier page's, "its text
// files are items of an earlier page"), so that the job lists every page;
// no bound of 500 files applies. BOOK_FETCH_WORKERS text files are
// fetched at once, in item order, while an earlier item is translated
// (jobs.BookInput.Fetchers, as pageclass-api's book jobs fetch pages).
func (s *server) bookJobs() *jobs.BookInput {
	return &jobs.BookInput{Field: "book_url", Items: s.bookItems, Fetch: s.fetchText, Check: checkText, Fetchers: s.bookWorkers, Joins: hyphenPartners}
}

// itemSummary is what a book job's translated item attaches to its item
// (jobs.Annotate): its statistics for the run metadata (jobRecord.AddItem
// reads them as a runmeta.Item), and, when it joined a word hyphenated
// across its ALTO file and the next item's, the word it carried
// (alto.Carried), which the next item's request is given (hyphenLink).
type itemSummary struct {
	runmeta.Item
	HyphenNext *alto.Carried `json:"hyphen_next,omitempty"`
}

// hyphenPartners says whether book job item b's text file continues item
// a's, as translate joins a book's files (cmd/translate's partners): both
// ALTO, on consecutive pages, in one folder of the book (their file
// group), each the only item of its page (jobs.BookInput.Joins checks
// that).
func hyphenPartners(a, b jobs.BookRef) bool {
	return a.Format == string(book.ALTO) && b.Format == string(book.ALTO) && b.Page == a.Page+1 && path.Dir(a.Path) == path.Dir(b.Path)
}

// bookJoins says, for a synchronous book_url request's texts (the book's
// text files in page order, bookTexts), whether texts[i+1] continues
// texts[i] as a book job's items join: hyphenPartners, each the only text
// file of its page.
func bookJoins(location string, texts []bookText) []bool {
	perPage := map[int]int{}
	for _, bt := range texts {
		perPage[bt.index]++
	}
	joins := make([]bool, len(texts))
	for i := 0; i+1 < len(texts); i++ {
		a, b := texts[i], texts[i+1]
		joins[i] = perPage[a.index] == 1 && perPage[b.index] == 1 && a.unread == nil && b.unread == nil &&
			hyphenPartners(textRef(location, a), textRef(location, b))
	}
	return joins
}

// textRef is a book's text file (or a page without one) as a book job's
// item refers to it.
func textRef(location string, bt bookText) jobs.BookRef {
	ref := jobs.BookRef{Page: bt.index + 1, ID: bt.page.ID, Order: bt.page.Order, Label: bt.page.Label, Manifest: bt.page.Manifest}
	if !bt.none && !bt.shared {
		ref.Path, ref.Format = book.RelPath(location, bt.text), string(bt.text.Format)
	}
	return ref
}

// altoFile is data when it is an ALTO file (book.Sniff), nil otherwise:
// the next file a file is translated with (Options.Next).
func altoFile(data []byte) []byte {
	if f, err := book.Sniff(data); err == nil && f == book.ALTO {
		return data
	}
	return nil
}

// hyphenLink is what a book job item's ALTO file is translated with to
// join a word hyphenated across it and its neighbours (translator's
// Options.Next and Prev): the next item's file when it is ALTO
// (jobs.NextFile), and the word the item before it carried
// (jobs.PrevSummary). The next file's String is emptied only when the
// item before wrote the whole word: that item succeeded and says so.
func hyphenLink(ctx context.Context) (next []byte, prev *alto.Carried) {
	if n := jobs.NextFile(ctx); n != nil {
		next = altoFile(n)
	}
	var sum itemSummary
	if p := jobs.PrevSummary(ctx); p != nil && json.Unmarshal(p, &sum) == nil {
		prev = sum.HyphenNext
	}
	return next, prev
}

// noText is the reason a page without a text file is skipped.
const noText = "no text file for this page"

// bookItems reads a book job's book and lists its text files, and its
// pages without one (skipped). Reading the book fetches no text file
// (book.Options.FetchLater): the worker fetches each when its item runs
// or while an earlier item runs (bookJobs), and tells its format when
// the item runs; a file the METS does not declare as text is an item
// without a format, skipped when its content is not text.
func (s *server) bookItems(ctx context.Context, location string, fields map[string]string) ([]jobs.BookItem, error) {
	f := s.bookFetcher()
	b, err := book.Read(ctx, location, book.Options{Fetcher: f, MaxBytes: s.svc.Config.MaxUploadBytes, FetchLater: true})
	if err != nil {
		return nil, service.BookReadError(err) // a passing failure stays one: the job reads the book again later
	}
	var items []jobs.BookItem
	var texts []string
	for _, bt := range bookTexts(b) {
		ref := textRef(location, bt)
		switch {
		case bt.none:
			items = append(items, jobs.BookItem{Name: bt.page.ID, Skip: pageSkip(b, bt.page), Ref: ref})
			continue
		case bt.shared:
			items = append(items, jobs.BookItem{Name: bt.page.ID, Skip: "its text files are items of an earlier page", Ref: ref})
			continue
		}
		rel := ref.Path
		items = append(items, jobs.BookItem{Name: rel, Type: textType(bt.text.Format == book.HOCR), Source: bt.text.Location, Ref: ref})
		texts = append(texts, bt.text.Location)
	}
	var problems []string
	for _, p := range b.Problems {
		problems = append(problems, p.String())
	}
	if len(problems) > 0 {
		s.log.Warn("book: the reader left files out or found them not matching: in the job's run metadata (statistics.books[].problems)",
			"book", location, "problems", len(problems), "first", book.Problems(b.Problems, 3))
	}
	if err := s.bookRecord(ctx, f, location, fields, b.Languages, texts, problems); err != nil {
		return nil, err
	}
	return items, nil
}

// bookRecord starts a book job's statistics.books record (runmeta.Book)
// and keeps it with the job (jobs.AnnotateBook), as translate starts a
// book's: with source_lang auto (the job's form, fields), the book's
// language detected over all its text files (texts, their URLs in page
// order) as one document, and the language its METS MODS declares
// (declared), and what the reader left out (problems). The files are fetched for it before any item runs,
// BOOK_FETCH_WORKERS at once, each dropped from memory once its units'
// texts are taken and kept in the job's scratch (jobs.Scratch) for its
// item, which takes it instead of fetching it again. Every item of the job is translated
// with that language as its document language (serveTranslate, from
// jobs.BookNote), and the job's run metadata counts the items in it
// (jobRecord). Only a canceled context is an error.
func (s *server) bookRecord(ctx context.Context, f *fetch.Fetcher, location string, fields map[string]string, declared, texts, problems []string) error {
	rec := runmeta.NewBook(location)
	rec.SetProblems(problems)
	source := translator.NormalizeLang(cmp.Or(strings.TrimSpace(fields["source_lang"]), "auto"))
	if source == "auto" {
		start := time.Now()
		var kept func(string, []byte)
		if scratch := jobs.ScratchOf(ctx); scratch != nil {
			failed := false
			kept = func(location string, data []byte) {
				if err := scratch.Keep(ctx, location, data); err != nil && !failed {
					failed = true // said once: the items fetch such files again
					s.log.Warn("a text file read for the book's language is not kept for its item, which fetches it again", "file", location, "error", err)
				}
			}
		}
		units, read := s.bookUnits(ctx, f, texts, false, kept)
		if err := context.Cause(ctx); err != nil {
			return err
		}
		rec.Detect(source, units, read, declared, s.sess.Order, nil)
		s.log.Info("book language detected over its text files as one document", "book", location, "files", read,
			"language", rec.DocumentLanguage, "declared", rec.DeclaredLanguage, "took", time.Since(start).Round(time.Millisecond).String())
	}
	if err := jobs.AnnotateBook(ctx, rec); err != nil {
		s.log.Warn("the book's record is not kept for the job's run metadata", "book", location, "error", err)
	}
	return nil
}

// pageSkip is why a page without a text file is skipped: noText, and
// what the reader left out of the page's files (a file without a
// location, an fptr to no file).
func pageSkip(b *book.Book, p book.Page) string {
	why := noText
	for _, pr := range b.Problems {
		if pr.Page == p.ID && pr.File != "" {
			why += "; " + pr.File + ": " + pr.Reason
		}
	}
	return why
}

// fetchText fetches a book job's text file, or takes the copy the job
// kept when it read the book (jobs.Scratch, bookRecord).
func (s *server) fetchText(ctx context.Context, source string) ([]byte, string, error) {
	b, ok, err := jobs.ScratchOf(ctx).Take(ctx, source)
	if err != nil {
		s.log.Warn("the copy of a text file kept when the book was read cannot be taken; it is fetched again", "file", source, "error", err)
	}
	if ok {
		return b, "", nil
	}
	if b, err = s.bookFetcher().GetLinked(ctx, source); err != nil {
		// Wrapped, so that a passing failure (429, 5xx, a timeout) stays
		// one: the job pauses and runs the item again (jobs.fetchLater).
		// errors.New of its text made every such item fail at once.
		return nil, "", service.BookReadError(err)
	}
	return b, "", nil
}

// checkText tells a book job's fetched text file by its content
// (book.Sniff): the item's format becomes the one it has, where the book
// only declared one. A file the book declared as text that is none of
// ALTO, PAGE-XML and hOCR fails its item, naming its URL (not redacted: it
// is the item's book.source, a file of the client's book, and the rest is
// what the file holds); one the book did not declare (no format in ref)
// is skipped instead (jobs.SkipError), saying what it is.
func checkText(data []byte, ref jobs.BookRef) (jobs.BookRef, error) {
	f, err := book.Sniff(data)
	switch {
	case err != nil && ref.Format == "":
		if kind := contentKind(data); !textual(kind) {
			return ref, &jobs.SkipError{Reason: "not a text file: " + kind}
		}
		return ref, &jobs.SkipError{Reason: fmt.Sprintf("not ALTO, PAGE-XML or hOCR (%v)", err)}
	case err != nil:
		return ref, fmt.Errorf("%s: not ALTO, PAGE-XML or hOCR (%v)", ref.Source, err)
	}
	ref.Format = string(f)
	return ref, nil
}

// contentKind is the media type a file's first bytes show: the page-image
// formats (TIFF and JPEG 2000, common in archives, are unknown to
// http.DetectContentType) by their signatures (filekind.Of), the rest as
// http.DetectContentType tells them, without parameters.
func contentKind(data []byte) string {
	if kind := filekind.Of(data); kind != "" {
		return kind
	}
	kind, _, _ := strings.Cut(http.DetectContentType(data), ";")
	return kind
}

// textual says whether a media type is text or markup (text/*, XML,
// HTML): a file the text formats could be.
func textual(kind string) bool {
	return strings.HasPrefix(kind, "text/") || strings.Contains(kind, "xml") || strings.Contains(kind, "html")
}

// textType is the media type of a book's text file in an answer: HTML for
// hOCR, XML for ALTO and PAGE.
func textType(hocr bool) string {
	if hocr {
		return "text/html"
	}
	return "application/xml"
}
