package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"archivekit/internal/translate/alto"
	"archivekit/internal/translate/translator/translatortest"
	"archivekit/internal/translate/xmlsplice"
)

// realWorld is the corpus of public files in testdata/realworld (sources and
// licences in its README) with the exit code each must give and, for an
// English file, the language it is translated into.
var realWorld = []struct {
	file string
	exit int
	why  string
	tgt  string // target language; "" is English
}{
	{"abbyy11_v2_bom_crlf.alto.xml", exitOK, "ABBYY FineReader 11, ALTO v2, BOM, CRLF", ""},
	{"abbyy11_v2_bom.alto.xml", exitOK, "ABBYY FineReader 11, ALTO v2, BOM", ""},
	{"abbyy11_v2_mannheim.alto.xml", exitOK, "ABBYY FineReader 11, ALTO v2, French, HYP + SUBS_CONTENT", ""},
	{"tesseract303_v2_wetzel.alto.xml", exitOK, "Tesseract 3.03, ALTO v2", ""},
	{"tesseract41rc1_v3.alto.xml", exitOK, "Tesseract 4.1.0-rc1, ALTO v3", ""},
	{"v3_minimal.alto.xml", exitOK, "ALTO v3, word confidences", ""},
	{"tesseract41rc4_v3_lorem.alto.xml", exitFailure, "Tesseract 4.1.0-rc4, ALTO v3, lorem ipsum: Latin, unsupported", ""},
	{"goobi_mets.xml", exitFailure, "METS (Goobi): read as a book (issue 28); its one page's three text files are not in the corpus: each a failure naming it", ""},
	{"tei_bare.xml", exitFailure, "TEI header: no field of the list", ""},
	{"oai_dc_getrecord.xml", exitFailure, "OAI-PMH oai_dc record: no field of the list", ""},
	{"iso-8859-1.xml", exitFailure, "ISO-8859-1: decoded, no field of the list", ""},
	{"utf-16le-bom.xml", exitFailure, "UTF-16LE with BOM: decoded, no field of the list", ""},
	{"docworks67_v1-4_europeana.alto.xml", exitOK, "CCS docWorks 6.7 (Europeana Newspapers, BnF), ALTO 1.4 without namespace, French, HypPart1/HYP/HypPart2", ""},
	{"ocrd_v4-1_ulb-neue-friedens.alto.xml", exitOK, "OCR-D (ocrd-tesserocr-recognize, PAGE to ALTO), ALTO 4.1, German, empty SP", ""},
	{"tesseract541_v3_ulb-neue-friedens.alto.xml", exitOK, "Tesseract 5.4.1, ALTO v3, German title page, Illustration", ""},
	{"ocrd_v4-1_ulb-737434_latin.alto.xml", exitOK, "OCR-D, ALTO 4.1, Shape/Polygon on every block, line and String, no SP, one line of XML; Latin, its noisy blocks detected as other languages", ""},
	{"../../internal/translate/alto/testdata/real/escriptorium_hebrew_bsb00084914-00007.alto.xml", exitOK, "eScriptorium, ALTO 4.x, Hebrew, TAGREFS, LANG on TextLine, Shape/Polygon on blocks and lines, one String a line", ""},
}

const realWorldDir = "../../testdata/realworld"

// hyphenMarks are the characters that may end the first part of a
// hyphenated word (the translator's own list: ASCII hyphen, soft hyphen,
// not sign, Unicode hyphen, Fraktur double hyphens "⸗" and "⹀", and "=").
const hyphenMarks = "-\u00ad\u00ac\u2010\u2e17\u2e40="

