package main

import (
	"archivekit/internal/utf8name"
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"

	"archivekit/internal/atomicfile"
	"archivekit/internal/book"
	"archivekit/internal/cliflags"
	"archivekit/internal/fetch"
	"archivekit/internal/ledger"
	"archivekit/internal/pageclass/classify"
	"archivekit/internal/pageclass/imageio"
	"archivekit/internal/pageclass/pipeline"
	"archivekit/internal/pageclass/results"
)

// Books: a METS file or a IIIF manifest or collection (a local file, or a
// URL given to -f) is read with internal/book, and each of its pages, in
// physical order, becomes one input of the run, named
// "<book>#<page ID>" (the book relative to the input folder, or its URL):
// that name is the page's item in the ledger and the failures table and
// its shard key. Its rows are keyed like the pages of a PDF (FILE the
// book's stem, PAGE its position in the book), SOURCE is the book, and
// the page's identifiers in the book follow (results.WithBook).
//
// A page's image is read when its turn comes: a local file as any input
// (shrink-on-load), a IIIF Image service's derivative at the models'
// largest input size (book.ImageService.Derivative, as the service's
// compliance level allows), else the image's URL, each fetched once through
// the run's bounded fetcher. A fetched page is recorded in the ledger under
// the URL it was fetched from, so a resumed run knows it is done without
// fetching it again.

// bookPage is one page of a book among a run's inputs.
type bookPage struct {
	// name is the page's item: the book's name, "#", the page's ID.
	name string
	// source is the book's name: relative to the input folder, or its URL
	// (the SOURCE column).
	source string
	// file is the FILE of the page's rows: the book's stem.
	file string
	// book is the book's location as given.
	book  string
	index int // PAGE: its position in the book, from 1
	ids   results.BookPage
	// local is the image file of a page read from the disk; "" when it is
	// fetched from target.
	local  string
	image  *book.Image
	target string
	// linked: the book was read from a URL, so its links are fetched as
	// links (fetch.Fetcher.GetLinked).
	linked bool
}

// identity is what the ledger records a fetched page under: the URL it was
// fetched from, which a resumed run knows without fetching.
func (b *bookPage) identity() string {
	if b.local != "" {
		return ""
	}
	return ledger.DigestBytes([]byte("book page image\x00" + b.target))
}

// bookInputs are the books of a run.
type bookInputs struct {
	// pages are the book pages by input name (inputSet.Files).
	pages map[string]*bookPage
	// any says the run's input (every shard) holds a book.
	any bool
	// failed are the pages and books that cannot be classified, found
	// while reading the books.
	failed []bookFailure
	// problems are what the book reader left out or found wrong
	// (book.Problem), as "book: problem".
	problems []string
	// candidates are the files of a folder run that read as books
	// (book.Looks), or the books of a list, before they are read.
	candidates []string
	// list says the books came from a list: a URL's FILE is then its host
	// and path (bookStem).
	list    bool
	fetcher *fetch.Fetcher
	// fetchedPages and imageBytes count the page images fetched and their
	// bytes, each image once however many pages show it; reused counts
	// the pages an earlier run had fetched.
	fetchedPages, imageBytes, reused atomic.Int64
	// thisRun are the URLs this run fetched: each is counted once, and a
	// page whose image another page of the run fetched (canvases sharing
	// an image) takes the kept image but is not counted in reused.
	thisRun sync.Map
	// led is the run's ledger, which records every fetch, and cache the
	// folder of the images fetched and not yet classified.
	led   *ledger.Ledger
	cache string
	// readAt are the locations of the books read (bookKey): a folder
	// holding an anchor METS and its volumes reads each volume once.
	readAt map[string]bool
	// read are the books read, in order, for --book-out.
	read []*book.Book
	// size is the long side of the images fetched (the models' largest
	// input size).
	size int
}

// bookFailure is a book that cannot be read or a page without an image.
type bookFailure struct {
	file, name, reason string
	// err is why a book could not be read; a passing one (ledger.Transient:
	// the server answered 503, timed out) leaves the book to do.
	err error
}

// isURL says whether s is an http or https URL.
// isURL is book.IsURL: an http(s) URL with a host.
func isURL(s string) bool { return book.IsURL(s) }

// readHead returns the first n bytes of a file ("" when it cannot be
// read).
func readHead(file string, n int) []byte {
	f, err := os.Open(file)
	if err != nil {
		return nil
	}
	defer f.Close()
	head := make([]byte, n)
	k, _ := io.ReadFull(f, head)
	return head[:k]
}

