package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"net"
	"net/http"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"time"

	"archivekit/internal/atomicfile"
	"archivekit/internal/book"
	"archivekit/internal/dirwalk"
	"archivekit/internal/fetch"
	"archivekit/internal/ledger"
	"archivekit/internal/regularfile"
	"archivekit/internal/shard"
	"archivekit/internal/version"
)

// input is one document to translate, or one that could not be obtained.
type input struct {
	// Path is the local file; Origin is what the user gave (path or URL).
	Path, Origin string
	// Err, when set, says why the input is skipped.
	Err error
	// Dir is the folder, relative to the input directory, that held the
	// file in a directory run ("" for its top level, single files and
	// URLs); outputs and logs go to the same folder under the output
	// directory, so book1/0001.xml and book2/0001.xml stay apart.
	Dir string
	// NotModified is set for a URL whose earlier download was kept: the
	// server answered a resumed run's conditional request with 304.
	NotModified bool
	// Want is, with NotModified, the sha256 the download's sidecar
	// recorded: the run checks the bytes it reads to translate against it
	// (reading the file once), and downloads the URL in full when they
	// differ (the file was edited since it was downloaded).
	Want string
	// Book is, for a text file of a book, where it is in the book.
	Book *book.Text
	// Page is the ID of its page in the book; PageManifest, for a page of
	// a IIIF collection, the id of the manifest the page is of.
	Page, PageManifest string
	// BookOf is the book the text file is of (nil for other inputs).
	BookOf *bookInfo
	// PageIdx is its page's index in the book's pages read, PageOrder
	// the page's METS ORDER; Sole says it is the page's only text file of
	// its file group (bookhyphen.go).
	PageIdx   int
	PageOrder string
	Sole      bool
	// PageW and PageH are the page's canvas (or image) size, 0 when not
	// given: the ALTO lines are scaled onto it for IIIF annotations.
	PageW, PageH float64
	// LooksBook is set for a download that reads as a book (book.Looks),
	// as downloaded or, kept on a 304, as its sidecar recorded.
	LooksBook bool
	// Remote is set for a remote text file of a book kept at Path: its
	// fetch is recorded in the ledger (runner.recordFetches).
	Remote *remoteText
	// NoPages says why a METS file is translated as a metadata record
	// (noPagesNote); a failure of its translation says it too.
	NoPages string
}

// isURL is book.IsURL: an http(s) URL with a host.
func isURL(s string) bool { return book.IsURL(s) }

// matchesFormat reports whether name ends with ".<format>" for one of the
// formats (case-insensitive).
func matchesFormat(name string, formats []string) bool {
	low := strings.ToLower(name)
	for _, f := range formats {
		if strings.HasSuffix(low, "."+f) {
			return true
		}
	}
	return false
}

