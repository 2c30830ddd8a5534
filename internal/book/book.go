// Package book reads a book, the unit of work of both tools: a METS file
// or a IIIF Presentation 2.1 or 3.0 manifest or collection, local or
// remote, becomes an ordered list of pages, each with its identifiers, its
// image (a file, a URL or a IIIF Image service) and its text files (ALTO,
// PAGE-XML, hOCR), in physical order.
//
// What is read is recognised by its content, not by its name: a METS
// document (also inside an OAI-PMH answer), a IIIF manifest or collection,
// or an error naming the file and what it was instead. Everything is
// bounded: file sizes, XML and JSON nesting, pages, collection depth.
// Pages are selected (Options.Pages, Options.SkipTypes) before anything
// else is fetched; a METS file's text files are then identified by their
// root element (see Sniff), and each disagreement with what the METS
// declared is recorded in Book.Problems, as are files and pages left out.
package book

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"strings"

	"archivekit/internal/fetch"
	"archivekit/internal/filekind"
	"archivekit/internal/lookahead"
	"archivekit/internal/regularfile"
	"archivekit/internal/winpath"
)

// Kind is what a book was read from.
type Kind string

// Kinds of book.
const (
	METS       Kind = "METS"
	Manifest   Kind = "IIIF manifest"
	Collection Kind = "IIIF collection"
)

// Book is what Read returns.
type Book struct {
	Source string // the location as given
	Kind   Kind
	// Version is the IIIF Presentation API version ("2" or "3"; for a
	// collection, the collection's); empty for METS.
	Version string
	ID      string // METS OBJID, or the manifest's or collection's id
	Label   string // a IIIF label; empty for METS
	// Remote says the book was read from a URL: the locations it lists
	// were written by others, so fetch them with fetch.Fetcher.GetLinked
	// (no private addresses unless the policy allows them).
	Remote bool
	// Languages are the languages the book's descriptive metadata declares,
	// as written (METS: the MODS language/languageTerm values inside its
	// dmdSecs, "ger" or "German"; without them, a Dublin Core or MARCXML
	// record's inside them, else, for a reader of text, the MODS records
	// they reference (mdRef); IIIF: the values of the manifest's or
	// collection's metadata entries labelled with the language, "English",
	// "de", each part of "Arabic, French").
	Languages []string
	// ImageGroup is the METS fileGrp the images were taken from.
	ImageGroup string
	// Files are the local files (paths) that the METS physical divs point
	// to, in every fileGrp: the book's images, their derivatives (an
	// OCR-D workspace's binarised, cropped, deskewed images) and its text
	// files. A folder run leaves them to the book rather than taking them
	// as pages of their own.
	Files []string
	Pages []Page
	// Problems lists what was left out or did not match, in the order met.
	Problems []Problem
}

// Page is one page of a book.
type Page struct {
	// ID is the METS physical div's ID, or the canvas id.
	ID string
	// Order is the METS div's ORDER; empty for IIIF.
	Order string
	// Label is the METS div's ORDERLABEL (LABEL when it has none), or the
	// canvas label.
	Label string
	// Manifest is, for a page of a collection, the id of the manifest the
	// canvas came from.
	Manifest string
	Image    *Image // nil when the page has none
	Texts    []Text
	// Unread are the text files the METS names for the page that could
	// not be read when the book was read (a local file missing, a URL
	// answering 404): not in Texts, and each also a Problem with its Err.
	Unread []Unread
}

// Unread is a text file of a page that could not be read: its Format is
// what the METS declares ("" when it declares none).
type Unread struct {
	Text
	Err error
}

// Image is a page's image.
type Image struct {
	// Location is a local path or a URL (for IIIF, the painting
	// annotation's resource, often a full-size derivative).
	Location string
	MIMEType string
	FileID   string // the METS file ID; empty for IIIF
	// Width and Height are the canvas or resource size (0: not given).
	Width, Height int
	// Service is the IIIF Image service, nil when there is none; use its
	// Derivative to ask for no more than a model needs.
	Service *ImageService
}

// Format is a text file format.
type Format string

// Text formats.
const (
	ALTO Format = "ALTO"
	PAGE Format = "PAGE"
	HOCR Format = "hOCR"
)

