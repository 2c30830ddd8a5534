package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"path"
	"path/filepath"

	"archivekit/internal/atomicfile"
	"archivekit/internal/book"
	"archivekit/internal/fetch"
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
}

// isBookFile says whether the file at p starts as a METS file or a IIIF
// manifest or collection (book.Looks).
func isBookFile(p string) bool {
	f, err := os.Open(p)
	if err != nil {
		return false
	}
	defer f.Close()
	head := make([]byte, book.LooksLen)
	n, _ := io.ReadFull(f, head)
	return book.Looks(head[:n])
}

// collectBook reads the book at location (a local METS file or manifest,
// or their URL) and lists its text files, in page order, as the run's
// inputs: each keeps its path relative to the book (book.RelPath) as its
// folder under the output directory and as its shard key, and a remote one
// is fetched into the download folder under the same path. A text file
// that cannot be fetched is an input with its error (recorded failed; the
// others are translated). The host of a book URL may be reached at a
// private address (the user named it); links to other hosts may not.
func collectBook(ctx context.Context, s *settings, location string) (inputs []input, all []string, info *bookInfo, err error) {
	policy := fetch.Policy{MaxBytes: maxDownload}
	if isURL(location) {
		if u, err := url.Parse(location); err == nil {
			policy.AllowHosts = []string{u.Host}
		}
	}
	f := fetch.New(policy, nil)
	b, err := book.Read(ctx, location, book.Options{Fetcher: f, Pages: s.Pages, TextGroups: s.TextGroups, MaxBytes: maxDownload})
	if errors.Is(err, book.ErrNoPages) && s.Pages == "" && (b == nil || b.Kind == book.METS) {
		// A METS file without pages (descriptive metadata only) is a
		// document: its fields are translated as metadata.
		return nil, nil, nil, errNoPages
	}
	if err != nil {
		return nil, nil, nil, fmt.Errorf("%w: %v", errBook, err)
	}
	info = &bookInfo{Source: location, Kind: string(b.Kind), ID: b.ID, Label: b.Label, Pages: len(b.Pages),
		TextFormats: map[string]int{}, PagesWithoutText: []string{}, Problems: []string{}}
	for _, p := range b.Problems {
		info.Problems = append(info.Problems, p.String())
	}
	seen := map[string]bool{}
	for _, p := range b.Pages {
		if len(p.Texts) == 0 {
			info.PagesWithoutText = append(info.PagesWithoutText, pageName(p))
			continue
		}
		info.PagesWithText++
		for _, t := range p.Texts {
			if seen[t.Location] {
				continue
			}
			seen[t.Location] = true
			info.TextFiles++
			info.TextFormats[string(t.Format)]++
			rel := book.RelPath(location, t)
			all = append(all, rel)
			if !s.Shard.Has(rel) {
				continue
			}
			in := bookText(ctx, s, f, b.Remote, t, rel)
			in.Book, in.Page = &t, p.ID
			if p.Image != nil {
				in.PageW, in.PageH = float64(p.Image.Width), float64(p.Image.Height)
			}
			inputs = append(inputs, in)
		}
	}
	if info.TextFiles == 0 {
		return nil, nil, info, fmt.Errorf("%w: %s: none of its %d pages has a text file (ALTO, PAGE-XML or hOCR)", errBook, location, len(b.Pages))
	}
	return inputs, all, info, nil
}

// bookText is the input of one text file of a book: a local file as it
// is, a remote one fetched into the download folder at rel.
func bookText(ctx context.Context, s *settings, f *fetch.Fetcher, remote bool, t book.Text, rel string) input {
	dir := path.Dir(rel)
	if dir == "." {
		dir = ""
	}
	dir = filepath.FromSlash(dir)
	if !isURL(t.Location) {
		return input{Path: t.Location, Origin: t.Location, Dir: dir}
	}
	dst := filepath.Join(s.DownloadDir, filepath.FromSlash(rel))
	get := f.Get
	if remote {
		get = f.GetLinked
	}
	data, err := get(ctx, t.Location)
	if err == nil {
		if err = os.MkdirAll(filepath.Dir(dst), 0o755); err == nil {
			err = atomicfile.WriteFile(dst, data, 0o644)
		}
	}
	if err != nil {
		return input{Path: dst, Origin: t.Location, Dir: dir, Err: fmt.Errorf("book text file %s: %w", t.Location, err)}
	}
	return input{Path: dst, Origin: t.Location, Dir: dir}
}

// pageName names a page in reports: its ID, with its label when it has
// one.
func pageName(p book.Page) string {
	if p.Label != "" && p.Label != p.ID {
		return p.ID + " (" + p.Label + ")"
	}
	return p.ID
}
