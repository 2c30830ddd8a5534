package main

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"unicode/utf16"
	"unicode/utf8"

	"archivekit/internal/docrecord"
	"archivekit/internal/testenv"
	"archivekit/internal/translate/langtag"
	"archivekit/internal/translate/translator/translatortest"
)

// realPAGE is a real OCR-D ground-truth PAGE-XML page (German, 2019
// namespace; internal/translate/pagexml/testdata/SOURCES.md).
const realPAGE = "../../internal/translate/pagexml/testdata/real/ocrd-gt_german_kant1784-0017.page.xml"

// TestOutputModeFormatDefault (issue 29): without --output-mode (nor
// config or OUTPUT_MODE), a PAGE file gets PAGE's own default, append (one
// TextEquiv added per line), not the spec's replace of ALTO and metadata;
// --output-mode replace still replaces. The run metadata says which mode
// each format got, and the document record which mode the run used.
func TestOutputModeFormatDefault(t *testing.T) {
	src, err := os.ReadFile(realPAGE)
	if err != nil {
		t.Fatal(err)
	}
	in := filepath.Join(t.TempDir(), "kant.page.xml")
	writeFile(t, in, src)
	wantTag, err := langtag.MT("en", "de")
	if err != nil {
		t.Fatal(err)
	}
	base := filepath.Join(t.TempDir(), "KANT.document.json")
	writeFile(t, base, []byte(`{"schema_version":"1.0","doc_id":"KANT"}`))
	api := startAPI(t, translatortest.Config{})
	for _, c := range []struct {
		name      string
		flags     []string
		more      bool // more TextEquivs than the input
		pageMode  string
		recordMod string
	}{
		{"default", nil, true, "append", "append"},
		{"replace", []string{"--output-mode", "replace"}, false, "replace", "replace"},
	} {
		t.Run(c.name, func(t *testing.T) {
			out := t.TempDir()
			args := append([]string{in, "-o", out, "-src", "de", "--vocabulary", "", "--document-json", base}, c.flags...)
			r := runCLI(t, newEnv(api), args...)
			if r.code != exitOK {
				t.Fatalf("exit %d: %s", r.code, r.stderr)
			}
			got, err := os.ReadFile(filepath.Join(out, "kant.page_en.xml"))
			if err != nil {
				t.Fatal(err)
			}
			n, n0 := bytes.Count(got, []byte("<TextEquiv")), bytes.Count(src, []byte("<TextEquiv"))
			if (n > n0) != c.more {
				t.Errorf("%d TextEquiv elements in the output, %d in the input: want more: %v", n, n0, c.more)
			}
			if c.more && !bytes.Contains(got, []byte(wantTag)) {
				t.Errorf("appended TextEquivs carry no %s", wantTag)
			}
			d := readParadata(t, out)
			byFormat, _ := d.Config["output_mode_by_format"].(map[string]any)
			if byFormat["page"] != c.pageMode || byFormat["alto"] != "replace" || byFormat["hocr"] != "parallel" {
				t.Errorf("output_mode_by_format %v", d.Config["output_mode_by_format"])
			}
			if d.Statistics.LanguageTags["de"] != wantTag || len(d.Statistics.LanguageTags) != 1 {
				t.Errorf("language_tags %v, want {de: %s}", d.Statistics.LanguageTags, wantTag)
			}
			rec, err := docrecord.Load(filepath.Join(out, "KANT.document.json"))
			if err != nil {
				t.Fatal(err)
			}
			for path, want := range map[string]string{"translations/language_tag": wantTag, "translations/output_mode": c.recordMod} {
				if got, _ := rec.Get(strings.Split(path, "/")...); got != want {
					t.Errorf("%s = %v, want %s", path, got, want)
				}
			}
		})
	}
}