// collect lists the inputs of a run:
//   - an http(s) URL is downloaded into downloadDir;
//   - a list of books (book.IsList, by content) is read by book.ReadList: one a line, blank
//     lines and lines starting with # are ignored) of URLs, each
//     downloaded, and of local books (collectList);
//   - a METS file or IIIF manifest or collection (recognised by its
//     content, local or a URL) is a book: its text files are the inputs
//     (collectBook); a METS file without pages (a PHYSICAL structMap) is
//     a metadata document;
//   - any other file is translated whatever its extension;
//   - a directory is searched recursively for files matching formats, and
//     for ALTO, PAGE-XML and hOCR files whatever their names (.xml, .hocr,
//     .html, ... files recognised by their root element; the others of
//     those extensions are passed to report with the reason), and for
//     books (.xml and .json files read as METS or IIIF by their content:
//     their text files are the book's inputs, not loose ones), in sorted
//     order; the output and download directories are left out, and each
//     input keeps its folder relative to the directory (input.Dir).
//
// With --shard, only the inputs of the run's share are kept (and only
// their URLs downloaded); all are the shard keys of the inputs before
// that (shard.Key: the URL, the file's name, or its path relative to the
// directory; a list's lines). books are the books read.
//
// A missing input path is errNoInput.
func collect(ctx context.Context, s *settings, client *http.Client, report func(path, reason string)) (inputs []input, all []string, books []*bookInfo, err error) {
	in := s.Input
	if isURL(in) {
		// Downloaded whatever the shard: a book's text files are shared
		// among the shards, which only its content tells.
		d := download(ctx, client, in, s.DownloadDir, s.Resume)
		if d.Err == nil && isBookFile(d.Path) {
			inputs, all, bk, err := collectBook(ctx, s, in, place{})
			if !errors.Is(err, errNoPages) {
				return inputs, all, oneBook(bk), err
			}
			d.NoPages = noPagesNote(err)
		}
		if !s.Shard.Has(in) {
			return nil, []string{in}, nil, nil
		}
		return []input{d}, []string{in}, nil, nil
	}
	info, err := os.Stat(in)
	if err != nil {
		return nil, nil, nil, fmt.Errorf("%w: %s: %v", errNoInput, in, err)
	}
	if !info.IsDir() {
		if book.IsList(in) {
			return collectList(ctx, s, client, in)
		}
		var noPages string
		if isBookFile(in) {
			inputs, all, bk, err := collectBook(ctx, s, in, place{})
			if !errors.Is(err, errNoPages) {
				return inputs, all, oneBook(bk), err
			}
			noPages = noPagesNote(err)
		}
		if !s.Shard.Has(filepath.Base(in)) {
			return nil, []string{filepath.Base(in)}, nil, nil
		}
		return []input{{Path: in, Origin: in, NoPages: noPages}}, []string{filepath.Base(in)}, nil, nil
	}
	return collectDir(ctx, s, client, report)
}

// oneBook is the books of a run whose input is the book bk (none when it
// was not read).
func oneBook(bk *bookInfo) []*bookInfo {
	if bk == nil {
		return nil
	}
	return []*bookInfo{bk}
}

// collectList lists the inputs of the list s.Input: each URL is
// downloaded and, when it is a book, its text files are the inputs (under
// the folder bookFolder names), else it is a document; each local book's
// text files likewise. A line is one share of a shard run (its key the
// URL, or the path relative to the list's folder): a book is translated
// whole by one shard, and only the shard's URLs are downloaded. A book
// that cannot be read is a failed input; the others are translated. A
// line naming neither a URL nor a local book is book.ErrList.
func collectList(ctx context.Context, s *settings, client *http.Client, list string) (inputs []input, all []string, books []*bookInfo, err error) {
	items, err := book.ReadList(list)
	if err != nil {
		return nil, nil, nil, err // book.ErrList: a usage error
	}
	// Two URLs that name the same download file would overwrite each other
	// and both be translated from the last one: the later URL is skipped
	// with the reason instead, unless it is a book (read without its
	// download file, its outputs under its own folder). The names are taken
	// over the whole list before the shard's share, so shards sharing a
	// download and output folder never write one file.
	named := map[string]string{}
	for _, it := range items {
		loc, key := it.Location, it.Location
		if !isURL(loc) {
			key = shard.Key(filepath.Dir(list), loc)
		}
		all = append(all, key)
		first, clash := "", false
		if isURL(loc) {
			name := urlFileName(loc)
			if first, clash = named[name]; !clash {
				named[name] = loc
			}
		}
		if !s.Shard.Has(key) {
			continue
		}
		var clashErr error
		if clash {
			clashErr = fmt.Errorf("download %s: its file name %s is already that of %s in this list", loc, urlFileName(loc), first)
		}
		ins, bk := listItem(ctx, s, client, list, loc, clashErr)
		inputs = append(inputs, ins...)
		if bk != nil {
			books = append(books, bk)
		}
	}
	return inputs, all, books, nil
}