// isBookFile says whether a local file reads as a book by its content.
func isBookFile(file string) bool { return book.Looks(readHead(file, book.LooksLen)) }

// bookOptions are the book reader's options of the run.
func (r *classifier) bookOptions(f *fetch.Fetcher) book.Options {
	c := r.cli
	var skip []string
	for _, t := range strings.Split(c.BookSkipTypes, ",") {
		if t = strings.TrimSpace(t); t != "" {
			skip = append(skip, t)
		}
	}
	return book.Options{Text: book.TextNone, Fetcher: f, ImageGroup: c.ImageGroup, Pages: c.BookPages, SkipTypes: skip}
}

// newFetcher is the run's fetcher: fetch.Defaults, with private addresses
// reachable from a book's links only on the hosts of the book URLs the
// user named (named, as translate does) or, on any host, with
// --fetch-private, and at most --fetch-workers requests to one host at
// once.
func (r *classifier) newFetcher(named ...string) *fetch.Fetcher {
	p := fetch.Policy{MaxPerHost: r.cli.FetchWorkers}
	if r.cli.FetchPrivate {
		p.Private = fetch.PrivateAllowed
	}
	for _, loc := range named {
		if u, err := url.Parse(loc); err == nil && isURL(loc) {
			p.AllowHosts = append(p.AllowHosts, u.Host)
		}
	}
	return fetch.New(p, nil)
}

// collectBook is the input of -f naming a book (a URL, or a file that reads
// as one): its pages. A book that cannot be read fails the run with the
// reader's error, which names the book and what was wrong.
func (r *classifier) collectBook(ctx context.Context, loc string) (*inputSet, error) {
	set := &inputSet{Root: ".", books: &bookInputs{pages: map[string]*bookPage{}, fetcher: r.newFetcher(loc)}}
	if !isURL(loc) {
		set.Root = filepath.Dir(loc)
	}
	if err := set.addBook(ctx, loc, r.bookOptions(set.books.fetcher)); err != nil {
		if errors.Is(err, book.ErrPageFile) {
			// A URL is read as a book: a page image or PDF is fetched by
			// the book that lists it, or given as a file.
			return nil, cliflags.NoInput(fmt.Errorf("%w; -f takes a page image or PDF as a local file: download it (curl -O %s) and give the file, or give the book that lists it", err, loc))
		}
		if ledger.Transient(err) {
			// The server's passing fault (a 503, a timeout): no page of
			// it was tried, the run is to be made again (exit 75).
			return nil, cliflags.IncompleteError{Undone: 1, Err: fmt.Errorf("book: %w", err)}
		}
		return nil, cliflags.NoInput(fmt.Errorf("book: %w", err))
	}
	set.Keys = results.NewKeyer(set.Root, nil, false)
	if len(set.Files) == 0 {
		why := ""
		if b := set.books.read; len(b) == 1 && len(b[0].Problems) > 0 {
			why = "; the reader's problems: " + book.Problems(b[0].Problems, 3)
		}
		return nil, cliflags.NoInput(fmt.Errorf("book %s: no page has an image to classify%s", loc, why))
	}
	return set, nil
}

// collectList is the input of -f naming a list of books (book.IsList)
// (book.ReadList: URLs, and local books relative to the list's folder):
// the pages of each book, as for the books of a folder run (addBooks): a
// book that cannot be read is recorded as failed and the others are
// classified. A line that names neither a URL nor a local book is a usage
// error naming the line.
func (r *classifier) collectList(ctx context.Context, list string) (*inputSet, error) {
	items, err := book.ReadList(list)
	if err != nil {
		return nil, cliflags.Usage(err)
	}
	if len(items) == 0 {
		return nil, cliflags.NoInput(fmt.Errorf("%s: the list names no book", list))
	}
	set := &inputSet{Root: filepath.Dir(list), books: &bookInputs{pages: map[string]*bookPage{}, list: true}}
	for _, it := range items {
		set.books.candidates = append(set.books.candidates, it.Location)
	}
	if err := r.addBooks(ctx, set); err != nil {
		return nil, err
	}
	return set, nil
}

