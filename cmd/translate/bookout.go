package main

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"path/filepath"
	"strings"

	"archivekit/internal/atomicfile"
	"archivekit/internal/book"
	"archivekit/internal/bookout"
	"archivekit/internal/translate/alto"
	"archivekit/internal/translate/langtag"
	"archivekit/internal/translate/translator"
	"archivekit/internal/version"
)

// bookFile is a translated text file of a book: where it is in the book,
// and its output.
type bookFile struct {
	of   *bookInfo
	page string
	// manifest is, for a page of a IIIF collection, its manifest's id.
	manifest string
	text     book.Text
	out      string
	// log is its translation log (the languages of its lines).
	log string
	// w and h are the page's canvas size (0: not given).
	w, h float64
	// noText: a page without text, written as it was
	// (translator.Output.NoText).
	noText bool
}

// booked notes a translated (or kept) text file of a book; noText: a page
// without text, written as it was.
func (p *pass) booked(in input, out string, noText bool) {
	if in.Book != nil {
		p.books = append(p.books, bookFile{of: in.BookOf, page: in.Page, manifest: in.PageManifest, text: *in.Book, out: out, w: in.PageW, h: in.PageH, noText: noText,
			log: filepath.Join(filepath.Dir(out), translator.LogName(in.Path))})
	}
}

// mimeTypes are the METS MIMETYPEs of the translated text files.
var mimeTypes = map[book.Format]string{book.ALTO: "application/alto+xml", book.PAGE: bookout.PAGEFormat, book.HOCR: bookout.HOCRFormat}

// bookOut writes, with --book-out, each book of the run (the input, or
// the books of a list or folder) that had text files translated: a METS
// book's METS (metsOut) or a IIIF manifest's annotations and derived
// manifest (iiifOut), in the folder of the book's outputs. A book whose
// text files the shards of a --shard run share is not written by a share,
// which has only its own files: the run that writes it is a --resume with
// --book-out and without --shard once every share has ended, which keeps
// all the shares' translations from the ledger. A book with text files in
// this run (inputs) of which none was translated is named in a warning.
func (r *runner) bookOut(ctx context.Context, p *pass, inputs []input) error {
	s := r.s
	if !s.BookOut {
		return nil
	}
	books := r.books
	if r.book != nil {
		books = []*bookInfo{r.book}
	}
	if len(books) == 0 {
		r.warn("--book-out: the input is neither a METS file nor a IIIF manifest, nor a list or folder of them: no book written")
		return nil
	}
	mine := map[*bookInfo]bool{} // books with text files in this run
	for _, in := range inputs {
		if in.BookOf != nil {
			mine[in.BookOf] = true
		}
	}
	var shared, untranslated []string
	for _, b := range books {
		var files []bookFile
		for _, f := range p.books {
			if f.of == b {
				files = append(files, f)
			}
		}
		switch {
		case len(files) == 0 && mine[b]:
			untranslated = append(untranslated, b.Source)
		case len(files) == 0:
			// all its text files in another share
		case !s.Shard.Whole() && !b.whole:
			shared = append(shared, b.Source)
		case b.Kind == string(book.METS):
			if err := r.metsOut(ctx, b, files); err != nil {
				return err
			}
		case b.Kind == string(book.Manifest), b.Kind == string(book.Collection):
			if err := r.iiifOut(ctx, b, files); err != nil {
				return err
			}
		default:
			r.warn(fmt.Sprintf("--book-out: %s is a %s, not a METS file or IIIF manifest or collection: no book written", b.Source, strings.ToLower(b.Kind)))
		}
	}
	if len(untranslated) > 0 {
		r.warn(fmt.Sprintf("--book-out: %s: none of its text files was translated (see the failures table): no book written", strings.Join(untranslated, ", ")))
	}
	if len(shared) > 0 {
		r.warn(fmt.Sprintf("--book-out: %s: the shards share its text files, and this share (%s) has only its own: no book written; "+
			"once every share has ended, run the same command with --resume --book-out and without --shard to write it (nothing is translated again)",
			strings.Join(shared, ", "), s.Shard))
	}
	return nil
}

