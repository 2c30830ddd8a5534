package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"archivekit/internal/book"
	"archivekit/internal/bookout"
	"archivekit/internal/pageclass/classify"
	"archivekit/internal/pageclass/results"
	"archivekit/internal/version"
)

// classedPage is a book page classified: its row key in the run's tables
// and its top class (for a run that writes no ranked table).
type classedPage struct {
	key results.Key
	top bookout.PageClass
}

// classed notes, with --book-out, a book page classified (input name)
// whose rows were written under key.
func (r *classifier) classed(name string, key results.Key, p classify.Page) {
	if r.cli.BookOut == "" || r.set.page(name) == nil || len(p.Mean) == 0 {
		return
	}
	top := p.Top(1)
	if r.classes == nil {
		r.classes = map[string]classedPage{}
	}
	r.classes[name] = classedPage{key: key, top: bookout.PageClass{Category: top[0].Label, Score: top[0].Score}}
}

// pageAnnotations are the classes and the review flag of a book page's
// annotation page: what the run's tables say of its row (outputs.
// annotated: the TOP-N or AVG_TOP-N classes and scores, the REVIEW
// flag), or, for an ensemble run with --no-average-best (no averaged
// table), the top class of the averaged scores without a flag.
func (r *classifier) pageAnnotations(c classedPage) ([]bookout.PageClass, *bookout.ReviewFlag, error) {
	classes, flag, ok, err := r.out.annotated(c.key)
	if err != nil || ok {
		return classes, flag, err
	}
	return []bookout.PageClass{c.top}, nil, nil
}

// warnBookOut says, before any page is classified, which of the books read
// --book-out writes nothing for (a METS book: it writes IIIF annotation
// pages), so that a user who wanted them can stop the run at once.
func (r *classifier) warnBookOut(read []*book.Book) {
	if r.cli.BookOut == "" {
		return
	}
	for _, b := range read {
		if !iiif(b) {
			r.log.Warn("--book-out writes IIIF annotation pages and a derived manifest: this book is not a IIIF manifest or collection, so none are written for it (its pages are classified; their rows carry its page IDs)",
				"book", b.Source, "kind", b.Kind, "version", b.Version)
		}
	}
}

// iiif says whether b is a IIIF manifest or collection.
func iiif(b *book.Book) bool { return b.Kind == book.Manifest || b.Kind == book.Collection }

// writeBookOut writes, with --book-out DIR, for each IIIF manifest of the
// run, one annotation page per canvas classified (bookout.ClassPage for a
// Presentation 3 manifest, bookout.ClassList's annotation list for a
// Presentation 2 one: a classifying annotation of each class of the
// page's row in the TOP-N table, with its score, and a commenting one
// with the reasons when the REVIEW table flags the page) as
// DIR/<book>_classes/<n>.json, and the derived manifest
// DIR/<book>_classes.json linking them (bookout.DerivedManifest); for a
// IIIF collection, the same for each member manifest and a derived
// collection (collectionOut). A METS file gets a warning, before its pages
// are classified (warnBookOut). A share of a --shard run
// writes nothing: --shard shares a book's pages, so a share's manifest
// would link its own canvases only, and the shares' annotation pages,
// numbered in each share's order, would be written over one another; the
// run that writes them is a --resume --book-out without --shard into the
// shares' results folder, which keeps every page from the ledger.
func (r *classifier) writeBookOut() error {
	if r.cli.BookOut == "" || r.set.books == nil {
		return nil
	}
	if !r.set.Shard.Whole() {
		r.log.Warn("--book-out: the shards share the books' pages, and this share (" + r.set.Shard.String() + ") has only its own: no annotation pages written; " +
			"once every share has ended, run the same command with --resume --book-out and without --shard, into the shares' results folder, to write them (nothing is classified again)")
		return nil
	}
	dir, err := filepath.Abs(r.cli.BookOut)
	if err != nil {
		return err
	}
	base, err := bookout.BaseURL(r.cli.BookBaseURL, dir)
	if err != nil {
		return fmt.Errorf("--book-base-url: %w", err)
	}
	gen := bookout.Agent{Name: "archivekit pageclass", Version: version.String(), With: r.modelsUsed()}
	local := bookout.LocalIDs(r.cli.BookBaseURL, dir)
	for _, b := range r.set.books.read {
		if !iiif(b) {
			continue // said before the pages were classified (warnBookOut)
		}
		if local != "" {
			r.log.Warn(local)
			local = "" // once a run
		}
		src, err := r.bookSource(b.Source)
		if err == nil {
			stem := bookStem(r.set.Root, b.Source, r.set.books.list)
			if b.Kind == book.Collection {
				err = r.collectionOut(b, src, stem, dir, base, gen)
			} else {
				_, err = r.bookOut(b, b.Pages, src, stem+"_classes", dir, base, gen)
			}
		}
		if err != nil {
			return fmt.Errorf("--book-out: %s: %w", b.Source, err)
		}
	}
	return nil
}

