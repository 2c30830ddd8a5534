package main

import (
	"encoding/csv"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"archivekit/internal/translate/runmeta"
	"archivekit/internal/translate/translator/translatortest"
)

// shortGermanPages are a book's pages of one short German line each:
// too short for any page to be told on its own.
var shortGermanPages = []string{"Das alte Haus", "steht am Fluss", "und die Kinder", "spielen im Garten", "bei schönem Wetter", "mit ihren Freunden"}

// shortPolishPages are another book's, in Polish.
var shortPolishPages = []string{"Stary dom stoi", "nad rzeką i dzieci", "bawią się w ogrodzie", "przy pięknej pogodzie", "ze swoimi przyjaciółmi"}

// writeShortBook writes a METS book of pages, one ALTO file a page (no
// LANG), into dir and returns the METS file's path; with lang, its MODS
// declares that languageTerm.
func writeShortBook(t *testing.T, dir string, pages []string, lang string) string {
	var files, divs strings.Builder
	for i, text := range pages {
		n := i + 1
		var strs []string
		for j, w := range strings.Fields(text) {
			strs = append(strs, fmt.Sprintf(`<String ID="s%d" CONTENT="%s"/>`, j, w))
		}
		alto := fmt.Sprintf(`<?xml version="1.0" encoding="UTF-8"?>
<alto xmlns="http://www.loc.gov/standards/alto/ns-v4#"><Layout><Page ID="P%[1]d" PHYSICAL_IMG_NR="%[1]d"><PrintSpace>
<TextBlock ID="b%[1]d"><TextLine ID="l%[1]d">%[2]s</TextLine></TextBlock>
</PrintSpace></Page></Layout></alto>
`, n, strings.Join(strs, "<SP/>"))
		writeFile(t, filepath.Join(dir, "alto", fmt.Sprintf("%04d.xml", n)), []byte(alto))
		fmt.Fprintf(&files, `<mets:file ID="ALTO_%[1]d" MIMETYPE="text/xml"><mets:FLocat LOCTYPE="URL" xlink:href="alto/%04[1]d.xml"/></mets:file>`+"\n", n)
		fmt.Fprintf(&divs, `<mets:div ID="PHYS_%04[1]d" ORDER="%[1]d" TYPE="page"><mets:fptr FILEID="ALTO_%[1]d"/></mets:div>`+"\n", n)
	}
	dmd := ""
	if lang != "" {
		dmd = `<mets:dmdSec ID="DMD1"><mets:mdWrap MDTYPE="MODS"><mets:xmlData><mods:mods xmlns:mods="http://www.loc.gov/mods/v3">` +
			`<mods:language><mods:languageTerm authority="iso639-2b" type="code">` + lang + `</mods:languageTerm></mods:language></mods:mods></mets:xmlData></mets:mdWrap></mets:dmdSec>` + "\n"
	}
	mets := `<?xml version="1.0" encoding="UTF-8"?>
<mets:mets xmlns:mets="http://www.loc.gov/METS/" xmlns:xlink="http://www.w3.org/1999/xlink">
` + dmd + `<mets:fileSec><mets:fileGrp USE="FULLTEXT">
` + files.String() + `</mets:fileGrp></mets:fileSec>
<mets:structMap TYPE="PHYSICAL"><mets:div TYPE="physSequence">
` + divs.String() + `</mets:div></mets:structMap>
</mets:mets>
`
	p := filepath.Join(dir, "mets.xml")
	writeFile(t, p, []byte(mets))
	return p
}

// logRules reads a translation log: each row's source_lang/lang_source.
func logRules(t *testing.T, path string) []string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rows, err := csv.NewReader(f).ReadAll()
	if err != nil || len(rows) < 2 {
		t.Fatalf("%s: %v", path, err)
	}
	var out []string
	for _, r := range rows[1:] {
		out = append(out, r[8]+"/"+r[9])
	}
	return out
}

// TestBookLanguage (issue 28 item 4): a book's text files are one document
// for language detection. Each page of this book is one short German line:
// a page alone cannot be told (its line takes the default, Czech), but the
// book's lines together are German, and every page takes the book's
// language by the document rule; the run metadata has one statistics
// record for the book.
func TestBookLanguage(t *testing.T) {
	dir := t.TempDir()
	mets := writeShortBook(t, dir, shortGermanPages, "")
	api := startAPI(t, translatortest.Config{})

	// One page alone: not confident, so the default.
	alone := t.TempDir()
	if r := runCLI(t, newEnv(api), filepath.Join(dir, "alto", "0001.xml"), "-o", alone, "--vocabulary", ""); r.code != exitOK {
		t.Fatalf("page alone: exit %d: %s", r.code, r.stderr)
	}
	if got := logRules(t, filepath.Join(alone, "0001_log.csv")); len(got) != 1 || got[0] != "cs/default" {
		t.Fatalf("page alone: %v, want cs/default", got)
	}

	// The book: German, by the document rule, on every page.
	out := t.TempDir()
	r := runCLI(t, newEnv(api), mets, "-o", out, "--vocabulary", "")
	if r.code != exitOK {
		t.Fatalf("book: exit %d: %s", r.code, r.stderr)
	}
	for i := range shortGermanPages {
		log := filepath.Join(out, "alto", fmt.Sprintf("%04d_log.csv", i+1))
		if got := logRules(t, log); len(got) != 1 || got[0] != "de/document" {
			t.Errorf("page %d: %v, want de/document", i+1, got)
		}
	}
	books := readParadata(t, out).Statistics.Books
	if len(books) != 1 {
		t.Fatalf("statistics.books %+v, want one record", books)
	}
	b := books[0]
	if b.DocumentLanguage != "de" || b.TextFilesRead != 6 || b.Files != 6 || b.Units != 6 || b.UnitsTranslated != 6 ||
		b.Languages["de"] != 6 || b.LangSources["document"] != 6 || b.SegmentStatus["ok"] != 6 || b.Pages != 6 {
		t.Errorf("statistics.book %+v", b)
	}
	// An explicit source language: no book detection.
	out = t.TempDir()
	if r := runCLI(t, newEnv(api), mets, "-o", out, "--vocabulary", "", "-src", "de"); r.code != exitOK {
		t.Fatalf("book -src de: exit %d: %s", r.code, r.stderr)
	}
	if b := readParadata(t, out).Statistics.Books; len(b) != 1 || b[0].DocumentLanguage != "" || b[0].LangSources["given"] != 6 {
		t.Errorf("statistics.books with -src de: %+v", b)
	}
}

