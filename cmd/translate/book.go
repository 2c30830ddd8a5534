package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"strings"

	"archivekit/internal/atomicfile"
	"archivekit/internal/book"
	"archivekit/internal/fetch"
	"archivekit/internal/ledger"
	"archivekit/internal/lookahead"
	"archivekit/internal/regularfile"
)

// errBook is wrapped by the error of a book that cannot be read (not METS
// nor IIIF once read in full, no pages, a selection naming no page).
var errBook = errors.New("book not read")

// errNoPages is returned by collectBook for a METS file without pages,
// which is translated as a metadata document instead.
var errNoPages = errors.New("a METS file without pages")

// bookInfo is what the run metadata records of a book input (config.book).
type bookInfo struct {
	Source string `json:"source"`
	// Folder is the folder of the book's outputs under the output folder
	// in a list or folder run (empty for a book that is the run's input).
	Folder string `json:"folder,omitempty"`
	Kind   string `json:"kind"`
	ID     string `json:"id,omitempty"`
	Label  string `json:"label,omitempty"`
	// Pages are the pages read (after --pages); PagesWithText those with
	// at least one text file.
	Pages         int `json:"pages"`
	PagesWithText int `json:"pages_with_text"`
	// TextFiles counts the text files of the whole book (every shard's),
	// TextFormats them per format (ALTO, PAGE, hOCR).
	TextFiles   int            `json:"text_files"`
	TextFormats map[string]int `json:"text_formats"`
	// PagesWithoutText are the pages that have no text file (ID, and label
	// when there is one): reported, not failed.
	PagesWithoutText []string `json:"pages_without_text"`
	// Problems are what the reader left out or found not matching (files
	// without a location, declared ALTO but PAGE, ...).
	Problems []string `json:"problems"`
	// Languages are the languages its descriptive metadata declares
	// (book.Book.Languages), as written.
	Languages []string `json:"languages,omitempty"`
	// TextPages say, for each text file of the book this run reads, the
	// page it belongs to, so that an output joins back to the book's page
	// (its log's page_num is the text file's own page).
	TextPages []textPage `json:"text_pages,omitempty"`
	// whole says the book is in one share of a --shard run (a line of a
	// list); a book given alone or found in a folder shares its text
	// files among the shares.
	whole bool
}

// textPage is a text file of a book (its path among the run's inputs, as
// the outputs are named from it) and its page: the METS physical div's
// ID, ORDER and ORDERLABEL (LABEL when it has none), or the canvas id and
// label.
type textPage struct {
	Text  string `json:"text"`
	Page  string `json:"page"`
	Order string `json:"order,omitempty"`
	Label string `json:"label,omitempty"`
}

// noPagesNote is what a METS file read as a metadata record because it has
// no pages (err, from collectBook: an anchor file of a multi-volume work,
// a METS without a PHYSICAL structMap) adds to a failure of its
// translation, which said only that the field list matched nothing.
func noPagesNote(err error) string {
	if !errors.Is(err, errNoPages) {
		return ""
	}
	return "it was read as a metadata record, being a METS file without pages: " + strings.TrimPrefix(err.Error(), errNoPages.Error()+": ")
}

// name prefixes a book's problems in a run of several books: its source
// ("" when the book is the run's input).
func (b *bookInfo) name(alone bool) string {
	if alone {
		return ""
	}
	return b.Source + ": "
}

// isBookFile says whether the file at p starts as a METS file or a IIIF
// manifest or collection (book.Looks).
func isBookFile(p string) bool {
	head, err := book.ReadHead(p)
	return err == nil && book.Looks(head)
}

// place says where a book's text files go in a run: prefix is the folder
// (relative to the output and download folders, with "/") that holds them
// and prefixes their shard keys, "" for a book that is the run's input;
// whole says the book is one share of a shard run (a line of a list), so
// every text file of it is this shard's.
type place struct {
	prefix string
	whole  bool
}