// stringWords returns the words of the String CONTENT values of an ALTO
// document in any encoding, and its possible hyphenations (HYP elements,
// HypPart1 Strings and Strings ending in a hyphen mark).
func stringWords(t *testing.T, src []byte) (words, hyphens int) {
	t.Helper()
	text, _, err := xmlsplice.Decode(src)
	if err != nil {
		t.Fatal(err)
	}
	doc, err := xmlsplice.Parse(text)
	if err != nil {
		t.Fatal(err)
	}
	doc.Root.Walk(func(n *xmlsplice.Node) bool {
		switch n.Name.Local {
		case "String":
			if a, ok := n.Attr("", "CONTENT"); ok {
				words += len(alto.Fields(a.Value))
				if v := []rune(strings.TrimSpace(a.Value)); len(v) > 2 && strings.ContainsRune(hyphenMarks, v[len(v)-1]) {
					hyphens++ // possibly an unmarked hyphenation ("Despo-" / "tism", "Chur⸗" / "Fürſten")
				}
			}
			if a, ok := n.Attr("", "SUBS_TYPE"); ok && a.Value == "HypPart1" {
				hyphens++
			}
		case "HYP":
			hyphens++
		}
		return true
	})
	return words, hyphens
}

// realWorldModes are the runs each translatable file of the corpus gets:
// every output mode, with and without --fast-align.
var realWorldModes = []struct {
	mode string
	fast bool
}{{"replace", false}, {"replace", true}, {"append", false}, {"append", true}, {"alternative", false}, {"alternative", true}}

// blockLangRE matches the language attribute of a TextBlock start tag
// (LANG, or language in ALTO 1.x) once MaskTranslatable has emptied its
// value.
var blockLangRE = regexp.MustCompile(`(<(?:[\w.-]+:)?TextBlock\b[^>]*?)\s+(?:LANG|language)=""`)

// keptOutsideText reports whether got, the translation of src in the
// given output mode, keeps every byte outside what that mode may change:
// in replace mode, all but what alto.MaskTranslatable masks; in append
// mode, the same once the inserted copies (TextBlocks whose language is
// tgt and whose IDs end in _tgt) are removed and the language attribute of
// the blocks they follow is set aside; in alternative mode, all of it once alto.RemoveAlternatives
// has removed the ALTERNATIVEs it added. The byte-order mark and the count
// of CRLF line ends are kept in every mode.
func keptOutsideText(t *testing.T, mode, tgt string, src, got []byte) bool {
	t.Helper()
	a, _, err := xmlsplice.Decode(src)
	if err != nil {
		t.Fatal(err)
	}
	b, _, err := xmlsplice.Decode(got)
	if err != nil {
		t.Fatal(err)
	}
	switch mode {
	case "alternative":
		back, err := alto.RemoveAlternatives(got)
		return err == nil && bytes.Equal(back, src)
	case "append":
		copies := 0
		b, err = xmlsplice.RemoveElements(b, func(n *xmlsplice.Node) bool {
			lang, ok := n.Attr("", "LANG")
			if !ok {
				lang, _ = n.Attr("", "language") // ALTO 1.x
			}
			id, _ := n.Attr("", "ID")
			copied := n.Name.Local == "TextBlock" && lang.Value == tgt && strings.HasSuffix(id.Value, "_"+tgt)
			if copied {
				copies++
			}
			return copied
		})
		if err != nil || copies == 0 {
			t.Errorf("append: %d copies found (%v)", copies, err)
			return false
		}
		if !bytes.Equal(blockLangRE.ReplaceAll(alto.MaskTranslatable(a), []byte("$1")), blockLangRE.ReplaceAll(alto.MaskTranslatable(b), []byte("$1"))) {
			return false
		}
		got = append([]byte(nil), b...) // for the BOM and line-end checks
		if bytes.HasPrefix(src, []byte("\ufeff")) {
			got = append([]byte("\ufeff"), got...)
		}
	default:
		if !bytes.Equal(alto.MaskTranslatable(a), alto.MaskTranslatable(b)) {
			return false
		}
	}
	return bytes.HasPrefix(got, []byte("\ufeff")) == bytes.HasPrefix(src, []byte("\ufeff")) &&
		bytes.Count(got, []byte("\r\n")) == bytes.Count(src, []byte("\r\n"))
}