// addBooks reads the books a folder run found (books.candidates), adds
// their pages after the files, and leaves out the image files that are
// pages of a book read (they are classified as its pages). A book that
// cannot be read is recorded as failed; the others are classified.
func (r *classifier) addBooks(ctx context.Context, set *inputSet) error {
	if set.books == nil || len(set.books.candidates) == 0 {
		return nil
	}
	var named []string // the URLs of a list (a folder's books are files)
	if set.books.list {
		named = set.books.candidates
	}
	set.books.fetcher = r.newFetcher(named...)
	opts := r.bookOptions(set.books.fetcher)
	seen := map[string]bool{}
	for _, b := range set.books.candidates {
		if seen[b] {
			// A list naming a book twice: read once, said (each of its
			// pages failed as "page ID given twice in the book").
			r.log.Warn("book listed twice: read once", "book", b)
			r.para.Warn("book listed twice, read once: " + b)
			continue
		}
		seen[b] = true
		if err := set.addBook(ctx, b, opts); err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			set.books.failed = append(set.books.failed, bookFailure{file: b, name: itemName(set, b), reason: "book not read: " + err.Error(), err: err})
		}
	}
	taken := map[string]bool{}
	for _, bp := range set.books.pages {
		if bp.local != "" {
			taken[filepath.Clean(bp.local)] = true
		}
	}
	for _, b := range set.books.read {
		// The other files its pages list (an OCR-D workspace's
		// binarised, cropped and deskewed images were classified as 73
		// pages of their own beside the book's 2).
		for _, f := range b.Files {
			taken[filepath.Clean(f)] = true
		}
	}
	kept := set.Files[:0:0]
	var loose []string
	for _, f := range set.Files {
		if _, isPage := set.books.pages[f]; !isPage && taken[filepath.Clean(f)] {
			set.BookImages++
			continue
		}
		kept = append(kept, f)
		if _, isPage := set.books.pages[f]; !isPage {
			loose = append(loose, f)
		}
	}
	set.Files = kept
	set.takeBookImages(taken)
	set.Keys = results.NewKeyer(set.Root, loose, r.pageFromName())
	if len(set.Files) == 0 {
		msg := fmt.Sprintf("no page to classify in %s: %d books, none with a page image read", cmp.Or(r.cli.File, set.Root), len(set.books.candidates))
		var why []book.Problem
		passing := 0
		for _, f := range set.books.failed {
			why = append(why, book.Problem{File: f.name, Reason: f.reason})
			if ledger.Transient(f.err) {
				passing++
			}
		}
		if len(why) > 0 {
			msg += " (" + book.Problems(why, 3) + ")"
		}
		if passing > 0 {
			// A book the server failed in passing is to be read again.
			return cliflags.IncompleteError{Undone: passing, Err: errors.New(msg)}
		}
		return cliflags.NoInput(errors.New(msg))
	}
	return nil
}

// addBook reads the book at loc and adds its pages to the set. The anchor
// METS of a multi-volume work is read as its volumes, each a book of its
// own (addVolumes).
func (s *inputSet) addBook(ctx context.Context, loc string, opts book.Options) error {
	return s.readBook(ctx, loc, opts, false)
}