// listItem is the inputs of one location of a list (collectList): the
// text files of a book, or a document, or an input with the reason it is
// not translated. clash is set for a URL whose download name an earlier
// URL of the list has: it is read as a book without a download file, and
// skipped with clash when it is not one.
func listItem(ctx context.Context, s *settings, client *http.Client, list, loc string, clash error) ([]input, *bookInfo) {
	var d input
	switch {
	case !isURL(loc):
		d = input{Path: loc, Origin: loc} // a book by its content (book.ReadList)
	case clash != nil:
		d = input{Path: filepath.Join(s.DownloadDir, urlFileName(loc)), Origin: loc, Err: clash}
	default:
		if d = download(ctx, client, loc, s.DownloadDir, s.Resume); d.Err != nil || !d.LooksBook {
			return []input{d}, nil // a document
		}
	}
	ins, _, bk, err := collectBook(ctx, s, loc, place{prefix: bookFolder(filepath.Dir(list), loc), whole: true})
	switch {
	case err == nil:
		return ins, bk
	case clash != nil && (errors.Is(err, book.ErrNotABook) || errors.Is(err, errNoPages)):
		// not a book: skipped for its name, as any document would be
	case errors.Is(err, errNoPages):
		// a METS file without pages: a metadata document
		d.NoPages = noPagesNote(err)
	default:
		d.Err = err // a book not read: the others are translated
	}
	return []input{d}, nil
}

// bookFolder is the folder of the outputs of a book of a list or a folder
// run (place.prefix): a URL's host and folder ("example.org/iiif/b1"), a
// local book's folder relative to root ("" for root itself; its folder's
// name when it is not under root).
func bookFolder(root, loc string) string {
	var segs []string
	if isURL(loc) {
		u, _ := url.Parse(loc)
		segs = append([]string{u.Host}, strings.Split(path.Dir(u.Path), "/")...)
	} else {
		rel, err := filepath.Rel(root, filepath.Dir(loc))
		if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
			rel = filepath.Base(filepath.Dir(loc))
		}
		segs = strings.Split(filepath.ToSlash(rel), "/")
	}
	var clean []string
	for _, seg := range segs {
		if seg = strings.Trim(unsafeName.ReplaceAllString(seg, "_"), "._"); seg != "" {
			clean = append(clean, seg)
		}
	}
	return strings.Join(clean, "/")
}

