package main

import (
	"cmp"
	"context"
	"fmt"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"strings"

	"archivekit/internal/book"
	"archivekit/internal/bookout"
	"archivekit/internal/fetch"
	"archivekit/internal/translate/alto"
	"archivekit/internal/translate/hocr"
	"archivekit/internal/translate/langtag"
	"archivekit/internal/translate/pagexml"
	"archivekit/internal/translate/translator"
	"archivekit/internal/version"
)

// iiifOut writes, with --book-out, for IIIF manifest bk, one annotation
// page per translated ALTO, PAGE-XML or hOCR file of it, translated (its lines as
// annotations in the translation's language tag, each on its canvas at
// the line's box scaled onto the canvas: for a Presentation 3 manifest a
// W3C annotation page of supplementing TextualBody annotations, for a
// Presentation 2 manifest an sc:AnnotationList of sc:painting
// cnt:ContentAsText annotations) under <book folder>/<book>_<target>_annotations/,
// and the derived manifest <book folder>/<book>_<target>.json linking them and
// the translated files (bookout.DerivedManifest), the book's folder being
// that of its outputs in the output folder (the output folder itself for
// a book given alone). For a IIIF collection bk it does so for each member
// manifest with files translated (<book>_<k>_<target>, k its place among
// them; the manifest the collection embeds, else the one its id names)
// and writes the derived collection <book>_<target>.json listing the
// derived manifests (bookout.DerivedCollection). Ids are under
// --book-base-url (default the output folder's file:// URL).
func (r *runner) iiifOut(ctx context.Context, bk *bookInfo, translated []bookFile) error {
	s := r.s
	src, err := readBookFile(ctx, bk.Source)
	if err != nil {
		return fmt.Errorf("--book-out: %w", err)
	}
	outDir, err := filepath.Abs(s.Output)
	if err != nil {
		return err
	}
	base, err := bookout.BaseURL(s.BookBaseURL, outDir)
	if err != nil {
		return err
	}
	collection := bookout.IsCollection(src)
	if _, err := bookout.ManifestVersion(src); err != nil && !collection {
		r.warn(fmt.Sprintf("--book-out: %v: no book written", err))
		return nil
	}
	if local := bookout.LocalIDs(s.BookBaseURL, outDir); local != "" && !r.warnedLocalIDs {
		r.warnedLocalIDs = true // once a run, for all its books
		r.warn(local)
	}
	stem := manifestStem(bk.Source)
	if bk.Folder != "" {
		stem = bk.Folder + "/" + stem
	}
	if !collection {
		_, err := r.manifestOut(src, stem+"_"+s.Target, outDir, base, translated)
		return err
	}
	order, files := bookout.Members(translated, func(f bookFile) string { return f.manifest })
	wrote := 0
	out, err := bookout.Collection(src, base+stem+"_"+s.Target+".json", order,
		func(member string) ([]byte, error) { return readBookFile(ctx, member) },
		func(k int, member string, manifest []byte) (string, error) {
			mstem := fmt.Sprintf("%s_%d_%s", stem, k, s.Target)
			ok, err := r.manifestOut(manifest, mstem, outDir, base, files[member])
			if !ok || err != nil {
				return "", err
			}
			wrote++
			return base + mstem + ".json", nil
		},
		func(member string, err error) {
			r.warn(fmt.Sprintf("--book-out: %s, a manifest of the collection %s: %v", member, bk.Source, err))
		})
	if err != nil {
		r.warn(fmt.Sprintf("--book-out: %s: %v: no collection written", bk.Source, err))
		return nil
	}
	written, err := bookout.WriteFiles(outDir, map[string][]byte{stem + "_" + s.Target + ".json": out})
	for _, f := range written {
		r.pd.output("json", f)
	}
	if err == nil {
		r.log.Info("collection written", "collection", filepath.Join(outDir, stem+"_"+s.Target+".json"), "manifests", wrote)
	}
	return err
}