// collectBook reads the book at location (a local METS file or manifest,
// or their URL) and lists its text files, in page order, as the run's
// inputs: each keeps its path relative to the book (book.RelPath, under
// at.prefix) as its folder under the output directory and as its shard
// key, and a remote one is fetched into the download folder under the
// same path. A text file that cannot be fetched is an input with its error
// (recorded failed; the others are translated). The host of a book URL may
// be reached at a private address (the user named it); links to other
// hosts may not.
func collectBook(ctx context.Context, s *settings, location string, at place) (inputs []input, all []string, info *bookInfo, err error) {
	// --fetch-workers text files are fetched at once (a METS file's while
	// it is read, book.Options.Fetchers; a manifest's ahead of their
	// turn, lookahead.RunKeyed), and at most as many requests sent to one
	// host.
	policy := fetch.Policy{MaxBytes: maxDownload, MaxPerHost: s.FetchWorkers}
	if isURL(location) {
		if u, err := url.Parse(location); err == nil {
			policy.AllowHosts = []string{u.Host}
		}
	}
	f := fetch.New(policy, nil)
	kept := useKept(s, f, location, at.prefix)
	// A share of a --shard run that shares the book's text files fetches
	// only its own: the book is read without its remote text files
	// (FetchLater, which lists the same files whatever their content, so
	// every share counts the same inputs), and each of the share's is told
	// by its content once fetched (book.Text.Identify), as reading the
	// book would have told it.
	lazy := sharesBook(s, at)
	b, err := book.Read(ctx, location, book.Options{Fetcher: f, Pages: s.Pages, TextGroups: s.TextGroups, MaxBytes: maxDownload, Fetchers: s.FetchWorkers, FetchLater: lazy})
	if errors.Is(err, book.ErrNoPages) && s.Pages == "" && (b == nil || b.Kind == book.METS) {
		// A METS file without pages (descriptive metadata only) is a
		// document: its fields are translated as metadata; why it has
		// no pages goes with it (noPagesNote).
		return nil, nil, nil, fmt.Errorf("%w: %w", errNoPages, err)
	}
	if err != nil {
		return nil, nil, nil, fmt.Errorf("%w: %w", errBook, err)
	}
	info = &bookInfo{Source: location, Folder: at.prefix, Kind: string(b.Kind), ID: b.ID, Label: b.Label, Pages: len(b.Pages), Languages: b.Languages,
		TextFormats: map[string]int{}, PagesWithoutText: []string{}, Problems: []string{}, whole: at.whole}
	for _, p := range b.Problems {
		if p.Err == nil { // an unread text file is a failed input instead
			info.Problems = append(info.Problems, p.String())
		}
	}
	// The run's text files, in page order; those to fetch are fetched
	// --fetch-workers at once ahead of their turn (a METS file's were
	// fetched when it was read and come from the fetcher's cache; a
	// manifest's were not).
	type item struct {
		page  book.Page
		index int
		text  book.Unread
		rel   string
		kept  *ledger.Fetch // kept in the download folder by an earlier run (keptText)
	}
	var items []item
	var fetchURLs []string
	seen := map[string]bool{}
	for pi, p := range b.Pages {
		if len(p.Texts) == 0 && len(p.Unread) == 0 {
			info.PagesWithoutText = append(info.PagesWithoutText, pageName(p))
			continue
		}
		info.PagesWithText++
		for _, t := range pageTexts(p) {
			if seen[t.Location] {
				continue
			}
			seen[t.Location] = true
			info.TextFiles++
			if t.Format != "" {
				info.TextFormats[string(t.Format)]++
			}
			rel := path.Join(at.prefix, book.RelPath(location, t.Text))
			all = append(all, rel)
			if !at.whole && !s.Shard.Has(rel) {
				continue
			}
			it := item{page: p, index: pi, text: t, rel: rel}
			info.TextPages = append(info.TextPages, textPage{Text: rel, Page: p.ID, Order: p.Order, Label: p.Label})
			if t.Err == nil && isURL(t.Location) {
				if it.kept = keptText(s, kept, t.Location, rel); it.kept == nil {
					fetchURLs = append(fetchURLs, t.Location)
				}
			}
			items = append(items, it)
		}
	}
	get := f.Getter(b.Remote)
	ahead := lookahead.RunKeyed(ctx, fetchURLs, s.FetchWorkers, func(ctx context.Context, url string) fetch.Result {
		data, err := get(ctx, url)
		return fetch.Result{Data: data, Err: err}
	})
	defer ahead.Stop()
	fetchText := func(ctx context.Context, url string) ([]byte, error) {
		if got, ok := ahead.Take(url); ok {
			return got.Data, got.Err
		}
		if err := context.Cause(ctx); err != nil {
			return nil, err
		}
		return get(ctx, url)
	}
	for _, it := range items {
		t, p := it.text, it.page
		in := input{Path: t.Location, Origin: t.Location, Err: t.Err}
		if t.Err == nil {
			in = bookText(ctx, s, f, fetchText, it.kept, t.Text, it.rel)
			if !tellFetched(lazy, &in, &t.Text, p.ID, info) {
				continue
			}
		}
		in.Book, in.Page, in.PageManifest, in.BookOf = &t.Text, p.ID, p.Manifest, info
		in.PageIdx, in.PageOrder, in.Sole = it.index, p.Order, soleInGroup(p, t.Text)
		if p.Image != nil {
			in.PageW, in.PageH = float64(p.Image.Width), float64(p.Image.Height)
		}
		inputs = append(inputs, in)
	}
	if info.TextFiles == 0 {
		why := ""
		if len(b.Problems) > 0 {
			why = "; the reader's problems: " + book.Problems(b.Problems, 3)
		}
		return nil, nil, info, fmt.Errorf("%w: %s: none of its %d pages has a text file (ALTO, PAGE-XML or hOCR)%s", errBook, location, len(b.Pages), why)
	}
	return inputs, all, info, nil
}

