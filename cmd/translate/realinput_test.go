package main

import (
	"archivekit/internal/testenv"
	"archivekit/internal/translate/lemmatizer/lemmatizertest"
	"archivekit/internal/translate/translator/translatortest"
	"bytes"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
)

const fieldsFile = "../../setup/translate/amcr-fields.txt"

func writeFile(t *testing.T, path string, data []byte) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestMalformedRefused: a mismatched end tag and a blank line before the
// XML declaration are refused with exit 3 and a message naming the line.
func TestMalformedRefused(t *testing.T) {
	record, _ := os.ReadFile(testenv.Path(t, "records/C-9107617A.xml"))
	for _, c := range []struct {
		name string
		data []byte
		says string
	}{
		{"mismatched.alto.xml", []byte("<?xml version=\"1.0\"?>\n<alto><Layout><Page><PrintSpace>\n<TextBlock><TextLine><String CONTENT=\"slovo\"/>\n</TextBlock></TextLine>\n</PrintSpace></Page></Layout></alto>\n"),
			"line 4: end tag </TextBlock> does not match start tag <TextLine> of line 3"},
		{"blank.xml", append([]byte("\n"), record...), "line 2: XML declaration not at the very start"},
	} {
		t.Run(c.name, func(t *testing.T) {
			api := startAPI(t, translatortest.Config{})
			in := filepath.Join(t.TempDir(), c.name)
			writeFile(t, in, c.data)
			out := t.TempDir()
			r := runCLI(t, newEnv(api), in, "-o", out, "--xpaths", fieldsFile)
			if r.code != exitFailure || !strings.Contains(r.stderr, c.says) {
				t.Fatalf("exit %d, want %d with %q:\n%s", r.code, exitFailure, c.says, r.stderr)
			}
			if api.Posts.Load() != 0 {
				t.Errorf("%d backend calls for a malformed document", api.Posts.Load())
			}
			d := readParadata(t, out)
			if len(d.SkippedFilesDetail) != 1 || !strings.Contains(d.SkippedFilesDetail[0].Reason, c.says) {
				t.Errorf("skipped files %+v", d.SkippedFilesDetail)
			}
		})
	}
}

// TestDirectoryKeepsTree: book1/00000001.xml and book2/00000001.xml each
// get their own output and log, in the same folders under the output.
func TestDirectoryKeepsTree(t *testing.T) {
	a, _ := os.ReadFile(testenv.Path(t, "records/C-9107617A.xml"))
	b, _ := os.ReadFile(testenv.Path(t, "records/C-9100725A.xml"))
	in, out := t.TempDir(), t.TempDir()
	writeFile(t, filepath.Join(in, "book1", "00000001.xml"), a)
	writeFile(t, filepath.Join(in, "book2", "00000001.xml"), b)
	writeFile(t, filepath.Join(in, "top.xml"), a)
	api := startAPI(t, translatortest.Config{})
	r := runCLI(t, newEnv(api), in, "-o", out, "--formats", "xml", "--xpaths", fieldsFile, "--vocabulary", "")
	if r.code != exitOK {
		t.Fatalf("exit %d:\n%s", r.code, r.stderr)
	}
	for _, p := range []string{"book1/00000001_en.xml", "book1/00000001_log.csv", "book2/00000001_en.xml", "book2/00000001_log.csv", "top_en.xml", "top_log.csv"} {
		if _, err := os.Stat(filepath.Join(out, p)); err != nil {
			t.Errorf("missing %s", p)
		}
	}
	one, _ := os.ReadFile(filepath.Join(out, "book1", "00000001_en.xml"))
	two, _ := os.ReadFile(filepath.Join(out, "book2", "00000001_en.xml"))
	if string(one) == string(two) {
		t.Error("the two books' outputs are the same file")
	}
	d := readParadata(t, out)
	seen := map[string]bool{}
	for _, o := range d.Outputs {
		if seen[o] {
			t.Errorf("output %s listed twice", o)
		}
		seen[o] = true
	}
	if len(d.Outputs) != 6 || d.Statistics.SuccessfullyProcessed != 3 {
		t.Errorf("outputs %v, %d processed", d.Outputs, d.Statistics.SuccessfullyProcessed)
	}
}