// bookSource reads a manifest or collection: a URL with the run's book
// fetcher, else a file.
func (r *classifier) bookSource(loc string) ([]byte, error) {
	if isURL(loc) {
		return r.set.books.fetcher.Get(context.Background(), loc)
	}
	return os.ReadFile(loc)
}

// collectionOut writes, for IIIF collection b (src), each member
// manifest's annotation pages and derived manifest (<stem>_<k>_classes,
// k the manifest's place among those with pages classified) from the
// manifest the collection embeds, else the one its id names, and the
// derived collection <stem>_classes.json listing the derived manifests
// in the place of the manifests (bookout.DerivedCollection). A manifest
// that cannot be read or written is named in a warning and left as it is
// in the derived collection.
func (r *classifier) collectionOut(b *book.Book, src []byte, stem, dir, base string, gen bookout.Agent) error {
	order, pages := bookout.Members(b.Pages, func(p book.Page) string { return p.Manifest })
	wrote := 0
	out, err := bookout.Collection(src, base+stem+"_classes.json", order, r.bookSource,
		func(k int, member string, manifest []byte) (string, error) {
			mstem := fmt.Sprintf("%s_%d_classes", stem, k)
			ok, err := r.bookOut(b, pages[member], manifest, mstem, dir, base, gen)
			if !ok || err != nil {
				return "", err
			}
			wrote++
			return base + mstem + ".json", nil
		},
		func(member string, err error) {
			r.log.Warn("--book-out: a manifest of the collection", "collection", b.Source, "manifest", member, "error", err)
		})
	if err != nil {
		return err
	}
	written, err := bookout.WriteFiles(dir, map[string][]byte{stem + "_classes.json": out})
	for _, f := range written {
		r.para.AddOutputFile(f)
	}
	if err == nil {
		r.log.Info("collection written", "collection", filepath.Join(dir, stem+"_classes.json"), "manifests", wrote)
	}
	return err
}

// bookOut writes the annotation pages of a manifest's pages classified
// (pages, of book b) and its derived manifest <stem>.json from the
// manifest src; wrote is false when none of the pages was classified.
func (r *classifier) bookOut(b *book.Book, pages []book.Page, src []byte, stem, dir, base string, gen bookout.Agent) (wrote bool, err error) {
	ver, err := bookout.ManifestVersion(src)
	if err != nil {
		return false, err
	}
	files := map[string][]byte{}
	var links []bookout.CanvasLinks
	nums := bookout.CanvasNumbers(src)
	for _, p := range pages {
		c, ok := r.classes[b.Source+"#"+p.ID]
		if !ok {
			continue
		}
		classes, flag, err := r.pageAnnotations(c)
		if err != nil {
			return false, err
		}
		rel := stem + "/" + bookout.PageName(nums, p.ID, 1, len(links)+1)
		page, err := ver.ClassPage(base+rel, p.ID, classes, flag, gen)
		if err != nil {
			return false, err
		}
		files[rel] = page
		links = append(links, bookout.CanvasLinks{Canvas: p.ID, Annotations: []string{base + rel}})
	}
	if len(links) == 0 && b.Kind == book.Collection {
		return false, nil
	}
	manifest, err := bookout.DerivedManifest(src, base+stem+".json", links)
	if err != nil {
		return false, err
	}
	files[stem+".json"] = manifest
	written, err := bookout.WriteFiles(dir, files)
	for _, f := range written {
		r.para.AddOutputFile(f)
	}
	if err != nil {
		return false, err
	}
	r.log.Info("book written", "manifest", filepath.Join(dir, stem+".json"), "annotation pages", len(links))
	return true, nil
}

// modelsUsed says, for the annotations' generator, which models classified
// the pages, with their digests' first 12 hex digits, whether they are the
// demo models, and the run's licence: "demo models v1.4 sha256:f80ada124748,
// …; CC BY-NC 4.0". The run metadata has the rest.
func (r *classifier) modelsUsed() string {
	snap := r.para.Snapshot()
	var names []string
	demo := false
	for _, m := range snap.Models {
		d := m.Digest
		if len(d) > len("sha256:")+12 {
			d = d[:len("sha256:")+12]
		}
		names = append(names, strings.TrimSpace(m.Revision+" "+d))
		demo = demo || m.Demo
	}
	if len(names) == 0 {
		return ""
	}
	kind := "models "
	if demo {
		kind = "DEMO models "
	}
	s := kind + strings.Join(names, ", ")
	if snap.License != "" {
		s += "; " + snap.License
	}
	return s
}