// collectDir lists the inputs of the directory s.Input (see collect).
func collectDir(ctx context.Context, s *settings, client *http.Client, report func(path, reason string)) (inputs []input, all []string, books []*bookInfo, err error) {
	in := s.Input
	skipDirs := map[string]bool{}
	for _, d := range []string{s.Output, s.DownloadDir} {
		if abs, err := filepath.Abs(d); err == nil {
			skipDirs[abs] = true
		}
	}
	var loose []input
	var found []string // the files that read as books
	var lists []string // the files of --formats that list URLs (translate's .txt)
	// Reports wait for the walk's end: the files of a folder found to be
	// an earlier run's output folder are dropped, reports too.
	var reports [][2]string
	held := func(p, reason string) { reports = append(reports, [2]string{p, reason}) }
	outDirs := map[string]string{} // an earlier run's output folder -> its run metadata file
	err = dirwalk.Walk(in, func(p string, d fs.DirEntry, err error) error {
		if errors.Is(err, dirwalk.ErrWalked) {
			// A link back to a folder above, or a second link to one
			// folder: its files are taken once, under the first path.
			held(p, "a link to a folder already read ("+err.Error()+"): its files are taken once")
			return nil
		}
		if err != nil {
			loose = append(loose, input{Path: p, Origin: p, Err: err})
			return nil
		}
		if d.IsDir() {
			if abs, _ := filepath.Abs(p); p != in && skipDirs[abs] {
				return filepath.SkipDir
			}
			return nil
		}
		if dir := filepath.Dir(p); dir != filepath.Clean(in) && runMetadataName.MatchString(d.Name()) {
			// An earlier run's output folder inside the input: its
			// translations are not inputs (into another target language
			// they would be translated again). Told by the run metadata
			// the walk lists anyway, its files are dropped at the end.
			if _, ok := outDirs[dir]; !ok {
				outDirs[dir] = d.Name()
			}
			return nil
		}
		switch kind, x := folderFile(s, p, d.Name(), held); kind {
		case folderBook:
			found = append(found, p)
		case folderList:
			lists = append(lists, p)
		case folderLoose:
			loose = append(loose, x)
		}
		return nil
	})
	under := func(p string) bool {
		for dir := range outDirs {
			if p == dir || strings.HasPrefix(p, dir+string(filepath.Separator)) {
				return true
			}
		}
		return false
	}
	if len(outDirs) > 0 {
		loose = slices.DeleteFunc(loose, func(x input) bool { return under(x.Path) })
		found = slices.DeleteFunc(found, under)
		reports = slices.DeleteFunc(reports, func(r [2]string) bool { return under(r[0]) })
		for _, dir := range slices.Sorted(maps.Keys(outDirs)) {
			held(dir, "an earlier translate run's output folder (it holds "+outDirs[dir]+"): not read; give it as the input to translate it")
		}
	}
	for _, r := range reports {
		report(r[0], r[1])
	}
	// The lists of URLs and books named in --formats (the specification's
	// alto.xml,txt), read as a list given alone is.
	var listIns []input
	for _, p := range slices.DeleteFunc(lists, under) {
		ins, keys, bks, lerr := collectList(ctx, s, client, p)
		if lerr != nil {
			loose = append(loose, input{Path: p, Origin: p, Dir: relDir(in, p), Err: lerr})
			continue
		}
		listIns, all, books = append(listIns, ins...), append(all, keys...), append(books, bks...)
	}
	// The books found: their text files are theirs, not loose inputs.
	fb := readFolderBooks(ctx, s, found, report)
	books, loose, taken := append(books, fb.books...), append(loose, fb.loose...), fb.taken
	sort.SliceStable(loose, func(i, j int) bool { return loose[i].Path < loose[j].Path })
	for _, x := range loose {
		k := shard.Key(in, x.Path)
		if taken[k] != "" {
			continue // a text file of a book of the folder
		}
		all = append(all, k)
		if s.Shard.Has(k) {
			inputs = append(inputs, x)
		}
	}
	inputs = append(append(inputs, fb.inputs...), listIns...)
	return inputs, append(all, fb.all...), books, err
}

// folderBooks are the books of a folder run (readFolderBooks): the books
// read, their text files as inputs and shard keys (all), the text files
// taken, each to its book, and the files found to be failed books or
// metadata documents (loose).
type folderBooks struct {
	books  []*bookInfo
	inputs []input
	all    []string
	taken  map[string]string
	loose  []input
}

// readFolderBooks reads the files of a folder run found to be books, in
// order. A book whose text files are all those of a book read before (a
// METS file and its IIIF manifest side by side: every page was translated
// twice, into the same output files) is reported, not read again; a METS
// file without pages is a metadata document when collected as one; a book
// that cannot be read is a failed input.
func readFolderBooks(ctx context.Context, s *settings, found []string, report func(path, reason string)) folderBooks {
	in := s.Input
	fb := folderBooks{taken: map[string]string{}}
	for _, p := range found {
		ins, keys, bk, berr := collectBook(ctx, s, p, place{prefix: bookFolder(in, p)})
		switch {
		case berr == nil && sameBook(keys, fb.taken) != "":
			report(p, fmt.Sprintf("its %d text files are those of the book %s, read before: translated once, as that book's", len(keys), sameBook(keys, fb.taken)))
		case berr == nil:
			fb.books, fb.inputs, fb.all = append(fb.books, bk), append(fb.inputs, ins...), append(fb.all, keys...)
			for _, k := range keys {
				fb.taken[k] = p
			}
		case errors.Is(berr, errNoPages):
			if collectable(s, p, nil, report) {
				fb.loose = append(fb.loose, input{Path: p, Origin: p, Dir: relDir(in, p), NoPages: noPagesNote(berr)})
			}
		default:
			fb.loose = append(fb.loose, input{Path: p, Origin: p, Dir: relDir(in, p), Err: berr})
		}
	}
	return fb
}