// TestNothingTranslated: a METS file, a page already in English and a run
// with source = target translate nothing and fail with exit 3; in a
// directory run they are skipped with the reason and the counts say what
// was really translated.
func TestNothingTranslated(t *testing.T) {
	mets := []byte(`<?xml version="1.0" encoding="UTF-8"?>
<mets:mets xmlns:mets="http://www.loc.gov/METS/" xmlns:mods="http://www.loc.gov/mods/v3"><mets:dmdSec ID="d1"><mets:mdWrap MDTYPE="MODS"><mets:xmlData><mods:mods><mods:titleInfo><mods:title>Kronika obce</mods:title></mods:titleInfo></mods:mods></mets:xmlData></mets:mdWrap></mets:dmdSec></mets:mets>
`)
	english := []byte(`<?xml version="1.0" encoding="UTF-8"?>
<alto xmlns="http://www.loc.gov/standards/alto/ns-v4#"><Layout><Page ID="p1"><PrintSpace>
<TextBlock ID="b1"><TextLine ID="l1"><String CONTENT="The excavation of the settlement revealed the remains of houses"/></TextLine><TextLine ID="l2"><String CONTENT="and the graves of its inhabitants, which were studied in detail."/></TextLine></TextBlock>
</PrintSpace></Page></Layout></alto>
`)
	record, _ := os.ReadFile(testenv.Path(t, "records/C-9107617A.xml"))
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "mets.xml"), mets)
	writeFile(t, filepath.Join(dir, "page_en.alto.xml"), english)
	writeFile(t, filepath.Join(dir, "record.xml"), record)
	for _, c := range []struct {
		name string
		args []string
		says string
	}{
		{"METS", []string{filepath.Join(dir, "mets.xml")}, "none of the field list's XPath targets matched"},
		{"English page", []string{filepath.Join(dir, "page_en.alto.xml")}, "1 already in the target language en"},
		{"source = target", []string{filepath.Join(dir, "record.xml"), "-src", "en"}, "already in the target language en"},
	} {
		t.Run(c.name, func(t *testing.T) {
			api := startAPI(t, translatortest.Config{})
			out := t.TempDir()
			r := runCLI(t, newEnv(api), append(c.args, "-o", out, "--xpaths", fieldsFile, "--vocabulary", "")...)
			if r.code != exitFailure || !strings.Contains(r.stderr, "nothing translated") || !strings.Contains(r.stderr, c.says) {
				t.Fatalf("exit %d, want %d with %q:\n%s", r.code, exitFailure, c.says, r.stderr)
			}
			d := readParadata(t, out)
			if d.Statistics.UnitsTranslated != 0 || d.Statistics.SuccessfullyProcessed != 0 || len(d.Outputs) != 0 {
				t.Errorf("counts: %+v, outputs %v", d.Statistics, d.Outputs)
			}
			if m, _ := filepath.Glob(filepath.Join(out, "*_en*.xml")); len(m) != 0 {
				t.Errorf("output written for a document that translated nothing: %v", m)
			}
		})
	}
	t.Run("directory", func(t *testing.T) {
		api := startAPI(t, translatortest.Config{})
		out := t.TempDir()
		r := runCLI(t, newEnv(api), dir, "-o", out, "--formats", "xml", "--xpaths", fieldsFile, "--vocabulary", "")
		if r.code != exitOK {
			t.Fatalf("exit %d:\n%s", r.code, r.stderr)
		}
		d := readParadata(t, out)
		st := d.Statistics
		if st.SuccessfullyProcessed != 1 || st.SkippedFiles != 2 || st.UnitsTranslated == 0 || st.UnitsTranslated != st.Languages["cs"] {
			t.Errorf("statistics %+v; skipped %+v", st, d.SkippedFilesDetail)
		}
	})
}