// Text is a text file of a page.
type Text struct {
	Location string // a local path or a URL
	// Format is the file's format; empty only for a remote file of a
	// METS read with FetchLater that the METS does not declare as text
	// (a file that may be text, not yet told).
	Format Format
	// Sniffed says Format was read from the file's root element; false
	// when it was taken from what the METS or manifest declared
	// (TextDeclared, FetchLater, or a manifest's format and profile).
	Sniffed bool
	// Declared is what the METS (USE and MIMETYPE) or the manifest
	// (format, profile) said of the file.
	Declared string
	Group    string // the METS fileGrp USE; empty for IIIF
	FileID   string // the METS file ID; empty for IIIF

	// declared is the format the METS declares (USE, MIMETYPE; not the
	// FULLTEXT convention), mime its MIMETYPE: what Identify compares the
	// content with.
	declared Format
	mime     string
}

// Problem is a page, file or link left out, or a declaration that did not
// match the file.
type Problem struct {
	Page   string // the page's ID; empty for the whole book
	File   string // the file's ID or location, if a file is concerned
	Reason string
	// Err is the read error of a text file that could not be read (its
	// page lists it in Unread); nil for every other problem.
	Err error
}

func (p Problem) String() string {
	var b strings.Builder
	if p.Page != "" {
		b.WriteString(p.Page + ": ")
	}
	if p.File != "" {
		b.WriteString(p.File + ": ")
	}
	b.WriteString(p.Reason)
	return b.String()
}

// Problems lists the first n problems, joined by "; ", and says how many
// more there are: what an error that a book gave nothing to work on adds,
// so that it says why ("" when there is none).
func Problems(ps []Problem, n int) string {
	var parts []string
	for i, p := range ps {
		if i == n {
			parts = append(parts, fmt.Sprintf("and %d more", len(ps)-n))
			break
		}
		parts = append(parts, p.String())
	}
	return strings.Join(parts, "; ")
}

// TextMode says how a METS file's text files are found.
type TextMode int

const (
	// TextSniff (the default) reads the start of every file of a page that
	// is not an image (by MIMETYPE and name) and keeps those whose root
	// element is ALTO, PcGts or hOCR; remote files are fetched (and stay in
	// the Fetcher's cache; see Options.FetchLater).
	TextSniff TextMode = iota
	// TextDeclared fetches nothing: files are taken as text by their group,
	// USE and MIMETYPE; Text.Sniffed is false.
	TextDeclared
	// TextNone lists no text files (a classifier needs only images).
	TextNone
)

// Options tunes Read. The zero value reads everything with the defaults.
type Options struct {
	// ImageGroup picks the METS fileGrp (USE) of the images; empty: the
	// first of ImageGroupPreference present, else the group whose files
	// are images for the most pages.
	ImageGroup string
	// TextGroups keeps only the text files of these METS fileGrps.
	TextGroups []string
	// Pages selects pages with OCR-D's page_id syntax (see ParsePages),
	// applied to METS div IDs or canvas ids.
	Pages string
	// SkipTypes leaves out the pages that a logical div of one of these
	// TYPEs (binding, colour_checker...) links to; case-insensitive.
	SkipTypes []string
	Text      TextMode

	MaxBytes       int64 // largest METS, manifest or text file; default 64 MiB
	MaxDepth       int   // deepest XML or JSON nesting; default 200
	MaxPages       int   // default 100000
	MaxManifests   int   // manifests read from collections; default 1000
	MaxCollections int   // collection nesting; default 8

	// Fetcher gets remote files; nil: a Fetcher with fetch.Defaults and
	// MaxBytes.
	Fetcher *fetch.Fetcher
	// Fetchers is how many of a METS file's remote text files TextSniff
	// fetches at once (in page order, each once); 0 or 1: one after
	// another as the pages are read.
	Fetchers int
	// FetchLater is for a caller that fetches each remote text file itself
	// later and tells its format by its content then (Sniff, Text.Identify;
	// a job's worker): TextSniff fetches none of the remote files of a
	// METS. Those whose format the METS declares (by USE, MIMETYPE or
	// fileGrp, a full-text group taken as ALTO, as TextDeclared takes
	// them) get that format with Sniffed false; the others that could be
	// text (not images, PDFs, plain text, audio or video by MIMETYPE and
	// name) are listed with no Format, for the caller to tell whether
	// they are text at all. So reading a book requests no text file.
	FetchLater bool
}

func (o Options) withDefaults() Options {
	if o.MaxBytes <= 0 {
		o.MaxBytes = 64 << 20
	}
	if o.MaxDepth <= 0 {
		o.MaxDepth = 200
	}
	if o.MaxPages <= 0 {
		o.MaxPages = 100000
	}
	if o.MaxManifests <= 0 {
		o.MaxManifests = 1000
	}
	if o.MaxCollections <= 0 {
		o.MaxCollections = 8
	}
	if o.Fetcher == nil {
		o.Fetcher = fetch.New(fetch.Policy{MaxBytes: o.MaxBytes}, nil)
	}
	return o
}