// sameBook is the book of a folder run (taken: the text files of the books
// read so far, each to its book) that has every one of keys, the text files
// of a book read after it; "" when none has them all.
func sameBook(keys []string, taken map[string]string) string {
	if len(keys) == 0 {
		return ""
	}
	first := taken[keys[0]]
	for _, k := range keys {
		if taken[k] == "" || taken[k] != first {
			return ""
		}
	}
	return first
}

// What a folder run makes of one of its files (folderFile).
const (
	folderSkip  = iota // not an input
	folderBook         // a METS file or IIIF manifest: its text files are the inputs
	folderList         // a file of --formats listing URLs and books: read as a list
	folderLoose        // a document (or a file of --formats that fails, with its reason)
)

// folderFile says what a folder run makes of the file at p: a book (an
// .xml or .json file read as METS or IIIF by its content), a list of URLs
// and books (a file of --formats whose first line is a URL), a document
// (collectable), a failed input (a text file of --formats that is neither
// XML nor a list: errPlainText; empty: errEmpty), or nothing.
func folderFile(s *settings, p, name string, report func(path, reason string)) (int, input) {
	x := input{Path: p, Origin: p, Dir: relDir(s.Input, p)}
	var head []byte // read once, for book.Looks and book.Sniff
	if ext := strings.ToLower(filepath.Ext(name)); ext == ".xml" || ext == ".json" {
		var err error
		if head, err = book.ReadHead(p); err == nil && book.Looks(head) {
			return folderBook, x
		}
	}
	if matchesFormat(name, s.Formats) && !startsWithMarkup(p) {
		switch h, err := book.ReadHead(p); {
		case err == nil && book.ListsURLs(h):
			return folderList, x
		case err == nil && emptyHead(h):
			x.Err = errEmpty
			return folderLoose, x
		case err == nil && book.IsText(h):
			x.Err = errPlainText
			return folderLoose, x
		}
	}
	if collectable(s, p, head, report) {
		return folderLoose, x
	}
	return folderSkip, x
}

// errPlainText is the failure of a text file of --formats that is neither
// XML nor a list of URLs.
var errPlainText = errors.New("plain text, not XML: translate translates the text inside ALTO, PAGE-XML, hOCR and metadata XML documents; a text file whose first line is an http(s) URL is read as a list of URLs and books")

// errEmpty is the failure of a file of --formats that is empty, or holds
// nothing but white space (emptyHead): it was said to be plain text, not
// XML, which sent the reader looking for text in a file of none.
var errEmpty = errors.New("the file is empty (no bytes, or only white space): there is nothing to translate")

// emptyHead says whether head, the first bytes of a file (book.ReadHead),
// is the whole file and holds nothing but white space (a byte-order mark
// aside): zero bytes, or blank lines.
func emptyHead(head []byte) bool {
	return len(head) < book.LooksLen && len(bytes.TrimSpace(bytes.TrimPrefix(head, []byte("\ufeff")))) == 0
}