// TestPagesWithoutText: a book's blank page (an ALTO file without text)
// is written as it was beside the translated pages, counted as a document
// without text and named, not a failure, and kept by --resume; a run whose
// every page is blank succeeds, with a warning.
func TestPagesWithoutText(t *testing.T) {
	text := []byte(`<?xml version="1.0" encoding="UTF-8"?>
<alto xmlns="http://www.loc.gov/standards/alto/ns-v3#"><Layout><Page ID="P1"><PrintSpace><TextBlock ID="b1"><TextLine ID="l1"><String CONTENT="Archeologický výzkum proběhl v obci"/></TextLine></TextBlock></PrintSpace></Page></Layout></alto>
`)
	blank := []byte("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\r\n<alto xmlns=\"http://www.loc.gov/standards/alto/ns-v3#\"><Layout><Page ID=\"P2\"><PrintSpace/></Page></Layout></alto>\r\n")
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "0001.alto.xml"), text)
	writeFile(t, filepath.Join(dir, "0002.alto.xml"), blank)
	api := startAPI(t, translatortest.Config{})
	out := t.TempDir()
	for _, args := range [][]string{nil, {"--resume"}} {
		r := runCLI(t, newEnv(api), append([]string{dir, "-o", out, "-src", "cs", "--vocabulary", ""}, args...)...)
		if r.code != exitOK {
			t.Fatalf("%v: exit %d:\n%s", args, r.code, r.stderr)
		}
		if got, err := os.ReadFile(filepath.Join(out, "0002_en.alto.xml")); err != nil || !bytes.Equal(got, blank) {
			t.Errorf("%v: the blank page's output is not the page as it was (%v):\n%q", args, err, got)
		}
		d := readParadata(t, out)
		if st := d.Statistics; st.SuccessfullyProcessed != 2 || st.DocumentsWithoutText != 1 || len(d.Outputs) != 4 || !slices.Equal(st.WithoutText, []string{"0002"}) {
			t.Errorf("%v: statistics %+v, outputs %v", args, st, d.Outputs)
		}
		if b, _ := os.ReadFile(d.Config["failures_table"].(string)); strings.Contains(string(b), "0002") {
			t.Errorf("%v: the blank page is in the failures table:\n%s", args, b)
		}
		// The next run's metadata is read alone.
		m, _ := filepath.Glob(filepath.Join(out, "*_translator.json"))
		os.Rename(m[0], m[0]+".earlier")
	}
	// A run of blank pages alone did its work: exit 0, said in a warning
	// (exit 3 failed a shard holding only a book's endpapers on every
	// retry, while the service answered such a book 200).
	only := t.TempDir()
	r := runCLI(t, newEnv(api), filepath.Join(dir, "0002.alto.xml"), "-o", only, "-src", "cs", "--vocabulary", "")
	if r.code != exitOK || !strings.Contains(r.stderr, "none of the 1 documents holds text to translate") {
		t.Errorf("a run of a blank page alone: exit %d, want %d with a warning:\n%s", r.code, exitOK, r.stderr)
	}
	// Nothing translated, no component counted: the licence UNKNOWN is in
	// the run metadata, not a warning ending the log.
	if strings.Contains(r.stderr, "licence:") || readParadata(t, only).License != "UNKNOWN" {
		t.Errorf("a run that translated nothing warns of its licence, or its metadata lacks UNKNOWN:\n%s", r.stderr)
	}
}

// TestLemmatiserOutage: with the lemmatiser answering 503, the 79-page run
// calls it a few times, warns once, carries on with phrase protection,
// records the open circuit in the run metadata and exits 75 (incomplete:
// the document is written but not recorded, so --resume redoes it).
func TestLemmatiserOutage(t *testing.T) {
	var hits atomic.Int32
	down := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		http.Error(w, "down", http.StatusServiceUnavailable)
	}))
	defer down.Close()
	api := startAPI(t, translatortest.Config{})
	e := newEnv(api)
	e["LEMMATIZER_URL"] = down.URL
	e["LEMMATIZER_MAX_RETRIES"] = "1"
	e["LEMMATIZER_BACKOFF_BASE_S"] = "0.001"
	out := t.TempDir()
	r := runCLI(t, e, testenv.Path(t, sampleALTO), "-o", out, "-src", "cs", "--fast-align",
		"--vocabulary", testenv.Path(t, "vocabulary.csv"))
	if r.code != exitIncomplete {
		t.Fatalf("exit %d, want %d:\n%s", r.code, exitIncomplete, r.stderr)
	}
	// Each call is tried twice (one retry); at most the pages in flight
	// when the circuit opened add theirs.
	if n := hits.Load(); n > 2*(2+4) {
		t.Errorf("lemmatiser called %d times", n)
	}
	if n := strings.Count(r.stderr, "not called again in this run"); n != 1 {
		t.Errorf("%d circuit warnings:\n%s", n, r.stderr)
	}
	d := readParadata(t, out)
	if c, _ := d.Config["lemmatizer_circuit"].(string); !strings.HasPrefix(c, "open") {
		t.Errorf("lemmatizer_circuit %q", c)
	}
	if d.Config["vocabulary_protected_terms_total"].(float64) == 0 {
		t.Error("phrases not protected during the outage")
	}
}