// readBook is addBook; volume says loc is a volume of an anchor, whose
// FILE is then its host and path when it is a URL (the volumes of one work
// are often all ".../mets.xml").
func (s *inputSet) readBook(ctx context.Context, loc string, opts book.Options, volume bool) error {
	bs := s.books
	if bs.readAt[bookKey(loc)] {
		return nil // a volume its anchor read, or an anchor's volume read before it
	}
	b, err := book.Read(ctx, loc, opts)
	var anchor *book.AnchorError
	if !volume && errors.As(err, &anchor) {
		return s.addVolumes(ctx, anchor, opts)
	}
	if err != nil {
		return err
	}
	if bs.readAt == nil {
		bs.readAt = map[string]bool{}
	}
	bs.readAt[bookKey(loc)] = true
	bs.any = true
	bs.read = append(bs.read, b)
	source := loc
	if !isURL(loc) {
		source = itemName(s, loc)
	}
	root := s.Root
	if volume && !isURL(loc) {
		// A volume beside its anchor's folder (../vol1/mets.xml) is
		// named from the folder both are in: from the input folder,
		// every volume of an OCR-D work would be "mets".
		root = commonDir(s.Root, filepath.Dir(loc))
	}
	file := bookStem(root, loc, bs.list || volume)
	why := map[string][]string{} // the problems of each page, by its ID
	for _, p := range b.Problems {
		bs.problems = append(bs.problems, source+": "+p.String())
		if p.Page != "" {
			why[p.Page] = append(why[p.Page], strings.TrimPrefix(p.String(), p.Page+": "))
		}
	}
	for i, p := range b.Pages {
		name := source + "#" + p.ID
		if p.Image == nil {
			// Why, in the failures table (it was in a WARN line only).
			reason := "page without an image"
			if p.Label != "" {
				reason += fmt.Sprintf(" (labelled %q)", p.Label)
			}
			if w := why[p.ID]; len(w) > 0 {
				reason += " (" + strings.Join(w, "; ") + ")"
			}
			bs.failed = append(bs.failed, bookFailure{file: loc, name: name, reason: reason})
			continue
		}
		bp := &bookPage{name: name, source: source, file: file, book: loc, index: i + 1, image: p.Image, linked: b.Remote,
			ids: results.BookPage{ID: p.ID, Order: p.Order, Label: p.Label}}
		if p.Image.Service == nil && !isURL(p.Image.Location) {
			bp.local = p.Image.Location
		}
		// The input's name: the book's path (a URL as given) and the
		// page's ID; unique as long as page IDs are.
		in := loc + "#" + p.ID
		if _, dup := bs.pages[in]; dup {
			bs.failed = append(bs.failed, bookFailure{file: loc, name: name, reason: "page ID given twice in the book"})
			continue
		}
		bs.pages[in] = bp
		s.Files = append(s.Files, in)
	}
	return nil
}

// addVolumes reads the volumes of an anchor METS as books of their own, in
// the anchor's order. A volume that cannot be read is a failed input
// naming it and the anchor, as a book of a list is; a remote anchor's
// volumes on another host are not read (the anchor is a document of that
// server, and its links are not the user's own: give such a volume
// yourself). An anchor none of whose volumes could be read is an error.
func (s *inputSet) addVolumes(ctx context.Context, a *book.AnchorError, opts book.Options) error {
	bs := s.books
	bs.problems = append(bs.problems, fmt.Sprintf("%s: the METS of a multi-volume work: its %d volumes are read as books", s.nameOf(a.Location), len(a.Volumes)))
	read := 0
	var last error
	given := map[string]bool{} // the books the run was given: each read as such
	for _, c := range bs.candidates {
		given[bookKey(c)] = true
	}
	for _, v := range a.Volumes {
		if k := bookKey(v); given[k] || bs.readAt[k] {
			read++ // a book of the list or folder, or read already
			continue
		}
		err := sameHost(a.Location, v)
		if err == nil {
			err = s.readBook(ctx, v, opts, true)
		}
		if err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			last = err
			bs.failed = append(bs.failed, bookFailure{file: v, name: s.nameOf(v), reason: "volume of " + s.nameOf(a.Location) + " not read: " + err.Error(), err: err})
			continue
		}
		read++
	}
	if read == 0 && last != nil {
		return fmt.Errorf("%w (no volume of the multi-volume work could be read; the last: %v)", a, last)
	}
	return nil
}

// bookKey is the key of a book's location in bookInputs.readAt: a URL's
// host, port and path (http and https on their default ports one server,
// as sameHost takes them), a file's absolute path.
func bookKey(loc string) string {
	if isURL(loc) {
		if u, err := url.Parse(loc); err == nil {
			return strings.ToLower(u.Hostname()) + ":" + hostPort(u) + u.RequestURI()
		}
		return loc
	}
	if abs, err := filepath.Abs(loc); err == nil {
		return abs
	}
	return filepath.Clean(loc)
}

// nameOf is a book's name in records: a URL as it is, a file as itemName
// gives it.
func (s *inputSet) nameOf(loc string) string {
	if isURL(loc) {
		return loc
	}
	return itemName(s, loc)
}

// sameHost refuses a volume of a remote anchor on another host, or a local
// file it names. The host is compared without its scheme and with its
// default port (an http anchor's https volume is the same server).
func sameHost(anchor, volume string) error {
	if !isURL(anchor) {
		return nil
	}
	a, _ := url.Parse(anchor)
	v, err := url.Parse(volume)
	if err != nil || !isURL(volume) || !strings.EqualFold(v.Hostname(), a.Hostname()) || hostPort(v) != hostPort(a) {
		return fmt.Errorf("%s: a volume on another server than its anchor (%s) is not read: give it yourself (-f, or a list file)", volume, a.Host)
	}
	return nil
}