// collectable says whether a directory run takes the file at p as a loose
// input: its name ends in one of --formats, or it is ALTO, PAGE-XML or
// hOCR by its root element (book.Sniff of book.SniffHead, from head when
// already read; a file of the sniffable extensions that is not is passed
// to report with the reason). A file of another extension, or of none, is
// opened only when its first bytes are markup, and taken when it is ALTO,
// PAGE-XML or hOCR by its content ("page.txt", "0001" exported without an
// extension; such files were left out without a word).
func collectable(s *settings, p string, head []byte, report func(path, reason string)) bool {
	if report == nil {
		report = func(string, string) {}
	}
	name := filepath.Base(p)
	if matchesFormat(name, s.Formats) {
		return true
	}
	if !sniffable[strings.ToLower(filepath.Ext(name))] {
		if !startsWithMarkup(p) {
			return false
		}
		head, err := book.SniffHead(p, nil)
		if err != nil {
			return false
		}
		_, err = book.Sniff(head)
		return err == nil
	}
	head, err := book.SniffHead(p, head)
	if err != nil {
		report(p, err.Error())
		return false
	}
	if _, err := book.Sniff(head); err != nil {
		report(p, fmt.Sprintf(notCollectedPrefix+" (%v); name its extension in --formats to translate it as metadata", err))
		return false
	}
	return true
}

// runMetadataName matches the name of translate's run metadata
// (newRunRecord): YYMMDD-HHmmss[-n]_translator[_shard-i-of-n].json. A folder
// of the input holding one is an earlier run's output folder.
var runMetadataName = regexp.MustCompile(`^\d{6}-\d{6}(-\d+)?_translator(_shard-\d+-of-\d+)?\.json$`)

// startsWithMarkup reports whether the file at p begins, after a byte-order
// mark and white space, with '<': the one byte read from most files of a
// folder of scans (images, logs) before they are passed over.
func startsWithMarkup(p string) bool {
	f, err := regularfile.Open(p) // a named pipe is not opened
	if err != nil {
		return false
	}
	defer f.Close()
	b := make([]byte, 512)
	n, _ := io.ReadFull(f, b)
	// White space and byte-order marks, in any order and number (a blank
	// line before the mark, a mark written twice): the file is markup
	// still, and its parse says what is wrong with it (it was "plain
	// text, not XML").
	b = b[:n]
	for {
		t := bytes.TrimPrefix(bytes.TrimLeft(b, " \t\r\n"), []byte("\xef\xbb\xbf"))
		if len(t) == len(b) {
			break
		}
		b = t
	}
	if len(b) == 0 {
		return false
	}
	if b[0] == '<' {
		return true
	}
	// UTF-16 with its byte-order mark: '<' is one of its first code units.
	return bytes.HasPrefix(b, []byte("\xff\xfe<\x00")) || bytes.HasPrefix(b, []byte("\xfe\xff\x00<"))
}

// notCollectedPrefix begins the reason a folder run gives for a file it
// opened and left: neither ALTO, PAGE-XML nor hOCR.
const notCollectedPrefix = "not collected: not ALTO, PAGE-XML or hOCR"

// relDir is the folder of p relative to root, "" for root itself.
func relDir(root, p string) string {
	rel, err := filepath.Rel(root, filepath.Dir(p))
	if err != nil || rel == "." {
		return ""
	}
	return rel
}

// sniffable are the extensions of the files a directory run opens to see
// whether they are ALTO, PAGE-XML or hOCR when --formats does not name
// them.
var sniffable = map[string]bool{".xml": true, ".hocr": true, ".html": true, ".htm": true, ".xhtml": true}

var unsafeName = regexp.MustCompile(`[^A-Za-z0-9._-]+`)

// urlFileName names the download of u: the last path segment of an
// "identifier" query parameter when there is one (OAI-PMH GetRecord URLs),
// otherwise the last segment of the URL path; ".xml" is added when the name
// has no extension.
func urlFileName(u string) string {
	pu, err := url.Parse(u)
	if err != nil {
		return "download.xml"
	}
	name := path.Base(pu.Path)
	if id := pu.Query().Get("identifier"); id != "" {
		name = path.Base(strings.TrimRight(id, "/"))
		if i := strings.LastIndexAny(name, ":"); i >= 0 {
			name = name[i+1:]
		}
	}
	name = strings.Trim(unsafeName.ReplaceAllString(name, "_"), "._")
	if name == "" {
		name = "download"
	}
	if filepath.Ext(name) == "" {
		name += ".xml"
	}
	return name
}