// TestBadEnvironmentIsUsage: bad values of the variables the run reads
// are usage errors (exit 1), found before any work.
func TestBadEnvironmentIsUsage(t *testing.T) {
	record := testenv.Path(t, "records/C-9107617A.xml")
	for k, v := range map[string]string{"LEMMATIZER_URL": "ftp://x", "LEMMATIZER_MAX_RETRIES": "many", "MTAPI_MAX_RETRIES": "-x", "LLM_MAX_GLOSSARY_TERMS": "lots"} {
		t.Run(k, func(t *testing.T) {
			api := startAPI(t, translatortest.Config{})
			e := newEnv(api)
			e[k] = v
			r := runCLI(t, e, record, "-o", t.TempDir(), "--xpaths", fieldsFile)
			if r.code != exitUsage || !strings.Contains(r.stderr, k) {
				t.Errorf("exit %d, want %d naming %s:\n%s", r.code, exitUsage, k, r.stderr)
			}
			if api.Posts.Load() != 0 {
				t.Error("translated despite the bad environment")
			}
		})
	}
}

// TestSmallerItems: ISO 639-3 codes as the spec maps them, field lists
// with the prefixes a document declares, and licence warnings in the log.
func TestSmallerItems(t *testing.T) {
	record := testenv.Path(t, "records/C-9107617A.xml")
	t.Run("-src ces", func(t *testing.T) {
		api := startAPI(t, translatortest.Config{})
		out := t.TempDir()
		r := runCLI(t, newEnv(api), record, "-src", "ces", "-tgt", "eng", "-o", out, "--xpaths", fieldsFile, "--vocabulary", "")
		if r.code != exitOK {
			t.Fatalf("exit %d:\n%s", r.code, r.stderr)
		}
		d := readParadata(t, out)
		if d.Config["source_lang"] != "cs" || d.Config["target_lang"] != "en" {
			t.Errorf("languages %v -> %v", d.Config["source_lang"], d.Config["target_lang"])
		}
		if m, _ := filepath.Glob(filepath.Join(out, "*_en.xml")); len(m) != 1 {
			t.Errorf("outputs %v", m)
		}
	})
	t.Run("--xpaths with dc:", func(t *testing.T) {
		api := startAPI(t, translatortest.Config{})
		out, dir := t.TempDir(), t.TempDir()
		xp := filepath.Join(dir, "dc.txt")
		writeFile(t, xp, []byte("//dc:title\n"))
		r := runCLI(t, newEnv(api), filepath.Join(realWorldDir, "oai_dc_getrecord.xml"), "-src", "de", "-o", out, "--xpaths", xp, "--vocabulary", "")
		if r.code != exitOK {
			t.Fatalf("exit %d:\n%s", r.code, r.stderr)
		}
		got, _ := os.ReadFile(filepath.Join(out, "oai_dc_getrecord_en.xml"))
		if !strings.Contains(string(got), "<dc:title>SAMPLE TITLE</dc:title>") {
			t.Errorf("dc:title not translated:\n%s", got)
		}
		writeFile(t, xp, []byte("//mods:title\n"))
		r = runCLI(t, newEnv(api), filepath.Join(realWorldDir, "oai_dc_getrecord.xml"), "-src", "de", "-o", t.TempDir(), "--xpaths", xp, "--vocabulary", "")
		if r.code != exitFailure || !strings.Contains(r.stderr, `prefix \"mods\"`) {
			t.Errorf("undeclared prefix: exit %d:\n%s", r.code, r.stderr)
		}
	})
	t.Run("licence warnings in the log", func(t *testing.T) {
		api := startAPI(t, translatortest.Config{})
		cfg, _ := os.ReadFile(paraConfig)
		i := strings.Index(string(cfg), "[mtapi_engine]")
		j := strings.Index(string(cfg)[i+1:], "\n[") + i + 1
		e := newEnv(api)
		e["TRANSLATE_PARA_CONFIG"] = filepath.Join(t.TempDir(), "para_config.txt")
		writeFile(t, e["TRANSLATE_PARA_CONFIG"], append(cfg[:i:i], cfg[j:]...))
		r := runCLI(t, e, record, "-src", "cs", "-o", t.TempDir(), "--xpaths", fieldsFile, "--vocabulary", "")
		if r.code != exitOK || !strings.Contains(r.stderr, `licence: component \"mtapi_engine\" is not declared`) {
			t.Errorf("exit %d; log lacks the licence warning:\n%s", r.code, r.stderr)
		}
	})
}