// TestBookLanguageFolder: the books of a folder run are each one document:
// a German and a Polish book of short pages each get their own language
// and their own record.
func TestBookLanguageFolder(t *testing.T) {
	dir := t.TempDir()
	writeShortBook(t, filepath.Join(dir, "de-book"), shortGermanPages, "")
	writeShortBook(t, filepath.Join(dir, "pl-book"), shortPolishPages, "")
	api := startAPI(t, translatortest.Config{})
	out := t.TempDir()
	if r := runCLI(t, newEnv(api), dir, "-o", out, "--vocabulary", "", "--formats", "xml"); r.code != exitOK {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	want := map[string]string{"de-book": "de/document", "pl-book": "pl/document"}
	for book, w := range want {
		logs, _ := filepath.Glob(filepath.Join(out, book, "alto", "*_log.csv"))
		if len(logs) == 0 {
			t.Errorf("%s: no logs", book)
		}
		for _, l := range logs {
			if got := logRules(t, l); len(got) != 1 || got[0] != w {
				t.Errorf("%s: %v, want %s", l, got, w)
			}
		}
	}
	books := readParadata(t, out).Statistics.Books
	got := map[string]string{}
	for _, b := range books {
		got[filepath.Base(filepath.Dir(b.Source))] = fmt.Sprintf("%s %d", b.DocumentLanguage, b.Files)
	}
	if len(books) != 2 || got["de-book"] != "de 6" || got["pl-book"] != "pl 5" {
		t.Errorf("statistics.books %v", got)
	}
}

// --merge adds the shares' records of one book (same source) and keeps
// the records of other books apart; shares that told different languages
// leave the language empty.
func TestMergeBooks(t *testing.T) {
	share := func(src, lang string, files int) *runmeta.Book {
		b := runmeta.NewBook(src)
		b.DocumentLanguage, b.Files, b.TextFilesRead = lang, files, files
		b.LangSources["document"] = files
		return b
	}
	got := runmeta.MergeBooks(nil, []*runmeta.Book{share("a/mets.xml", "de", 2), share("b/mets.xml", "pl", 1)})
	got = runmeta.MergeBooks(got, []*runmeta.Book{share("a/mets.xml", "de", 3), share("b/mets.xml", "cs", 1)})
	if len(got) != 2 || got[0].Files != 5 || got[0].DocumentLanguage != "de" || got[0].LangSources["document"] != 5 ||
		got[1].Files != 2 || got[1].DocumentLanguage != "" {
		t.Errorf("merged %+v %+v", got[0], got[1])
	}
}

// TestBookDeclaredLanguage: a book whose text is too short to be told even
// together takes the language its MODS declares (languageTerm "ger") as
// its document language.
func TestBookDeclaredLanguage(t *testing.T) {
	dir := t.TempDir()
	mets := writeShortBook(t, dir, []string{"Haus", "Garten"}, "ger")
	api := startAPI(t, translatortest.Config{})
	out := t.TempDir()
	if r := runCLI(t, newEnv(api), mets, "-o", out, "--vocabulary", ""); r.code != exitOK {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	for _, n := range []string{"0001", "0002"} {
		if got := logRules(t, filepath.Join(out, "alto", n+"_log.csv")); len(got) != 1 || got[0] != "de/document" {
			t.Errorf("page %s: %v, want de/document", n, got)
		}
	}
	b := readParadata(t, out).Statistics.Books
	if len(b) != 1 || b[0].DocumentLanguage != "" || b[0].DeclaredLanguage != "de" {
		t.Errorf("statistics.books %+v", b)
	}
}

// TestBookDeclaredLanguageIIIF: a IIIF manifest declares its language in
// its metadata ("Language": "German", as published manifests write it); a
// book of it too short to be told takes that language, as a METS book
// takes its MODS's. Before, only METS books had a declared language.
func TestBookDeclaredLanguageIIIF(t *testing.T) {
	dir := t.TempDir()
	writeShortBook(t, dir, []string{"Haus", "Garten"}, "")
	srv := newBookServer(t)
	manifest := serveShortManifest(t, srv, "/b", dir, 2, `[{"label": {"en": ["Language"]}, "value": {"en": ["German"]}}]`)
	api := startAPI(t, translatortest.Config{})
	out := t.TempDir()
	if r := runCLI(t, newEnv(api), manifest, "-o", out, "--vocabulary", ""); r.code != exitOK {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	logs, _ := filepath.Glob(filepath.Join(out, "*", "*_log.csv"))
	if len(logs) != 2 {
		t.Fatalf("%d translation logs (%q), want 2", len(logs), logs)
	}
	for _, l := range logs {
		if got := logRules(t, l); len(got) != 1 || got[0] != "de/document" {
			t.Errorf("%s: %v, want de/document", l, got)
		}
	}
	b := readParadata(t, out).Statistics.Books
	if len(b) != 1 || b[0].DeclaredLanguage != "de" {
		t.Errorf("statistics.books %+v, want declared_language de", b)
	}
}