// TestRecordMixedModes: a run of PAGE files (appended, their default) and
// ALTO files (replaced) records output_mode replace, since not every
// original was kept, and each kind's mode (it recorded the majority's:
// "replace" for appended PAGE files or "append" for replaced ALTO ones).
func TestRecordMixedModes(t *testing.T) {
	in := t.TempDir()
	writeFile(t, filepath.Join(in, "a.page.xml"), readOrFatal(t, realPAGE))
	writeFile(t, filepath.Join(in, "b.page.xml"), readOrFatal(t, realPAGE))
	writeFile(t, filepath.Join(in, "c.alto.xml"), readOrFatal(t, testenv.Path(t, sampleALTO)))
	base := filepath.Join(t.TempDir(), "MIX.document.json")
	writeFile(t, base, []byte(`{"schema_version":"1.0","doc_id":"MIX"}`))
	api := startAPI(t, translatortest.Config{})
	out := t.TempDir()
	if r := runCLI(t, newEnv(api), in, "-o", out, "-src", "de", "--vocabulary", "", "--document-json", base); r.code != exitOK {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	rec, err := docrecord.Load(filepath.Join(out, "MIX.document.json"))
	if err != nil {
		t.Fatal(err)
	}
	for path, want := range map[string]string{"translations/output_mode": "replace",
		"translations/output_mode_by_format/page": "append", "translations/output_mode_by_format/alto": "replace"} {
		if got, _ := rec.Get(strings.Split(path, "/")...); got != want {
			t.Errorf("%s = %v, want %s", path, got, want)
		}
	}
}

// TestFolderByContent (issue 29): a folder run takes ALTO, PAGE-XML and
// hOCR files by their root element whatever their names (.xml, .hocr,
// .html), beside those --formats names; other XML and HTML files are
// reported as not collected with the reason (each logged, and once as a
// warning with the --formats that takes them), and other files ignored.
func TestFolderByContent(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "a", "doc.alto.xml"), readOrFatal(t, testenv.Path(t, sampleALTO)))
	writeFile(t, filepath.Join(dir, "a", "0001.xml"), readOrFatal(t, realPAGE))
	// A PAGE file with a comment of 70 KiB before its root (it was not
	// collected: its first 64 KiB hold no root element).
	page := readOrFatal(t, realPAGE)
	decl := bytes.Index(page, []byte("?>")) + 2
	long := slices.Concat(page[:decl], []byte("\n<!-- "+strings.Repeat("provenance ", 70<<10/11)+"-->"), page[decl:])
	writeFile(t, filepath.Join(dir, "a", "0002.xml"), long)
	writeFile(t, filepath.Join(dir, "b", "scan.hocr"), readOrFatal(t, realHOCRSmall))
	writeFile(t, filepath.Join(dir, "b", "scan2.html"), readOrFatal(t, realHOCR))
	writeFile(t, filepath.Join(dir, "b", "record.xml"), []byte(`<?xml version="1.0"?><record><title>Kronika</title></record>`))
	writeFile(t, filepath.Join(dir, "b", "notes.html"), []byte(`<!DOCTYPE html><html><body><p>Notes</p></body></html>`))
	writeFile(t, filepath.Join(dir, "b", "scan.png"), []byte("\x89PNG\r\n\x1a\n"))
	api := startAPI(t, translatortest.Config{})
	out := t.TempDir()
	r := runCLI(t, newEnv(api), dir, "-o", out, "--vocabulary", "", "--fast-align")
	if r.code != exitOK {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	for _, f := range []string{"a/doc_en.alto.xml", "a/0001_en.xml", "a/0002_en.xml", "b/scan_en.hocr", "b/scan2_en.html"} {
		if _, err := os.Stat(filepath.Join(out, filepath.FromSlash(f))); err != nil {
			t.Errorf("output %s: %v", f, err)
		}
	}
	d := readParadata(t, out)
	if d.Statistics.SuccessfullyProcessed != 5 || d.Statistics.SkippedFiles != 0 {
		t.Errorf("statistics %+v", d.Statistics.Statistics)
	}
	// The hOCR translations are counted as html, in this run and in a
	// --resume that keeps them.
	wantCounts := map[string]int{"xml": 3, "html": 2, "csv": 5}
	if got := d.Statistics.OutputCountsByType; !maps.Equal(got, wantCounts) {
		t.Errorf("output_counts_by_type %v, want %v", got, wantCounts)
	}
	// The kinds translated, as read from the content (config.mode says
	// "alto" for any run taking .alto.xml files as ALTO).
	if got, want := d.Statistics.DocumentKinds, map[string]int{"alto": 1, "page": 2, "hocr": 2}; !maps.Equal(got, want) {
		t.Errorf("document_kinds %v, want %v", got, want)
	}
	resumed := paradataOfRun(t, out, func() {
		if r := runCLI(t, newEnv(api), dir, "-o", out, "--vocabulary", "", "--fast-align", "--resume"); r.code != exitOK {
			t.Fatalf("--resume: exit %d: %s", r.code, r.stderr)
		}
	})
	if got := resumed.Statistics.OutputCountsByType; !maps.Equal(got, wantCounts) {
		t.Errorf("--resume: output_counts_by_type %v, want %v", got, wantCounts)
	}
	nc, _ := d.Config["not_collected"].([]any)
	var got []string
	for _, x := range nc {
		m, _ := x.(map[string]any)
		file, _ := m["file"].(string)
		reason, _ := m["reason"].(string)
		if !strings.Contains(reason, "not ALTO, PAGE-XML or hOCR") {
			t.Errorf("%s: reason %q", file, reason)
		}
		got = append(got, filepath.Base(file))
	}
	if strings.Join(got, ",") != "notes.html,record.xml" {
		t.Errorf("not collected %q, want notes.html and record.xml", got)
	}
	// Said once as a warning with the --formats that takes them, and
	// counted in the run summary.
	for _, want := range []string{`"level":"WARN","msg":"files of the folder not collected","files":2`,
		`"not_text_files":{"html":1,"xml":1}`, `"hint":"to translate them as metadata records, give --formats alto.xml,html,xml"`,
		`"not_collected":{".html":1,".xml":1}`} {
		if !strings.Contains(r.stderr, want) {
			t.Errorf("log lacks %s:\n%s", want, r.stderr)
		}
	}
}