// Errors wrapped by Read.
var (
	// ErrNotABook: the file is neither METS nor a IIIF manifest or
	// collection.
	ErrNotABook = errors.New("neither a METS file nor a IIIF manifest or collection")
	// ErrPageFile: what was read as a book is a page image or a PDF
	// (filekind.Of), wrapped with ErrNotABook.
	ErrPageFile = errors.New("it is a page image or a PDF")
	// ErrLimit: a bound of Options was passed.
	ErrLimit = errors.New("over a limit")
	// ErrNoPages: the book has no page (or none selected).
	ErrNoPages = errors.New("no pages")
)

// Read reads the book at location (a local path, a file:// URL or an
// http(s) URL) and returns its pages in physical order. Errors name the
// location and what was wrong; a book with problems on some pages is not
// an error (see Book.Problems).
func Read(ctx context.Context, location string, opts Options) (*Book, error) {
	opts = opts.withDefaults()
	sel, err := ParsePages(opts.Pages)
	if err != nil {
		return nil, err
	}
	r := &reader{ctx: ctx, opts: opts, sel: sel}
	at, err := r.locate(location, nil)
	if err != nil {
		return nil, err
	}
	data, err := r.load(at)
	if err != nil {
		return nil, err
	}
	b, err := r.detect(at, data)
	if err != nil {
		return nil, err
	}
	b.Source = location
	b.Remote = at.url != nil
	if len(b.Pages) == 0 {
		return b, fmt.Errorf("%s: %w", location, ErrNoPages)
	}
	return b, nil
}

// reader holds one Read's state.
type reader struct {
	ctx  context.Context
	opts Options
	sel  *Selection
	// ahead fetches the remote text files of a METS walk ahead of it, by
	// URL (prefetchTexts); nil when none are.
	ahead *lookahead.Keyed[string, fetch.Result]
}

// loc is a resolved location: a local path or an absolute URL.
type loc struct {
	path string
	url  *url.URL
	// linked: found in a remote document, so fetched with GetLinked
	linked bool
}

func (l loc) String() string {
	if l.url != nil {
		return l.url.String()
	}
	return l.path
}

// FileURLPath is the path that the file URL u names as the book reader
// reads it: its path, except that for file://name/rest, which some
// producers write for a path relative to the METS file (KU Leuven's Alma
// file://image.tif, Europeana Newspapers' file://./ALTO/x.xml), it is
// name/rest, relative. RFC 8089 defines no relative file URL: its grammar
// reads name as a host, and gives every file URL an absolute path.
func FileURLPath(u *url.URL) string {
	if u.Host != "" && u.Host != "localhost" {
		return u.Host + u.Path
	}
	return u.Path
}