// metsOut writes, for METS book b (a file or a URL), its METS with one
// more fileGrp holding the run's translated text files of it, translated
// (bookout.AddToMETS), as <book stem>_<target>.mets.xml in the folder of
// the book's outputs, the files' locations relative to it. The book's own
// relative locations are rewritten to lead from there to its files
// (bookLinks).
func (r *runner) metsOut(ctx context.Context, b *bookInfo, translated []bookFile) error {
	s := r.s
	src, err := readBookFile(ctx, b.Source)
	if err != nil {
		return fmt.Errorf("--book-out: %w", err)
	}
	dst := filepath.Join(s.Output, filepath.FromSlash(b.Folder), manifestStem(b.Source)+"_"+s.Target+".mets.xml")
	if src, err = r.bookLinks(b, src, dst); err != nil {
		r.warn(fmt.Sprintf("--book-out: the METS at %s: %v: no book written", b.Source, err))
		return nil
	}
	uses, err := bookout.Uses(src)
	if err != nil {
		return fmt.Errorf("--book-out: %s: %w", b.Source, err)
	}
	group := bookout.GroupName(uses, translated[0].text.Group, s.Target)
	var files []bookout.METSFile
	blank := 0
	for _, f := range translated {
		if f.noText {
			blank++
		}
		rel, err := filepath.Rel(filepath.Dir(dst), f.out)
		if err != nil {
			return err
		}
		files = append(files, bookout.METSFile{PageID: f.page, SourceID: f.text.FileID, Href: filepath.ToSlash(rel), MIMEType: mimeTypes[f.text.Format]})
	}
	_, tag, _ := langtag.ForSources(s.Target, r.pd.Snapshot().Statistics.Languages)
	out, err := bookout.AddToMETS(src, files, bookout.METSOptions{Group: group,
		Agent: bookout.Agent{Name: "archivekit translate", Version: version.String()},
		Note:  metsNote(s.Target, tag, modesOf(s.outputMode(), translated), blank, len(files))})
	if err != nil {
		return fmt.Errorf("--book-out: %w", err)
	}
	if err := atomicfile.WriteFile(dst, out, 0o666); err != nil {
		return err
	}
	r.pd.output("xml", dst)
	r.log.Info("book written", "mets", dst, "fileGrp", group, "files", len(files))
	return nil
}

// metsNote is the agent note of a translated METS group of n files, blank
// of them pages without text: those are in the group (one file a page, as
// the source group has it) but copied as they were, and the note says so
// rather than calling every file a machine translation.
func metsNote(target, tag, modes string, blank, n int) string {
	note := fmt.Sprintf("machine translation into %s (%s), output mode %s", target, tag, modes)
	if blank > 0 {
		note += fmt.Sprintf("; %d of the %d files are pages without text, copied as they were", blank, n)
	}
	return note
}

// bookLinks returns the book's METS src with its own relative locations
// made to lead from dst, the METS written, to the book's files, which
// they would not do as they are: resolved against the METS URL
// (bookout.ResolveLinks), or for a local METS file in another folder than
// dst's, rewritten by localLinks.
func (r *runner) bookLinks(b *bookInfo, src []byte, dst string) ([]byte, error) {
	var out []byte
	var rel []string
	var err error
	if isURL(b.Source) {
		base, perr := url.Parse(b.Source)
		if perr != nil {
			return nil, perr
		}
		out, rel, err = bookout.ResolveLinks(src, base)
	} else {
		metsDir, err1 := filepath.Abs(filepath.Dir(b.Source))
		outDir, err2 := filepath.Abs(filepath.Dir(dst))
		if err := errors.Join(err1, err2); err != nil || metsDir == outDir {
			return src, err
		}
		out, rel, err = bookout.RewriteLinks(src, localLinks(metsDir, outDir))
	}
	if err != nil {
		return nil, err
	}
	if len(rel) > 0 {
		r.log.Info("book locations rewritten for the METS written", "mets", b.Source, "written", dst, "relative", len(rel), "first", rel[0])
	}
	return out, nil
}

// localLinks rewrites the relative locations of a local METS file in
// metsDir for a copy in outDir: each path (read as the book reader reads
// it, relative to the METS file's folder, not URL-decoded) becomes the
// path from outDir to that file. A file URL that the reader reads as
// relative (file://name/rest: book.FileURLPath) becomes that plain path
// too, from outDir: RFC 8089 has no relative file URL to write it as
// (file://../name would name the host ".."), and a relative path is a
// URL reference every reader resolves against the METS's location. Other
// URLs (file:///absolute included) and absolute paths are kept.
func localLinks(metsDir, outDir string) func(string) (string, bool, error) {
	return func(h string) (string, bool, error) {
		rel := h
		if u, err := url.Parse(h); err == nil && u.Scheme != "" {
			if u.Scheme != "file" || u.Opaque != "" || u.Host == "" || u.Host == "localhost" {
				return "", false, nil
			}
			rel = book.FileURLPath(u)
		}
		if filepath.IsAbs(rel) {
			return "", false, nil
		}
		p, err := filepath.Rel(outDir, filepath.Join(metsDir, filepath.FromSlash(rel)))
		return filepath.ToSlash(p), err == nil, nil
	}
}

// modesOf is the output mode each format of the translated files was
// written in, as the METS note gives it: "replace" when one, else
// "replace (ALTO), append (PAGE)" in the files' order (PAGE-XML keeps its
// append default under replace, hOCR is written parallel).
func modesOf(m alto.Mode, translated []bookFile) string {
	byKind := translator.ModeByFormat(m)
	var parts []string
	seen := map[book.Format]bool{}
	modes := map[string]bool{}
	for _, t := range translated {
		f := t.text.Format
		if seen[f] {
			continue
		}
		seen[f] = true
		mode := byKind[strings.ToLower(string(f))]
		modes[mode] = true
		parts = append(parts, fmt.Sprintf("%s (%s)", mode, f))
	}
	if len(modes) == 1 {
		return strings.Fields(parts[0])[0]
	}
	return strings.Join(parts, ", ")
}