// TestFormatsMisspelt: a --formats extension no file of the folder ends
// in is warned of, and the hint to take the records does not repeat it
// (alto.xlm was taken without a word).
func TestFormatsMisspelt(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "doc.alto.xml"), readOrFatal(t, testenv.Path(t, sampleALTO)))
	writeFile(t, filepath.Join(dir, "record.xml"), []byte(`<?xml version="1.0"?><record><title>Kronika</title></record>`))
	api := startAPI(t, translatortest.Config{})
	r := runCLI(t, newEnv(api), dir, "-o", t.TempDir(), "--vocabulary", "", "--fast-align", "--formats", "alto.xlm")
	if r.code != exitOK {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	if !strings.Contains(r.stderr, "--formats: no file of the folder ends in .alto.xlm (misspelt?)") || strings.Contains(r.stderr, "give --formats alto.xlm") ||
		!strings.Contains(r.stderr, "give --formats xml") {
		t.Errorf("the misspelt extension is not warned of, or the hint repeats it:\n%s", r.stderr)
	}
}

// TestFolderEncodings: a folder run takes ALTO and PAGE-XML files in
// ISO-8859-1 and UTF-16 by their root element, as it does UTF-8 ones, and
// writes each translation in its document's encoding (a folder run left
// them out as "not XML", advising --formats).
func TestFolderEncodings(t *testing.T) {
	dir := t.TempDir()
	latin1 := "<?xml version=\"1.0\" encoding=\"ISO-8859-1\"?>\n<alto xmlns=\"http://www.loc.gov/standards/alto/ns-v2#\"><Layout><Page ID=\"p1\"><PrintSpace>" +
		"<TextBlock ID=\"b1\"><TextLine ID=\"l1\"><String CONTENT=\"Die\"/><SP/><String CONTENT=\"Stra\xdfe\"/><SP/><String CONTENT=\"f\xfchrt\"/><SP/><String CONTENT=\"zur\"/><SP/><String CONTENT=\"Kirche\"/></TextLine></TextBlock>" +
		"</PrintSpace></Page></Layout></alto>\n"
	page := "\ufeff<?xml version=\"1.0\" encoding=\"UTF-16\"?>\n<PcGts xmlns=\"http://schema.primaresearch.org/PAGE/gts/pagecontent/2019-07-15\"><Page imageFilename=\"a.png\" imageWidth=\"9\" imageHeight=\"9\">" +
		"<TextRegion id=\"r1\"><TextLine id=\"l1\"><TextEquiv><Unicode>Die Straße führt zur Kirche</Unicode></TextEquiv></TextLine></TextRegion></Page></PcGts>\n"
	var u16 []byte
	for _, u := range utf16.Encode([]rune(page)) {
		u16 = binary.LittleEndian.AppendUint16(u16, u)
	}
	writeFile(t, filepath.Join(dir, "latin1.xml"), []byte(latin1))
	writeFile(t, filepath.Join(dir, "utf16.xml"), u16)
	api := startAPI(t, translatortest.Config{})
	out := t.TempDir()
	r := runCLI(t, newEnv(api), dir, "-o", out, "--vocabulary", "", "--fast-align", "-src", "de")
	if r.code != exitOK {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	d := readParadata(t, out)
	if d.Statistics.SuccessfullyProcessed != 2 || d.Config["not_collected"] != nil {
		t.Errorf("translated %d, not collected %v; want both translated", d.Statistics.SuccessfullyProcessed, d.Config["not_collected"])
	}
	if b, err := os.ReadFile(filepath.Join(out, "latin1_en.xml")); err != nil || !bytes.Contains(b, []byte(`encoding="ISO-8859-1"`)) {
		t.Errorf("latin1_en.xml: %v, %.120q", err, b)
	}
	if b, err := os.ReadFile(filepath.Join(out, "utf16_en.xml")); err != nil || !bytes.HasPrefix(b, []byte{0xFF, 0xFE}) {
		t.Errorf("utf16_en.xml: %v, starts %.8q", err, b)
	}
}

// TestWrongEncodingDeclarationNamed: an ALTO file whose bytes are UTF-8
// but whose declaration names another encoding fails naming that, and is
// not said to have another root element than <alto> (it was: "named like
// ALTO but its root element is not <alto>", then "unsupported character
// encoding").
func TestWrongEncodingDeclarationNamed(t *testing.T) {
	dir := t.TempDir()
	alto := "\ufeff<?xml version=\"1.0\" encoding=\"ISO-8859-2\"?>\n<alto xmlns=\"http://www.loc.gov/standards/alto/ns-v3#\"><Layout><Page ID=\"p\"><PrintSpace><TextBlock ID=\"b\"><TextLine ID=\"l\"><String CONTENT=\"Žluťoučký kůň\"/></TextLine></TextBlock></PrintSpace></Page></Layout></alto>\n"
	writeFile(t, filepath.Join(dir, "a.alto.xml"), []byte(alto))
	api := startAPI(t, translatortest.Config{})
	r := runCLI(t, newEnv(api), dir, "-o", t.TempDir(), "--vocabulary", "")
	if r.code == exitOK || strings.Contains(r.stderr, "root element is not <alto>") ||
		!strings.Contains(r.stderr, `\"ISO-8859-2\" declared, but the document starts with a UTF-8 byte-order mark`) {
		t.Errorf("exit %d:\n%s", r.code, r.stderr)
	}
}

// A folder given as a link, and a sub-folder that is a link to documents
// kept elsewhere, are read as folders: before, the first was "no input"
// (exit 2) and the second was left out without a word. A link back to a
// folder above is listed as not collected, not walked again.
func TestLinkedFolders(t *testing.T) {
	root := t.TempDir()
	vol, in := filepath.Join(root, "volume"), filepath.Join(root, "in")
	writeFile(t, filepath.Join(vol, "doc.alto.xml"), readOrFatal(t, testenv.Path(t, sampleALTO)))
	writeFile(t, filepath.Join(in, "record.xml"), []byte(`<?xml version="1.0"?><record><title>Kronika</title></record>`))
	for _, l := range [][2]string{{vol, filepath.Join(in, "vol")}, {".", filepath.Join(in, "again")}, {in, filepath.Join(root, "in-link")}} {
		if err := os.Symlink(l[0], l[1]); err != nil {
			t.Fatal(err)
		}
	}
	api := startAPI(t, translatortest.Config{})
	out := t.TempDir()
	r := runCLI(t, newEnv(api), filepath.Join(root, "in-link"), "-o", out, "--vocabulary", "", "--fast-align", "-src", "cs")
	if r.code != exitOK {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	if _, err := os.Stat(filepath.Join(out, "vol", "doc_en.alto.xml")); err != nil {
		t.Errorf("the linked folder's document: %v", err)
	}
	d := readParadata(t, out)
	nc, _ := d.Config["not_collected"].([]any)
	// record.xml is not collected either (metadata is taken by --formats).
	if d.Statistics.SuccessfullyProcessed != 1 || len(nc) != 2 || !strings.Contains(fmt.Sprint(nc[0]), "in-link/again reason:a link to a folder already read") {
		t.Errorf("processed %d, not collected %v", d.Statistics.SuccessfullyProcessed, nc)
	}
}

// A folder run takes ALTO, PAGE-XML and hOCR by their content whatever
// their names: a file named .txt or without an extension (an export's
// habit) is translated, where it was left out without a word; plain text
// and images beside them are passed over, as before.
func TestFolderByContentOtherNames(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "page.txt"), readOrFatal(t, testenv.Path(t, sampleALTO)))
	writeFile(t, filepath.Join(dir, "0003"), readOrFatal(t, realPAGE))
	writeFile(t, filepath.Join(dir, "notes.txt"), []byte("Kronika obce, opis z roku 1920.\n"))
	writeFile(t, filepath.Join(dir, "scan.tif"), []byte("II*\x00\x08\x00\x00\x00"))
	api := startAPI(t, translatortest.Config{})
	out := t.TempDir()
	r := runCLI(t, newEnv(api), dir, "-o", out, "--vocabulary", "", "--fast-align")
	if r.code != exitOK {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	got, _ := filepath.Glob(filepath.Join(out, "*_en*"))
	for i := range got {
		got[i] = filepath.Base(got[i])
	}
	if want := "[0003_en page_en.txt]"; fmt.Sprint(got) != want {
		t.Errorf("translations %v, want %s", got, want)
	}
	if d := readParadata(t, out); d.Statistics.SuccessfullyProcessed != 2 {
		t.Errorf("processed %d, want 2", d.Statistics.SuccessfullyProcessed)
	}
}

// A document whose file name is not valid UTF-8 (a Windows-1250 name
// unpacked on Linux) has its log written in UTF-8, the name with \xNN for
// the stray byte (it was written raw), and is kept by --resume (it was
// translated again on every resumed run).
func TestNameNotUTF8(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "z\xe1pis.alto.xml"), readOrFatal(t, testenv.Path(t, sampleALTO)))
	api := startAPI(t, translatortest.Config{})
	out := t.TempDir()
	r := runCLI(t, newEnv(api), dir, "-o", out, "--vocabulary", "", "--fast-align", "-src", "cs")
	if r.code != exitOK {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	b := readOrFatal(t, filepath.Join(out, "z\xe1pis_log.csv"))
	if !utf8.Valid(b) || !strings.Contains(string(b), "\nz\\xe1pis,") {
		t.Errorf("log: valid UTF-8 %v:\n%.300s", utf8.Valid(b), b)
	}
	calls := api.Posts.Load()
	if r := runCLI(t, newEnv(api), dir, "-o", out, "--vocabulary", "", "--fast-align", "-src", "cs", "--resume"); r.code != exitOK || api.Posts.Load() != calls {
		t.Errorf("resumed: exit %d, %d more backend calls: %s", r.code, api.Posts.Load()-calls, r.stderr)
	}
}