// TestNoOverwrite: two inputs that would write the same file keep the
// first one's output; the second is skipped with the reason. In a
// directory, doc.xml and doc.alto.xml share doc_log.csv; in a URL list, two
// URLs with the same last segment share one download file.
func TestNoOverwrite(t *testing.T) {
	a, _ := os.ReadFile(testenv.Path(t, "records/C-9107617A.xml"))
	b, _ := os.ReadFile(testenv.Path(t, "records/C-9100725A.xml"))
	api := startAPI(t, translatortest.Config{})

	in, out := t.TempDir(), t.TempDir()
	writeFile(t, filepath.Join(in, "doc.alto.xml"), a)
	writeFile(t, filepath.Join(in, "doc.xml"), b)
	r := runCLI(t, newEnv(api), in, "-o", out, "--formats", "xml", "--xpaths", fieldsFile, "--vocabulary", "")
	if r.code != exitOK {
		t.Fatalf("exit %d:\n%s", r.code, r.stderr)
	}
	d := readParadata(t, out)
	if d.Statistics.SuccessfullyProcessed != 1 || len(d.SkippedFilesDetail) != 1 ||
		!strings.Contains(d.SkippedFilesDetail[0].Reason, "doc_log.csv") {
		t.Errorf("statistics %+v skipped %+v", d.Statistics, d.SkippedFilesDetail)
	}

	files := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/one/rec.xml":
			w.Write(a)
		case "/two/rec.xml":
			w.Write(b)
		default:
			http.NotFound(w, r)
		}
	}))
	defer files.Close()
	list := filepath.Join(t.TempDir(), "urls.txt")
	writeFile(t, list, []byte(files.URL+"/one/rec.xml\n"+files.URL+"/two/rec.xml\n"))
	out, dl := t.TempDir(), t.TempDir()
	r = runCLI(t, newEnv(api), list, "-o", out, "--download-dir", dl, "--xpaths", fieldsFile, "--vocabulary", "")
	if r.code != exitOK {
		t.Fatalf("exit %d:\n%s", r.code, r.stderr)
	}
	if got, _ := os.ReadFile(filepath.Join(dl, "rec.xml")); !bytes.Equal(got, a) {
		t.Error("the second URL's download overwrote the first")
	}
	d = readParadata(t, out)
	if d.Statistics.SuccessfullyProcessed != 1 || len(d.SkippedFilesDetail) != 1 ||
		d.SkippedFilesDetail[0].File != files.URL+"/two/rec.xml" {
		t.Errorf("statistics %+v skipped %+v", d.Statistics, d.SkippedFilesDetail)
	}
}

// TestDirectoryTermsPerDocument: the per-document vocabulary counts of two
// folders' documents of one name are kept apart (book1/x, book2/x).
func TestDirectoryTermsPerDocument(t *testing.T) {
	a, _ := os.ReadFile(testenv.Path(t, "records/C-9107617A.xml"))
	in, out := t.TempDir(), t.TempDir()
	writeFile(t, filepath.Join(in, "book1", "x.xml"), a)
	writeFile(t, filepath.Join(in, "book2", "x.xml"), a)
	lem := lemmatizertest.New(lemmatizertest.CzechLexicon, "czech-pdt-ud-2.15-241121")
	defer lem.Close()
	api := startAPI(t, translatortest.Config{})
	e := newEnv(api)
	e["LEMMATIZER_URL"] = lem.URL
	r := runCLI(t, e, in, "-o", out, "--formats", "xml", "--xpaths", fieldsFile, "--vocabulary", testenv.Path(t, "vocabulary.csv"))
	if r.code != exitOK {
		t.Fatalf("exit %d:\n%s", r.code, r.stderr)
	}
	d := readParadata(t, out)
	prot, _ := d.Config["vocabulary_protected_terms"].(map[string]any)
	if _, ok := prot["book1/x"]; !ok || len(prot) != 2 {
		t.Errorf("protected terms per document %v, want book1/x and book2/x", prot)
	}
	if tm := d.Statistics.Terminology; tm == nil || len(tm.Documents) != 2 || tm.Documents["book2/x"].Expected == 0 {
		t.Errorf("terminology %+v, want book1/x and book2/x", tm)
	}
}

// TestNoInputGiven: a run without an input says where the path it looked
// for came from and how to give one (it said only "stat ...: no such file").
func TestNoInputGiven(t *testing.T) {
	api := startAPI(t, translatortest.Config{})
	r := runCLI(t, newEnv(api), "-o", t.TempDir(), "--vocabulary", "")
	if r.code != exitNoInput || !strings.Contains(r.stderr, `"input_from"`) || !strings.Contains(r.stderr, "give what to translate as the first argument") {
		t.Errorf("exit %d, want %d with where the input came from and a hint:\n%s", r.code, exitNoInput, r.stderr)
	}
}