// maxDownload bounds one downloaded document or book text file, as
// internal/fetch's default does pageclass's images (docs/translate.md): a
// 57 MB ALTO of 3,160 pages holds 760,000 elements, near the node limit
// (xmlsafe), and each byte read is held in memory, --fetch-workers at once
// (it was 512 MiB: an endless answer took 1.4 GB before it was refused,
// four of them 5 GB).
const maxDownload = 64 << 20

// download fetches u into dir (atomically) and returns it as an input; a
// failure is returned as a skipped input naming the URL. Each download is
// written with a sidecar (downloadSource: the URL, the validators the server
// sent and the sha256 of the bytes), also atomically.
//
// With resume set, the request is conditional only when the sidecar says
// that the file in dir is this URL's download: it then carries the server's
// own validators (If-None-Match its ETag, If-Modified-Since its
// Last-Modified), and an answer 304 Not Modified keeps the file without
// transferring the document again, with the sha256 the sidecar recorded
// (input.Want): the run reads the file once, to translate it, and a file
// whose bytes are not those downloaded (edited since) is downloaded in full
// then; the ledger finds a kept file done by its content digest. A file
// downloaded from another URL with the same name, or without a sidecar, is
// downloaded in full. A server that ignores the condition sends the
// document whole: whether it changed is then told by its digest.
func download(ctx context.Context, client *http.Client, u, dir string, resume bool) input {
	dst := filepath.Join(dir, urlFileName(u))
	fail := func(err error) input { return input{Path: dst, Origin: u, Err: fmt.Errorf("download %s: %w", u, err)} }
	if err := atomicfile.NotOthersLink(dir); err != nil {
		return fail(err) // the downloads replaced the files of the folder another user's link named
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return fail(err)
	}
	version.SetUserAgent(req)
	conditional, want, looksBook := false, "", false
	if resume {
		if src, ok := earlierDownload(dst, u); ok {
			want, looksBook = src.SHA256, src.Book
			if src.ETag != "" {
				req.Header.Set("If-None-Match", src.ETag)
			}
			if src.LastModified != "" {
				req.Header.Set("If-Modified-Since", src.LastModified)
			}
			conditional = true
		}
	}
	resp, err := doRetrying(ctx, client, req)
	if err != nil {
		return fail(err)
	}
	defer resp.Body.Close()
	if conditional && resp.StatusCode == http.StatusNotModified {
		return input{Path: dst, Origin: u, NotModified: true, Want: want, LooksBook: looksBook}
	}
	if resp.StatusCode != http.StatusOK {
		return fail(fmt.Errorf("HTTP %s", resp.Status))
	}
	data, err := io.ReadAll(io.LimitReader(resp.Body, maxDownload+1))
	if err != nil {
		return fail(&fetch.CutOffError{URL: u, Err: err}) // passing: --resume fetches it
	}
	if len(data) > maxDownload {
		return fail(fmt.Errorf("larger than %d MiB", maxDownload>>20))
	}
	if len(bytes.TrimSpace(data)) == 0 {
		return fail(errors.New("empty answer"))
	}
	// The old sidecar goes first: a run stopped between the two writes
	// leaves a download without a sidecar, which is downloaded again.
	side := sourcePath(dst)
	if err := os.Remove(side); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fail(err)
	}
	if err := atomicfile.WriteFile(dst, data, 0o666); err != nil {
		return fail(err)
	}
	src := downloadSource{URL: u, ETag: resp.Header.Get("ETag"), LastModified: resp.Header.Get("Last-Modified"), SHA256: ledger.DigestBytes(data),
		Book: book.Looks(data)}
	b, err := json.MarshalIndent(src, "", "  ")
	if err != nil {
		return fail(err)
	}
	if err := atomicfile.WriteFile(side, append(b, '\n'), 0o666); err != nil {
		return fail(err)
	}
	return input{Path: dst, Origin: u, LooksBook: src.Book}
}

