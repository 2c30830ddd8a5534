package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"archivekit/internal/book"
	"archivekit/internal/translate/translator/translatortest"
)

// metsTranslations reads the METS written at path with the book reader
// and returns, page by page, the translated text files its fileGrp group
// lists, each checked to be a file that exists.
func metsTranslations(t *testing.T, path, group string) []string {
	t.Helper()
	data := readOrFatal(t, path)
	var got []string
	for _, m := range regexp.MustCompile(`<mets:fileGrp USE="`+group+`">(?s:(.*?))</mets:fileGrp>`).FindAllSubmatch(data, -1) {
		for _, h := range regexp.MustCompile(`xlink:href="([^"]*)"`).FindAllSubmatch(m[1], -1) {
			p := filepath.Join(filepath.Dir(path), filepath.FromSlash(string(h[1])))
			if _, err := os.Stat(p); err != nil {
				t.Errorf("%s: %s: %v", path, h[1], err)
			}
			got = append(got, string(h[1]))
		}
	}
	return got
}

// TestBookOutFolder: --book-out over a folder of two METS books writes
// each book's METS, with its translated files, in the folder of that
// book's outputs; before, only a book given alone was written ("the input
// is neither a METS file nor a IIIF manifest"); a book none of whose text
// files was translated is named, not left out without a word.
func TestBookOutFolder(t *testing.T) {
	dir := t.TempDir()
	writeShortBook(t, filepath.Join(dir, "books", "a"), []string{"Haus am See", "Garten und Hof"}, "ger")
	writeShortBook(t, filepath.Join(dir, "books", "b"), []string{"Kirche im Dorf"}, "ger")
	// Book c's only text file is damaged: it gets no METS, and the run
	// says so.
	writeShortBook(t, filepath.Join(dir, "books", "c"), []string{"Brücke"}, "ger")
	writeFile(t, filepath.Join(dir, "books", "c", "alto", "0001.xml"), []byte("<alto><Layout>"))
	api := startAPI(t, translatortest.Config{})
	out := t.TempDir()
	r := runCLI(t, newEnv(api), filepath.Join(dir, "books"), "-o", out, "-src", "de", "--vocabulary", "", "--book-out")
	if r.code != exitOK {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	if _, err := os.Stat(filepath.Join(out, "c", "mets_en.mets.xml")); !os.IsNotExist(err) {
		t.Errorf("book c, whose text file failed, was written (%v)", err)
	}
	if !strings.Contains(r.stderr, filepath.Join(dir, "books", "c", "mets.xml")+": none of its text files was translated") {
		t.Errorf("the run does not name book c as untranslated:\n%s", r.stderr)
	}
	for name, want := range map[string][]string{"a": {"alto/0001_en.xml", "alto/0002_en.xml"}, "b": {"alto/0001_en.xml"}} {
		path := filepath.Join(out, name, "mets_en.mets.xml")
		if got := metsTranslations(t, path, "FULLTEXT_EN"); !slices.Equal(got, want) {
			t.Errorf("book %s: translations %q, want %q", name, got, want)
		}
		// The written METS reads as the book, its pages' text files there.
		b, err := book.Read(t.Context(), path, book.Options{Text: book.TextNone})
		if err != nil || len(b.Pages) != len(want) {
			t.Errorf("book %s read back: %v, %d pages", name, err, len(b.Pages))
		}
	}
	if strings.Contains(r.stderr, "neither a METS") {
		t.Errorf("stderr: %s", r.stderr)
	}
}

// TestBookOutShards: a book's text files shared by the shards of a
// --shard run: no share writes the book, which would list only its own
// translations (each share wrote it over the other's, before, each with
// half the pages); each says how to write it. The --resume --book-out
// run without --shard after them writes it with every page's
// translation, translating nothing again.
func TestBookOutShards(t *testing.T) {
	dir := t.TempDir()
	mets := writeShortBook(t, dir, []string{"Haus am See", "Garten und Hof", "Kirche im Dorf", "Brücke am Fluss"}, "ger")
	api := startAPI(t, translatortest.Config{})
	out := t.TempDir()
	for _, sh := range []string{"0/2", "1/2"} {
		r := runCLI(t, newEnv(api), mets, "-o", out, "-src", "de", "--vocabulary", "", "--book-out", "--shard", sh)
		if r.code != exitOK {
			t.Fatalf("shard %s: exit %d: %s", sh, r.code, r.stderr)
		}
		if !strings.Contains(r.stderr, "the shards share its text files") || !strings.Contains(r.stderr, "--resume --book-out") {
			t.Errorf("shard %s says nothing of the book not written: %s", sh, r.stderr)
		}
		if _, err := os.Stat(filepath.Join(out, "mets_en.mets.xml")); !os.IsNotExist(err) {
			t.Fatalf("shard %s wrote the book (%v)", sh, err)
		}
	}
	calls := len(api.Inputs())
	r := runCLI(t, newEnv(api), mets, "-o", out, "-src", "de", "--vocabulary", "", "--book-out", "--resume")
	if r.code != exitOK {
		t.Fatalf("resume: exit %d: %s", r.code, r.stderr)
	}
	want := []string{"alto/0001_en.xml", "alto/0002_en.xml", "alto/0003_en.xml", "alto/0004_en.xml"}
	if got := metsTranslations(t, filepath.Join(out, "mets_en.mets.xml"), "FULLTEXT_EN"); !slices.Equal(got, want) {
		t.Errorf("translations %q, want %q", got, want)
	}
	if n := len(api.Inputs()) - calls; n != 0 {
		t.Errorf("the resumed run sent %d texts to translate, want none", n)
	}
}

// TestBookOutList: --book-out over a list of two IIIF manifests (URLs)
// writes each book's derived manifest and annotation pages in the folder
// of its outputs, their ids under --book-base-url and that folder, each
// annotation page and translated file at its id.
func TestBookOutList(t *testing.T) {
	dir := t.TempDir()
	writeShortBook(t, dir, []string{"Haus am See", "Garten und Hof"}, "")
	srv := newBookServer(t)
	var list []string
	for _, b := range []string{"a", "b"} {
		list = append(list, serveShortManifest(t, srv, "/"+b, dir, 2, ""))
	}
	listFile := filepath.Join(dir, "books.txt")
	writeFile(t, listFile, []byte(strings.Join(list, "\n")+"\n"))
	api := startAPI(t, translatortest.Config{})
	out := t.TempDir()
	pub := "https://example.org/pub/"
	r := runCLI(t, newEnv(api), listFile, "-o", out, "-src", "de", "--vocabulary", "", "--book-out", "--book-base-url", pub)
	if r.code != exitOK {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	manifests, _ := filepath.Glob(filepath.Join(out, "*", "*", "manifest_en.json"))
	if len(manifests) != 2 {
		all, _ := filepath.Glob(filepath.Join(out, "*", "*", "*"))
		t.Fatalf("derived manifests %q, want one a book; outputs %q", manifests, all)
	}
	for _, m := range manifests {
		var doc struct {
			ID    string `json:"id"`
			Items []struct {
				Annotations []struct {
					ID string `json:"id"`
				} `json:"annotations"`
				SeeAlso []struct {
					ID string `json:"id"`
				} `json:"seeAlso"`
			} `json:"items"`
		}
		if err := json.Unmarshal(readOrFatal(t, m), &doc); err != nil {
			t.Fatal(err)
		}
		rel, _ := filepath.Rel(out, m)
		if doc.ID != pub+filepath.ToSlash(rel) || len(doc.Items) != 2 {
			t.Errorf("%s: id %q, %d canvases; want id %q", m, doc.ID, len(doc.Items), pub+filepath.ToSlash(rel))
		}
		for _, c := range doc.Items {
			var ids []string
			for _, a := range c.Annotations {
				ids = append(ids, a.ID)
			}
			for _, s := range c.SeeAlso {
				ids = append(ids, s.ID)
			}
			for _, id := range ids {
				p, ok := strings.CutPrefix(id, pub)
				if !ok {
					continue // the book's own seeAlso
				}
				if _, err := os.Stat(filepath.Join(out, filepath.FromSlash(p))); err != nil {
					t.Errorf("%s: %s: %v", m, id, err)
				}
			}
			if len(c.Annotations) != 1 {
				t.Errorf("%s: a canvas with %d annotation pages, want 1", m, len(c.Annotations))
			}
		}
	}
}

// serveShortManifest serves at prefix on srv a Presentation 3 manifest of
// n canvases, each with its ALTO file (dir/alto/000i.xml, as
// writeShortBook writes them) as seeAlso, and the metadata entries given
// (a JSON list, "" for none); it returns the manifest's URL.
func serveShortManifest(t *testing.T, srv *bookServer, prefix, dir string, n int, metadata string) string {
	t.Helper()
	base := srv.URL + prefix
	var canvases []string
	for i := 1; i <= n; i++ {
		srv.put(fmt.Sprintf("%s/alto/%04d.xml", prefix, i), readOrFatal(t, filepath.Join(dir, "alto", fmt.Sprintf("%04d.xml", i))))
		canvases = append(canvases, iiifCanvas(base, i, fmt.Sprintf(`{"id": "%s/alto/%04d.xml", "type": "Dataset", "format": "application/xml", "profile": "http://www.loc.gov/standards/alto/ns-v4#"}`, base, i)))
	}
	if metadata != "" {
		metadata = `"metadata": ` + metadata + ", "
	}
	srv.put(prefix+"/manifest.json", []byte(fmt.Sprintf(`{"@context": "http://iiif.io/api/presentation/3/context.json", "id": "%s/manifest.json", "type": "Manifest",
  "label": {"en": ["%s"]}, %s"items": [%s]}`, base, prefix, metadata, strings.Join(canvases, ", "))))
	return base + "/manifest.json"
}