// sharesBook says whether the book at is read by a share of a --shard run
// that shares its text files with the other shares (a book given alone or
// found in a folder), which reads it without its remote text files.
func sharesBook(s *settings, at place) bool { return !s.Shard.Whole() && !at.whole }

// tellFetched gives the text file t of page, for its input in, the format
// its content has when the book was read without it (lazy) and in was
// fetched (identifyFetched); it reports false when that content is no
// text and the file is left out, and fails in when it should have been
// (book.ServedNotText). t and in stay as they are otherwise.
func tellFetched(lazy bool, in *input, t *book.Text, page string, info *bookInfo) bool {
	if !lazy || in.Err != nil || t.Sniffed || !isURL(t.Location) {
		return true
	}
	told, keep, err := identifyFetched(in.Path, *t, page, info)
	switch {
	case err != nil:
		in.Err = fmt.Errorf("book text file %s of page %s: %w", t.Location, page, err)
	case keep:
		*t = told
	}
	return keep || err != nil
}

// identifyFetched tells the text file t of page, listed without its
// content and fetched to path, by its content (book.Text.Identify): the
// text with its format, or false when it is no ALTO, PAGE or hOCR (the
// download removed). What Identify says of it is one of info's problems,
// as the book reader's are; a file the METS declares text whose answer
// is an error page is a book.ServedNotText error (book.Text.IdentifyFetched,
// as the reader tells it).
func identifyFetched(path string, t book.Text, page string, info *bookInfo) (book.Text, bool, error) {
	head, _ := book.ReadHead(path) // nil when unreadable: no text
	told, reason, keep, err := t.IdentifyFetched(head)
	if err != nil {
		os.Remove(path)
		return t, false, err
	}
	if reason != "" {
		info.Problems = append(info.Problems, book.Problem{Page: page, File: t.FileID, Reason: reason}.String())
	}
	if !keep {
		os.Remove(path)
		return t, false, nil
	}
	if t.Format == "" {
		info.TextFormats[string(told.Format)]++
	}
	return told, true, nil
}

// pageTexts lists a page's text files in the order of its fptrs' kinds:
// those read, then those that could not be read (book.Page.Unread), each
// with the error that makes it a failed input: it names the file and what
// was wrong (a missing local file, a URL's HTTP status).
func pageTexts(p book.Page) []book.Unread {
	out := make([]book.Unread, 0, len(p.Texts)+len(p.Unread))
	for _, t := range p.Texts {
		out = append(out, book.Unread{Text: t})
	}
	for _, u := range p.Unread {
		out = append(out, book.Unread{Text: u.Text, Err: fmt.Errorf("book text file %s of page %s: cannot read: %w", u.Text.Location, p.ID, u.Err)})
	}
	return out
}

// bookText is the input of one text file of a book: a local file as it
// is, a remote one fetched into the download folder at rel (reading the
// book fetched it already, to tell its format: it is taken from the
// fetcher's cache), or, with --resume, the file an earlier run fetched and
// kept there (kept, from keptText). Its fetch is recorded in the ledger
// once the run opens it (recordFetches).
func bookText(ctx context.Context, s *settings, f *fetch.Fetcher, get func(context.Context, string) ([]byte, error), kept *ledger.Fetch, t book.Text, rel string) input {
	dir := path.Dir(rel)
	if dir == "." {
		dir = ""
	}
	dir = filepath.FromSlash(dir)
	if !isURL(t.Location) {
		return input{Path: t.Location, Origin: t.Location, Dir: dir}
	}
	dst := filepath.Join(s.DownloadDir, filepath.FromSlash(rel))
	if kept != nil {
		return input{Path: dst, Origin: t.Location, Dir: dir, Remote: &remoteText{fetch: *kept, before: true}}
	}
	data, err := get(ctx, t.Location)
	f.Drop(t.Location) // the download folder keeps it
	if err == nil {
		if err = os.MkdirAll(filepath.Dir(dst), 0o777); err == nil {
			err = atomicfile.WriteFile(dst, data, 0o666)
		}
	}
	if err != nil {
		return input{Path: dst, Origin: t.Location, Dir: dir, Err: fmt.Errorf("book text file %s: %w", t.Location, err)}
	}
	return input{Path: dst, Origin: t.Location, Dir: dir, Remote: &remoteText{fetch: ledger.FetchOf(data)}}
}