// TestRealWorldCorpus translates every file of the corpus with a local
// stand-in of the MT API and reports, per file, the exit code, whether
// every byte outside the translated text is kept (in each output mode,
// with and without --fast-align), the String words before and after a
// replace run (a hyphenated pair joined for the MT is one word fewer) and
// the backend calls per page. Run: go test -v -run RealWorldCorpus ./cmd/translate
func TestRealWorldCorpus(t *testing.T) {
	if _, err := os.Stat(realWorldDir); err != nil {
		t.Fatal(err)
	}
	// The stand-in offers the built-in pairs of the hosted API (spec 10.1),
	// Hebrew into English and English into German for the English files.
	api := startAPI(t, translatortest.Config{Pairs: []string{"cs-en", "sk-en", "pl-en", "de-en", "uk-en", "fr-en", "he-en", "en-de"}})
	t.Logf("| file | what | exit | bytes outside text kept (replace, append, alternative; each with and without --fast-align) | String words in → out (hyphen joins) | calls/page |")
	t.Logf("|---|---|---|---|---|---|")
	for _, c := range realWorld {
		in := filepath.Join(realWorldDir, c.file)
		src, err := os.ReadFile(in)
		if err != nil {
			t.Fatal(err)
		}
		tgt := c.tgt
		if tgt == "" {
			tgt = "en"
		}
		if c.exit != exitOK {
			out := t.TempDir()
			r := runCLI(t, newEnv(api), in, "-o", out, "-tgt", tgt, "--xpaths", fieldsFile, "--vocabulary", "")
			if r.code != c.exit {
				t.Errorf("%s: exit %d, want %d:\n%s", c.file, r.code, c.exit, r.stderr)
				continue
			}
			want := "nothing translated"
			if strings.HasSuffix(c.file, "_mets.xml") {
				// A METS file is a book since issue 28; the text files
				// it names that are missing are failures naming them.
				want = "cannot read: stat "
			}
			if !strings.Contains(r.stderr, want) {
				t.Errorf("%s: exit %d without saying why:\n%s", c.file, r.code, r.stderr)
			}
			t.Logf("| %s | %s | %d | no output | – | – |", c.file, c.why, r.code)
			continue
		}
		var kept []string
		var row string
		for _, m := range realWorldModes {
			out := t.TempDir()
			args := []string{in, "-o", out, "-tgt", tgt, "--xpaths", fieldsFile, "--vocabulary", "", "--output-mode", m.mode}
			if m.fast {
				args = append(args, "--fast-align")
			}
			r := runCLI(t, newEnv(api), args...)
			if r.code != exitOK {
				t.Errorf("%s %s fast=%v: exit %d, want %d:\n%s", c.file, m.mode, m.fast, r.code, exitOK, r.stderr)
				kept = append(kept, "exit "+fmt.Sprint(r.code))
				continue
			}
			outs, _ := filepath.Glob(filepath.Join(out, "*_"+tgt+".alto.xml"))
			if len(outs) != 1 {
				t.Fatalf("%s: outputs %v", c.file, outs)
			}
			got, _ := os.ReadFile(outs[0])
			ok := keptOutsideText(t, m.mode, tgt, src, got)
			if !ok {
				t.Errorf("%s %s fast=%v: bytes outside the translated text changed", c.file, m.mode, m.fast)
			}
			kept = append(kept, fmt.Sprint(ok))
			d := readParadata(t, out)
			st := d.Statistics
			if st.UnitsTranslated == 0 || st.Pages == 0 {
				t.Errorf("%s %s fast=%v: statistics %+v", c.file, m.mode, m.fast, st)
			}
			if m.mode != "replace" || m.fast {
				continue
			}
			wIn, hyph := stringWords(t, src)
			wOut, _ := stringWords(t, got)
			// The stand-in answers word for word: only joined hyphenated
			// pairs change the count, by one each.
			if joins := wIn - wOut; joins < 0 || joins > hyph {
				t.Errorf("%s: %d String words in, %d out, %d hyphenation marks: tokens lost or invented", c.file, wIn, wOut, hyph)
			}
			row = fmt.Sprintf("%d → %d (%d) | %.1f", wIn, wOut, wIn-wOut, float64(st.BackendCalls)/float64(max(st.Pages, 1)))
		}
		t.Logf("| %s | %s | %d | %s | %s |", c.file, c.why, exitOK, strings.Join(kept, " "), row)
	}
}