// locate resolves ref, relative to base (nil: the working directory). Under
// a remote base, a relative file://name/rest (FileURLPath) resolves against
// the base URL like a relative path; an absolute file:// reference is
// refused.
func (r *reader) locate(ref string, base *loc) (loc, error) {
	ref = strings.TrimSpace(ref)
	if ref == "" {
		return loc{}, errors.New("empty location")
	}
	if base != nil && winpath.IsAbs(ref) {
		return loc{}, fmt.Errorf("%s: a Windows path (a drive letter or a \\\\server share): it names a file on the machine the document was written on; write it relative to the document", ref)
	}
	if base != nil && strings.Contains(ref, `\`) && !strings.Contains(ref, "://") {
		// Written on Windows (images\0001.tif): a backslash is no
		// character of a URI reference, and readers (browsers, as the
		// WHATWG URL standard has it) take it as a slash. It was read as
		// part of one file name, and every page failed.
		ref = strings.ReplaceAll(ref, `\`, "/")
	}
	remote := base != nil && base.url != nil
	u, err := url.Parse(ref)
	if err == nil && (u.Scheme == "http" || u.Scheme == "https") {
		return loc{url: u, linked: remote}, nil
	}
	if err == nil && u.Scheme == "file" {
		p := FileURLPath(u)
		if remote {
			// A relative file://name/rest is a path relative to the
			// document, on its server; an absolute one names a file on
			// this machine, which a remote document may not.
			rel, perr := url.Parse(filepath.ToSlash(p))
			if path.IsAbs(filepath.ToSlash(p)) || perr != nil || u.RawQuery != "" {
				return loc{}, fmt.Errorf("%s: a file:// location in a remote document", ref)
			}
			return loc{url: base.url.ResolveReference(rel), linked: true}, nil
		}
		if !filepath.IsAbs(p) && base != nil {
			p = filepath.Join(filepath.Dir(base.path), p)
		}
		return loc{path: filepath.Clean(p)}, nil
	}
	if err == nil && u.Scheme != "" && len(u.Scheme) > 1 {
		return loc{}, fmt.Errorf("%s: scheme %q is not supported", ref, u.Scheme)
	}
	if base == nil {
		return loc{path: filepath.Clean(ref)}, nil
	}
	if base.url != nil {
		rel, err := url.Parse(ref)
		if err != nil {
			return loc{}, fmt.Errorf("%s: %v", ref, err)
		}
		return loc{url: base.url.ResolveReference(rel), linked: true}, nil
	}
	at := func(ref string) string {
		if filepath.IsAbs(ref) {
			return filepath.Clean(ref)
		}
		return filepath.Join(filepath.Dir(base.path), filepath.FromSlash(ref))
	}
	p := at(ref)
	if d, ok := uriDecoded(ref); ok {
		// Written as a URI reference ("page%201.tif", "0001.tif?v=2",
		// a copy of a server's METS): the decoded file when the name as
		// written is none and that one is (a file whose name holds "%"
		// or "?" is found as written).
		if _, err := os.Lstat(p); err != nil {
			if _, err := os.Lstat(at(d)); err == nil {
				p = at(d)
			}
		}
	}
	return loc{path: p}, nil
}

// uriDecoded is ref read as a URI reference: its path decoded, without its
// query and fragment; ok is false when ref has nothing to decode or is no
// URI reference.
func uriDecoded(ref string) (string, bool) {
	if !strings.ContainsAny(ref, "%?#") {
		return "", false
	}
	u, err := url.Parse(filepath.ToSlash(ref))
	if err != nil || u.Path == "" || u.Scheme != "" || u.Host != "" {
		return "", false
	}
	return filepath.FromSlash(u.Path), true
}

// load reads a whole file, bounded by MaxBytes.
func (r *reader) load(l loc) ([]byte, error) {
	if l.url != nil {
		data, err := r.get(l)
		if err != nil {
			return nil, err
		}
		if int64(len(data)) > r.opts.MaxBytes {
			return nil, fmt.Errorf("%s: %w: %d bytes, the limit is %d", l, ErrLimit, len(data), r.opts.MaxBytes)
		}
		return data, nil
	}
	st, err := os.Stat(l.path)
	if err != nil {
		return nil, err
	}
	if st.Size() > r.opts.MaxBytes {
		return nil, fmt.Errorf("%s: %w: %d bytes, the limit is %d", l, ErrLimit, st.Size(), r.opts.MaxBytes)
	}
	return regularfile.ReadSized(l.path)
}

// get fetches a remote location: with GetLinked when a remote document
// named it.
func (r *reader) get(l loc) ([]byte, error) {
	if r.ahead != nil {
		if got, ok := r.ahead.Take(l.String()); ok {
			return got.Data, got.Err
		}
		if err := r.ctx.Err(); err != nil {
			return nil, err
		}
	}
	return r.fetch(r.ctx, l)
}

// fetch gets a remote location with ctx.
func (r *reader) fetch(ctx context.Context, l loc) ([]byte, error) {
	return r.opts.Fetcher.Getter(l.linked)(ctx, l.url.String())
}

// detect tells METS from IIIF by content and reads the book.
func (r *reader) detect(l loc, data []byte) (*Book, error) {
	// Without a byte-order mark (a manifest's was "invalid character
	// 'ï'"), and UTF-16 as UTF-8 (a METS file was "neither XML nor JSON").
	data = asUTF8(data)
	trimmed := bytes.TrimLeft(data, " \t\r\n")
	switch {
	case len(trimmed) == 0:
		return nil, fmt.Errorf("%s: %w: the file is empty", l, ErrNotABook)
	case trimmed[0] == '{':
		return r.readIIIF(l, data)
	case trimmed[0] == '<':
		return r.readMETS(l, data)
	}
	if kind := filekind.Of(data); kind != "" {
		return nil, fmt.Errorf("%s: %w: %w (%s)", l, ErrNotABook, ErrPageFile, kind)
	}
	return nil, fmt.Errorf("%s: %w: it is neither XML nor JSON (it starts with %q)", l, ErrNotABook, head(trimmed))
}

func head(b []byte) string {
	if len(b) > 16 {
		b = b[:16]
	}
	return string(b)
}