// keptText is the fetch of the text file at url, written at rel, when an
// earlier run kept it (useKept) and it is still in the download folder as
// it was: bookText takes it from there, nothing is fetched. nil otherwise.
func keptText(s *settings, kept ledger.Fetches, url, rel string) *ledger.Fetch {
	k, ok := kept.Fetched(url, textIdentity(url))
	if !ok {
		return nil
	}
	if _, ok := k.Read(filepath.Join(s.DownloadDir, filepath.FromSlash(rel))); !ok {
		return nil
	}
	return &k
}

// remoteText is a remote text file of a book kept in the download folder.
type remoteText struct {
	fetch ledger.Fetch
	// before: an earlier run fetched it (this run did not).
	before bool
}

// textIdentity is the ledger identity of the fetch of a book's text file
// (ledger.RecordFetch).
func textIdentity(url string) string {
	return ledger.DigestBytes([]byte("book text file\x00" + url))
}

// useKept gives the book's fetcher what the run has without a request:
// a book URL's download (collect downloaded it to see that it is a book),
// and, with --resume, the text files earlier runs fetched and kept in the
// download folder (the translate ledgers of the output folder record each
// fetch: ledger.ReadFetches), so that reading the book, which reads every
// text file to tell its format, requests none of them again. It returns
// those fetches (nil without --resume).
func useKept(s *settings, f *fetch.Fetcher, location, prefix string) ledger.Fetches {
	var kept ledger.Fetches
	if s.Resume {
		kept = ledger.ReadFetches(filepath.Join(s.Output, ledger.Folder), "translate")
	}
	f.UseKept(func(u string) ([]byte, bool) {
		if u == location {
			return downloaded(filepath.Join(s.DownloadDir, urlFileName(u)), u)
		}
		k, ok := kept.Fetched(u, textIdentity(u))
		if !ok {
			return nil, false
		}
		return k.Read(filepath.Join(s.DownloadDir, filepath.FromSlash(path.Join(prefix, book.RelPath(location, book.Text{Location: u})))))
	})
	return kept
}

// downloaded returns the download dst of the URL u (download): false when
// its sidecar names another URL, or the file is not the bytes downloaded.
func downloaded(dst, u string) ([]byte, bool) {
	var src downloadSource
	b, err := os.ReadFile(sourcePath(dst))
	if err != nil || json.Unmarshal(b, &src) != nil || src.URL != u {
		return nil, false
	}
	data, err := regularfile.Read(dst)
	if err != nil || ledger.DigestBytes(data) != src.SHA256 {
		return nil, false
	}
	return data, true
}

// recordFetches records in the run's ledger the fetch of every remote
// text file of a book among the inputs (those an earlier run fetched too,
// when its ledger is another configuration's), and counts them in the run
// metadata (book_fetch).
func (r *runner) recordFetches(led *ledger.Ledger, inputs []input) error {
	if r.book == nil && len(r.books) == 0 {
		return nil
	}
	fetched, before, bytes := 0, 0, 0
	for _, in := range inputs {
		if in.Remote == nil {
			continue
		}
		id := textIdentity(in.Origin)
		if in.Remote.before {
			before++
		} else {
			fetched++
			bytes += in.Remote.fetch.Bytes
		}
		if k, ok := led.Fetched(in.Origin, id); ok && k == in.Remote.fetch {
			continue
		}
		if err := led.RecordFetch(in.Origin, id, in.Remote.fetch); err != nil {
			return err
		}
	}
	r.pd.SetConfig("book_fetch", map[string]any{"text_files_fetched": fetched, "bytes": bytes, "fetched_before": before})
	r.log.Info("book text files fetched", "fetched", fetched, "bytes", bytes, "fetched_before", before)
	return nil
}

// pageName names a page in reports: its ID, with its label when it has
// one.
func pageName(p book.Page) string {
	if p.Label != "" && p.Label != p.ID {
		return p.ID + " (" + p.Label + ")"
	}
	return p.ID
}