// downloadSource is the sidecar of a download: where it came from, the
// validators its server sent with it, and the digest of the bytes written.
type downloadSource struct {
	URL          string `json:"url"`
	ETag         string `json:"etag,omitempty"`
	LastModified string `json:"last_modified,omitempty"`
	SHA256       string `json:"sha256"`
	// Book says the download reads as a book (book.Looks).
	Book bool `json:"book,omitempty"`
}

// sourcePath names the sidecar of the download dst: a hidden file beside it
// whose extension matches no input format.
func sourcePath(dst string) string {
	return filepath.Join(filepath.Dir(dst), "."+filepath.Base(dst)+".source")
}

// earlierDownload returns the sidecar of dst when it records u, a validator
// and a sha256, and dst is a regular file; ok is false otherwise. The file
// is not read: whether its bytes are still the recorded ones is checked when
// it is read to be translated (input.Want).
func earlierDownload(dst, u string) (src downloadSource, ok bool) {
	b, err := os.ReadFile(sourcePath(dst))
	if err != nil || json.Unmarshal(b, &src) != nil {
		return src, false
	}
	if src.URL != u || (src.ETag == "" && src.LastModified == "") || src.SHA256 == "" {
		return src, false
	}
	info, err := os.Stat(dst)
	return src, err == nil && info.Mode().IsRegular()
}

// doRetrying sends req, asking again (as internal/fetch does, its
// Defaults' retries and backoff, a Retry-After honoured: fetch.Wait) after
// a network failure or a 429 or 5xx answer. The last such answer is a
// *fetch.StatusError, a passing failure (ledger.Transient): the input is
// left to do, the run exits 75. A download was sent once, and a 503 failed
// the input for good.
func doRetrying(ctx context.Context, client *http.Client, req *http.Request) (*http.Response, error) {
	wait := fetch.Defaults.Backoff
	for attempt := 0; ; attempt++ {
		resp, err := client.Do(req.Clone(ctx))
		switch {
		case err != nil:
			if ctx.Err() != nil || !ledger.Transient(err) {
				return nil, err
			}
		case resp.StatusCode != http.StatusTooManyRequests && resp.StatusCode < 500:
			return resp, nil // the caller reads it whole, its body untouched
		default:
			se := fetch.StatusOf(req.URL.String(), resp)
			resp.Body.Close()
			err = se
		}
		if attempt >= fetch.Defaults.Retries {
			return nil, err
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(fetch.Wait(err, wait)):
		}
		wait *= 2
	}
}

func httpClient() *http.Client {
	return &http.Client{Timeout: 120 * time.Second, CheckRedirect: checkRedirect}
}

// checkRedirect is the downloads' redirect rule, the book fetcher's
// (internal/fetch): at most its Defaults' MaxRedirects, http or https only, and another
// host than the one the user named only at a public address (a redirect to
// 127.0.0.2 or 10.0.0.1 was followed).
func checkRedirect(req *http.Request, via []*http.Request) error {
	if n := fetch.Defaults.MaxRedirects; len(via) > n {
		return fmt.Errorf("stopped after %d redirects", n)
	}
	if req.URL.Scheme != "http" && req.URL.Scheme != "https" {
		return fmt.Errorf("redirect to %s refused: not http or https", req.URL.Redacted())
	}
	host := req.URL.Hostname()
	if strings.EqualFold(host, via[0].URL.Hostname()) {
		return nil
	}
	addrs, err := net.DefaultResolver.LookupNetIP(req.Context(), "ip", host)
	if err != nil {
		// Not resolved here (a name only a proxy resolves): the transport
		// reaches it as it can; refusing it made every run leave it to do.
		return nil
	}
	for _, a := range addrs {
		if a = a.Unmap(); fetch.IsPrivate(a) {
			return fmt.Errorf("redirect to %s refused: another host than %s, at a private address (%s); give that URL itself to fetch it", req.URL.Redacted(), via[0].URL.Host, a)
		}
	}
	return nil
}