// hostPort is u's port, its scheme's default when it names none; http and
// https count as one server on their default ports.
func hostPort(u *url.URL) string {
	if p := u.Port(); p != "" && !(p == "80" && u.Scheme == "http") && !(p == "443" && u.Scheme == "https") {
		return p
	}
	return ""
}

// commonDir is the deepest folder holding both a and b (as absolute paths;
// a when either cannot be made absolute).
func commonDir(a, b string) string {
	aa, err1 := filepath.Abs(a)
	bb, err2 := filepath.Abs(b)
	if err1 != nil || err2 != nil {
		return a
	}
	for {
		if rel, err := filepath.Rel(aa, bb); err == nil && rel != ".." && !strings.HasPrefix(rel, "../") {
			return aa
		}
		parent := filepath.Dir(aa)
		if parent == aa {
			return aa
		}
		aa = parent
	}
}

// bookStem is the FILE of a book's rows: the book's path relative to the
// root without its extension, or the last segment of a URL's path
// ("manifest" for https://example.org/iiif/b1/manifest.json, "book" when it
// has none); with full (the books of a list, which many URLs ending alike),
// a URL's host and path ("example.org/iiif/b1/manifest").
func bookStem(root, loc string, full bool) string {
	if isURL(loc) {
		u, _ := url.Parse(loc)
		p := strings.TrimRight(u.Path, "/")
		base := path.Base(p)
		if full {
			return utf8name.Escape(u.Host + strings.TrimSuffix(p, path.Ext(base)))
		}
		if base == "." || base == "/" || base == "" {
			return "book"
		}
		return utf8name.Escape(strings.TrimSuffix(base, path.Ext(base)))
	}
	rel, err := filepath.Rel(root, loc)
	if err != nil || strings.HasPrefix(rel, "..") {
		rel = filepath.Base(loc)
	}
	rel = filepath.ToSlash(rel)
	return utf8name.Escape(strings.TrimSuffix(rel, path.Ext(rel)))
}

// page is the book page of an input, nil for a file.
func (s *inputSet) page(name string) *bookPage {
	if s.books == nil {
		return nil
	}
	return s.books.pages[name]
}

// target sets what each fetched page is fetched from: the derivative of
// its IIIF Image service at size pixels on the long side, else its URL.
func (s *inputSet) target(size int) {
	if s.books == nil {
		return
	}
	s.books.size = size
	for _, bp := range s.books.pages {
		switch {
		case bp.local != "":
		case bp.image.Service != nil:
			bp.target = bp.image.Service.Derivative(size)
		default:
			bp.target = bp.image.Location
		}
	}
}

// pageKey is the row key of page (of pages) of input name: for a page of
// a book, FILE its book's stem and PAGE its position in the book.
func (s *inputSet) pageKey(name string, page, pages int) (results.Key, error) {
	if bp := s.page(name); bp != nil {
		if page > 1 {
			return results.Key{}, fmt.Errorf("%s: the page's image has %d pages: only its first is classified", bp.name, pages)
		}
		return results.Key{File: bp.file, Page: bp.index}, nil
	}
	return s.Keys.PageKey(name, page, pages)
}

// labelled is p with, for a page of a book, its label in the book as its
// page label, where a PDF page's label goes (the PAGE_LABEL column, the
// document records' page labels): the METS div's ORDERLABEL (LABEL when
// it has none) or the canvas label. A page without one keeps none (its
// record then counts pages by position, as a PDF without labels does).
func (s *inputSet) labelled(p classify.Page) classify.Page {
	if bp := s.page(p.Name); bp != nil && p.Label == "" {
		p.Label = bp.ids.Label
	}
	return p
}

// source is the SOURCE of input name's rows and the book identifiers of
// its page (zero for a file).
func (s *inputSet) source(name string) (string, results.BookPage) {
	if bp := s.page(name); bp != nil {
		return bp.source, bp.ids
	}
	return itemName(s, name), results.BookPage{}
}

// remote says whether a page of the run is fetched (not read from a local
// file).
func (s *inputSet) remote() bool {
	if s.books == nil {
		return false
	}
	for _, bp := range s.books.pages {
		if bp.local == "" {
			return true
		}
	}
	return false
}