// manifestOut writes the annotation pages of the translated files of one
// manifest (src) and its derived manifest <stem>.json (iiifOut); wrote is
// false, with a warning, when the manifest cannot be derived.
func (r *runner) manifestOut(src []byte, stem, outDir, base string, translated []bookFile) (wrote bool, err error) {
	s := r.s
	ver, err := bookout.ManifestVersion(src)
	if err != nil {
		return false, err
	}
	_, runTag, _ := langtag.ForSources(s.Target, r.pd.Snapshot().Statistics.Languages)
	gen := bookout.Agent{Name: "archivekit translate", Version: version.String()}
	files := map[string][]byte{}
	var links []bookout.CanvasLinks
	at := map[string]int{}
	nums := bookout.CanvasNumbers(src)
	skipped := 0
	for _, b := range translated {
		read, ok := lineReaders[b.text.Format]
		if !ok {
			skipped++
			continue
		}
		data, err := os.ReadFile(b.out)
		if err != nil {
			return false, err
		}
		pages, err := read.lines(data, s.Target)
		if err != nil {
			return false, fmt.Errorf("--book-out: %s: %w", b.out, err)
		}
		lines := bookout.OnCanvas(pages, b.w, b.h)
		if len(lines) == 0 {
			// A page without text (written as it was): no empty
			// annotation page, and no link calling the untouched copy a
			// machine translation.
			continue
		}
		// Each line in its own language, as the file's log has it (every
		// line was said to be translated from the run's most frequent
		// language, those left in English as they were included).
		byLine, inOrder, tag := lineLanguages(b.log, s.Target)
		tag = cmp.Or(tag, runTag)
		for i := range lines {
			lines[i].Language = byLine[lines[i].ID]
		}
		if len(byLine) == 0 && len(inOrder) == len(lines) {
			// Lines without ids (ocropy's hOCR): the log has a row a
			// line, in document order, as the reader reads them.
			for i := range lines {
				lines[i].Language = inOrder[i]
			}
		}
		k := 1 // the k-th text file of its canvas
		if i, ok := at[b.page]; ok {
			k = len(links[i].Annotations) + 1
		}
		rel := stem + "_annotations/" + bookout.PageName(nums, b.page, k, len(files)+1)
		page, err := ver.TranslationPage(base+rel, b.page, tag, lines, gen)
		if err != nil {
			return false, fmt.Errorf("--book-out: %w", err)
		}
		files[rel] = page
		out, err := filepath.Abs(b.out)
		if err != nil {
			return false, err
		}
		altoRel, err := filepath.Rel(outDir, out)
		if err != nil {
			return false, err
		}
		i, ok := at[b.page]
		if !ok {
			i, at[b.page] = len(links), len(links)
			links = append(links, bookout.CanvasLinks{Canvas: b.page, ALTO: base + filepath.ToSlash(altoRel),
				Format: read.format, ALTOProfile: read.profile(data), Label: read.name + ", machine translation (" + tag + ")"})
		}
		links[i].Annotations = append(links[i].Annotations, base+rel)
	}
	manifest, err := bookout.DerivedManifest(src, base+stem+".json", links)
	if err != nil {
		r.warn(fmt.Sprintf("--book-out: %v: no book written", err))
		return false, nil
	}
	files[stem+".json"] = manifest
	written, err := bookout.WriteFiles(outDir, files)
	for _, f := range written {
		r.pd.output("json", f)
	}
	if err != nil {
		return false, err
	}
	if skipped > 0 {
		r.warn(fmt.Sprintf("--book-out: %d translated files of another format than ALTO, PAGE-XML and hOCR get no annotations", skipped))
	}
	r.log.Info("book written", "manifest", filepath.Join(outDir, stem+".json"), "annotation pages", len(files)-1)
	return true, nil
}

// lineLanguages reads a translated file's log (translator.WriteLog) for
// the language of its lines, by line_num: the machine-translation tag into
// target of the source language of a line translated, the line's own
// language where it was left as it was (already in target, a language not
// offered), and, for a log whose rows name no line, the languages of its
// rows in order; and the file's tag, that of the language most of its
// translated lines came from. They are empty where the log does not say
// (no log, a line it does not name): the caller's default applies.
func lineLanguages(logPath, target string) (byLine map[string]string, inOrder []string, main string) {
	byLine = map[string]string{}
	f, err := os.Open(logPath)
	if err != nil {
		return byLine, nil, ""
	}
	defer f.Close()
	rows, err := translator.ReadLog(f)
	if err != nil {
		return byLine, nil, ""
	}
	counts := map[string]int{}
	for _, row := range rows {
		tag := row.Lang
		if row.Target != "" && tag != "" {
			counts[row.Lang]++
			if tag, err = langtag.MT(target, row.Lang); err != nil {
				tag = ""
			}
		}
		if row.Line != "" && tag != "" {
			byLine[row.Line] = tag
		}
		inOrder = append(inOrder, tag)
	}
	_, main, _ = langtag.ForSources(target, counts)
	return byLine, inOrder, main
}

// lineReader reads a translated text format's lines for --book-out.
type lineReader struct {
	name string
	// lines reads the lines (alto.Lines, pagexml.Lines, hocr.Lines).
	lines func(data []byte, target string) ([]bookout.OCRPage, error)
	// format and profile are the seeAlso link's ("" for ALTO: bookout's
	// defaults).
	format  string
	profile func(data []byte) string
}

// lineReaders are the formats whose translations get annotation pages.
var lineReaders = map[book.Format]lineReader{
	book.ALTO: {name: "ALTO", lines: alto.Lines, profile: func([]byte) string { return "" }},
	book.PAGE: {name: "PAGE-XML", lines: pagexml.Lines, format: bookout.PAGEFormat,
		profile: func(data []byte) string { return pagexml.NamespacePrefix + pagexml.Version(data) }},
	book.HOCR: {name: "hOCR", lines: hocr.Lines, format: bookout.HOCRFormat, profile: func([]byte) string { return bookout.HOCRProfile }},
}

// readBookFile reads a book's METS file or manifest, or fetches its URL (the host named
// may be private: the user named it).
func readBookFile(ctx context.Context, loc string) ([]byte, error) {
	if !isURL(loc) {
		return os.ReadFile(loc)
	}
	policy := fetch.Policy{MaxBytes: maxDownload}
	if u, err := url.Parse(loc); err == nil {
		policy.AllowHosts = []string{u.Host}
	}
	return fetch.New(policy, nil).Get(ctx, loc)
}

// manifestStem names a manifest's outputs: its file or URL path's last
// segment without extension ("manifest" for .../b1/manifest.json, "book"
// when there is none).
func manifestStem(loc string) string {
	p := loc
	if isURL(loc) {
		if u, err := url.Parse(loc); err == nil {
			p = u.Path
		}
	} else {
		p = filepath.ToSlash(loc)
	}
	b := path.Base(strings.TrimRight(p, "/"))
	b = strings.TrimSuffix(b, path.Ext(b))
	if b == "" || b == "." || b == "/" {
		return "book"
	}
	return b
}