// An earlier run's output folder inside the input folder is not read as
// input (its translations were collected, and into another target language
// would have been translated again): it is listed as not collected.
func TestEarlierOutputInsideInput(t *testing.T) {
	in := t.TempDir()
	writeFile(t, filepath.Join(in, "doc.alto.xml"), readOrFatal(t, testenv.Path(t, sampleALTO)))
	api := startAPI(t, translatortest.Config{})
	if r := runCLI(t, newEnv(api), in, "-o", filepath.Join(in, "out"), "--vocabulary", "", "--fast-align", "-src", "cs"); r.code != exitOK {
		t.Fatalf("first run: exit %d: %s", r.code, r.stderr)
	}
	out := t.TempDir()
	r := runCLI(t, newEnv(api), in, "-o", out, "--vocabulary", "", "--fast-align", "-src", "cs")
	if r.code != exitOK {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	d := readParadata(t, out)
	nc, _ := d.Config["not_collected"].([]any)
	if d.Statistics.SuccessfullyProcessed != 1 || len(nc) != 1 || !strings.Contains(fmt.Sprint(nc[0]), "an earlier translate run's output folder") {
		t.Errorf("processed %d (want 1), not collected %v", d.Statistics.SuccessfullyProcessed, nc)
	}
}

// TestFormatsTxt: with the specification's --formats alto.xml,txt a folder
// run reads a .txt file listing URLs as the list it is (its document is
// downloaded and translated, as when the list is given alone), and a .txt
// of plain text fails saying it is plain text, not XML (it failed as "not
// well-formed XML"); ALTO in a .txt is translated as ALTO.
func TestFormatsTxt(t *testing.T) {
	alto := readOrFatal(t, testenv.Path(t, sampleALTO))
	srv := newBookServer(t)
	srv.put("/docs/remote.alto.xml", alto)
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "a.alto.xml"), alto)
	writeFile(t, filepath.Join(dir, "sub", "urls.txt"), []byte("# one document\n"+srv.URL+"/docs/remote.alto.xml\n"))
	writeFile(t, filepath.Join(dir, "notes.txt"), []byte("Kronika obce, opis z roku 1920.\n"))
	writeFile(t, filepath.Join(dir, "page.txt"), alto)
	api := startAPI(t, translatortest.Config{})
	out := t.TempDir()
	r := runCLI(t, newEnv(api), dir, "-o", out, "--vocabulary", "", "--fast-align", "-src", "cs", "--formats", "alto.xml,txt")
	if r.code != exitOK {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	var got []string
	for k := range outputs(t, out) {
		if k = filepath.ToSlash(k); strings.Contains(k, "_en") && !strings.HasPrefix(k, "downloaded_inputs/") {
			got = append(got, k)
		}
	}
	slices.Sort(got)
	if want := "[a_en.alto.xml page_en.txt remote_en.alto.xml]"; fmt.Sprint(got) != want {
		t.Errorf("translations %v, want %s", got, want)
	}
	fails, _ := filepath.Glob(filepath.Join(out, "*_translator_failures.csv"))
	if len(fails) != 1 {
		t.Fatalf("failures tables %v", fails)
	}
	if b := string(readOrFatal(t, fails[0])); !strings.Contains(b, "notes.txt") || !strings.Contains(b, "plain text, not XML") || strings.Contains(b, "urls.txt") {
		t.Errorf("failures table:\n%s", b)
	}
}