// inputs are the pipeline inputs of files: a page of a book is read or
// fetched when the pipeline opens it, --fetch-workers of them at once
// ahead of the classification (predictOptions), their rows in page order.
func (s *inputSet) inputs(files []string) []pipeline.Input {
	in := pipeline.Files(files)
	for i, f := range files {
		if bp := s.page(f); bp != nil {
			in[i].Fetch = s.books.fetchFunc(bp)
			// a decode error names the image, not only the page
			in[i].Source = cmp.Or(bp.local, bp.target)
		}
	}
	return in
}

// fetchLock is read-held while a page's image is fetched and its fetch
// recorded (pages are fetched at once: --fetch-workers): a test takes it
// to stop a run between fetches, none half done.
var fetchLock sync.RWMutex

// fetchFunc reads a page's image: its file, or its target, from the run's
// fetched-image folder when the ledger records that an earlier run fetched
// it (a run stopped after fetching pages it had not yet classified), else
// fetched, kept in that folder and recorded in the ledger before it is
// classified; the fetcher's cache drops it once read.
func (bs *bookInputs) fetchFunc(bp *bookPage) func(ctx context.Context) ([]byte, error) {
	return func(ctx context.Context) ([]byte, error) {
		if bp.local != "" {
			return imageio.ReadFile(bp.local)
		}
		fetchLock.RLock()
		defer fetchLock.RUnlock()
		if data, ok := bs.fetchedBefore(bp); ok {
			return data, nil
		}
		var data []byte
		var err error
		if bp.image.Service != nil {
			// The derivative, within what the image server says when the
			// manifest says too little (book.FetchDerivative); the
			// ledger keeps it under the manifest's request (bp.target),
			// which a resumed run knows without asking the server.
			data, _, err = book.FetchDerivative(ctx, bs.fetcher, bp.linked, bp.image.Service, bs.size)
		} else {
			data, err = bs.fetcher.Getter(bp.linked)(ctx, bp.target)
			bs.fetcher.Drop(bp.target)
		}
		if errors.Is(err, fetch.ErrPrivate) {
			return nil, fmt.Errorf("%s: image not fetched: %w; give --fetch-private to fetch a book's links at private addresses", bp.name, err)
		}
		if err != nil {
			return nil, fmt.Errorf("%s: image not fetched: %w", bp.name, err)
		}
		if _, seen := bs.thisRun.LoadOrStore(bp.target, true); !seen {
			bs.fetchedPages.Add(1)
			bs.imageBytes.Add(int64(len(data)))
		}
		if err := bs.keep(bp, data); err != nil {
			return nil, err
		}
		return data, nil
	}
}

// keep stores a fetched image in the fetched-image folder under its
// digest and records the fetch in the ledger (ledger.RecordFetch).
func (bs *bookInputs) keep(bp *bookPage, data []byte) error {
	if bs.led == nil {
		return nil
	}
	sum := ledger.DigestBytes(data)
	if err := os.MkdirAll(bs.cache, 0o777); err != nil {
		return fmt.Errorf("fetched images: %w", err)
	}
	if err := atomicfile.WriteFile(filepath.Join(bs.cache, sum), data, 0o666); err != nil {
		return fmt.Errorf("fetched images: %w", err)
	}
	return bs.led.RecordFetch(bp.target, bp.identity(), ledger.FetchOf(data))
}

// fetchedBefore is a page's image as an earlier run of the ledger fetched
// and kept it; false when there is none (or it is not the bytes recorded).
func (bs *bookInputs) fetchedBefore(bp *bookPage) ([]byte, bool) {
	if bs.led == nil {
		return nil, false
	}
	f, ok := bs.led.Fetched(bp.target, bp.identity())
	if !ok {
		return nil, false
	}
	data, ok := f.Read(filepath.Join(bs.cache, f.SHA256))
	if _, mine := bs.thisRun.Load(bp.target); ok && !mine {
		bs.reused.Add(1)
	}
	return data, ok
}

// classified removes a page's kept image once the page is recorded in the
// ledger: a resumed run takes its rows from there.
func (bs *bookInputs) classified(bp *bookPage) {
	if bs.led == nil || bp.local != "" {
		return
	}
	if f, ok := bs.led.Fetched(bp.target, bp.identity()); ok {
		os.Remove(filepath.Join(bs.cache, f.SHA256))
	}
}

// inputSize is the long side of the images a book's pages are fetched at:
// the largest input size of the models and of the orientation model.
func (r *classifier) inputSize(folders []classify.Folder) (int, error) {
	size := 0
	for _, f := range folders {
		meta, err := f.Meta()
		if err != nil {
			return 0, err
		}
		size = max(size, meta.Preprocess.Size)
	}
	for _, o := range []*classify.Orientation{r.orient, r.ensOrientation()} {
		if o != nil && o.Meta != nil {
			size = max(size, o.Meta.Preprocess.Size)
		}
	}
	if size <= 0 {
		return 0, errors.New("the models declare no input size")
	}
	return size, nil
}

func (r *classifier) ensOrientation() *classify.Orientation {
	if r.ens == nil {
		return nil
	}
	return r.ens.Orientation
}

// recordBooks records the books' problems, the pages and books that cannot
// be classified (failures table), and the image files left to their book.
func (r *classifier) recordBooks(set *inputSet) {
	bs := set.books
	if bs == nil || !bs.any && len(bs.failed) == 0 {
		return
	}
	books := map[string]bool{}
	for _, bp := range bs.pages {
		books[bp.source] = true
	}
	groups := map[string]string{} // a METS book's image fileGrp, by the book
	for _, b := range bs.read {
		if b.Kind == book.METS {
			name := b.Source
			if !isURL(name) {
				name = itemName(set, name) // as its rows' SOURCE
			}
			groups[name] = b.ImageGroup
		}
	}
	r.log.Info("books read", "books", len(books), "pages", len(bs.pages), "problems", len(bs.problems), "pages_failed", len(bs.failed), "image_groups", groups)
	r.para.SetConfig("books", len(books))
	if len(groups) > 0 {
		r.para.SetConfig("book_image_groups", groups)
	}
	for _, p := range bs.problems {
		r.log.Warn("book: " + p)
		r.para.Warn("book: " + p)
	}
	r.warnBookOut(bs.read)
	for _, f := range bs.failed {
		if !set.Shard.Whole() && !set.Shard.Has(f.name) {
			continue // another shard's
		}
		if ledger.Transient(f.err) {
			// Not the book's fault: it is left to do (exit 75), listed in
			// the failures table as a page failed in passing is.
			r.log.Warn("book left to do after a passing failure; run again with --resume to finish it", "item", f.name, "error", f.reason)
			r.undone++
			r.lastPassing = f.err
		} else {
			// ERROR, as a page that failed (and translate's book that
			// cannot be read).
			r.log.Error("not classified", "item", f.name, "error", f.reason)
		}
		r.fail(f.file, f.name, 0, f.reason)
	}
	if set.BookImages > 0 {
		r.log.Info("image files of the folder that are pages of a book are classified as its pages", "files", set.BookImages)
	}
}

// recordFetched says how many requests the run's books took (the books
// and the page images), the pages fetched and their bytes per page, in the
// log and the run metadata (book_fetch).
func (r *classifier) recordFetched() {
	bs := r.set.books
	if bs == nil || bs.fetcher == nil {
		return
	}
	requests, bytes := bs.fetcher.Fetched()
	pages, images, reused := bs.fetchedPages.Load(), bs.imageBytes.Load(), bs.reused.Load()
	per := int64(0)
	if pages > 0 {
		per = images / pages
	}
	r.log.Info("books fetched", "requests", requests, "bytes", bytes, "pages_fetched", pages, "image_bytes", images, "bytes_per_page", per, "size", bs.size, "fetched_before", reused)
	r.para.SetConfig("book_fetch", map[string]any{"requests": requests, "bytes": bytes, "pages_fetched": pages,
		"image_bytes": images, "bytes_per_page": per, "size": bs.size, "fetched_before": reused})
}

// takeBookImages takes the files that are pages of a book of the run
// (taken) off the counts of those left out (Left, Nested): they are
// classified as the book's pages (a folder of METS files beside their TIFF
// masters was told "readable files left out: 4 .tif").
func (s *inputSet) takeBookImages(taken map[string]bool) {
	for _, f := range s.leftFiles {
		if !taken[filepath.Clean(f)] {
			continue
		}
		ext := strings.ToLower(filepath.Ext(f))
		if s.Left[ext]--; s.Left[ext] <= 0 {
			delete(s.Left, ext)
		}
		s.BookImages++
	}
	for _, f := range s.nestedFiles {
		if taken[filepath.Clean(f)] {
			s.Nested--
			s.BookImages++
		}
	}
	s.leftFiles, s.nestedFiles = nil, nil
}
