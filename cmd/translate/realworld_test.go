package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"archivekit/internal/translate/alto"
	"archivekit/internal/translate/translator/translatortest"
	"archivekit/internal/translate/xmlsplice"
)

// realWorld is the corpus of public files in testdata/realworld (sources and
// licences in its README) with the exit code each must give.
var realWorld = []struct {
	file string
	exit int
	why  string
}{
	{"abbyy11_v2_bom_crlf.alto.xml", exitOK, "ABBYY FineReader 11, ALTO v2, BOM, CRLF"},
	{"abbyy11_v2_bom.alto.xml", exitOK, "ABBYY FineReader 11, ALTO v2, BOM"},
	{"abbyy11_v2_mannheim.alto.xml", exitOK, "ABBYY FineReader 11, ALTO v2, French, HYP + SUBS_CONTENT"},
	{"tesseract303_v2_wetzel.alto.xml", exitOK, "Tesseract 3.03, ALTO v2"},
	{"tesseract41rc1_v3.alto.xml", exitOK, "Tesseract 4.1.0-rc1, ALTO v3"},
	{"v3_minimal.alto.xml", exitOK, "ALTO v3, word confidences"},
	{"tesseract41rc4_v3_lorem.alto.xml", exitFailure, "Tesseract 4.1.0-rc4, ALTO v3, lorem ipsum: Latin, unsupported"},
	{"goobi_mets.xml", exitFailure, "METS (Goobi): read as a book (issue 28); its one page's three text files are not in the corpus: each a failure naming it"},
	{"tei_bare.xml", exitFailure, "TEI header: no field of the list"},
	{"oai_dc_getrecord.xml", exitFailure, "OAI-PMH oai_dc record: no field of the list"},
	{"iso-8859-1.xml", exitFailure, "ISO-8859-1: decoded, no field of the list"},
	{"utf-16le-bom.xml", exitFailure, "UTF-16LE with BOM: decoded, no field of the list"},
}

const realWorldDir = "../../testdata/realworld"

// stringWords returns the words of the String CONTENT values of an ALTO
// document in any encoding, and its possible hyphenations (HYP elements,
// HypPart1 Strings and Strings ending in a hyphen).
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
				if v := strings.TrimSpace(a.Value); len(v) > 2 && strings.ContainsAny(v[len(v)-1:], "-¬") {
					hyphens++ // possibly an unmarked hyphenation ("Despo-" / "tism")
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

// TestRealWorldCorpus translates every file of the corpus with a local
// stand-in of the MT API and reports, per file, the exit code, whether
// every byte outside the translated text is kept, the String words before
// and after (a hyphenated pair joined for the MT is one word fewer) and the
// backend calls per page. Run: go test -v -run RealWorldCorpus ./cmd/translate
func TestRealWorldCorpus(t *testing.T) {
	if _, err := os.Stat(realWorldDir); err != nil {
		t.Fatal(err)
	}
	// The stand-in offers the built-in pairs of the hosted API (spec 10.1).
	api := startAPI(t, translatortest.Config{Pairs: []string{"cs-en", "sk-en", "pl-en", "de-en", "uk-en", "fr-en"}})
	t.Logf("| file | what | exit | bytes outside text kept | String words in → out (hyphen joins) | calls/page |")
	t.Logf("|---|---|---|---|---|---|")
	for _, c := range realWorld {
		in := filepath.Join(realWorldDir, c.file)
		src, err := os.ReadFile(in)
		if err != nil {
			t.Fatal(err)
		}
		out := t.TempDir()
		r := runCLI(t, newEnv(api), in, "-o", out, "--xpaths", fieldsFile, "--vocabulary", "")
		if r.code != c.exit {
			t.Errorf("%s: exit %d, want %d:\n%s", c.file, r.code, c.exit, r.stderr)
			continue
		}
		if c.exit != exitOK {
			want := "nothing translated"
			if strings.HasSuffix(c.file, "_mets.xml") {
				// A METS file is a book since issue 28; the text files
				// it names that are missing are failures naming them.
				want = "cannot read: open "
			}
			if !strings.Contains(r.stderr, want) {
				t.Errorf("%s: exit %d without saying why:\n%s", c.file, r.code, r.stderr)
			}
			t.Logf("| %s | %s | %d | no output | – | – |", c.file, c.why, r.code)
			continue
		}
		outs, _ := filepath.Glob(filepath.Join(out, "*_en.alto.xml"))
		if len(outs) != 1 {
			t.Fatalf("%s: outputs %v", c.file, outs)
		}
		got, _ := os.ReadFile(outs[0])
		// Byte-faithful: the same bytes once what translation may change is
		// masked; BOM and line ends as they were.
		a, _, _ := xmlsplice.Decode(src)
		b, _, _ := xmlsplice.Decode(got)
		kept := bytes.Equal(alto.MaskTranslatable(a), alto.MaskTranslatable(b)) &&
			bytes.HasPrefix(got, []byte("\ufeff")) == bytes.HasPrefix(src, []byte("\ufeff")) &&
			bytes.Count(got, []byte("\r\n")) == bytes.Count(src, []byte("\r\n"))
		if !kept {
			t.Errorf("%s: bytes outside the translated text changed", c.file)
		}
		wIn, hyph := stringWords(t, src)
		wOut, _ := stringWords(t, got)
		// The stand-in answers word for word: only joined hyphenated pairs
		// change the count, by one each.
		if joins := wIn - wOut; joins < 0 || joins > hyph {
			t.Errorf("%s: %d String words in, %d out, %d hyphenation marks: tokens lost or invented", c.file, wIn, wOut, hyph)
		}
		d := readParadata(t, out)
		st := d.Statistics
		if st.UnitsTranslated == 0 || st.Pages == 0 {
			t.Errorf("%s: statistics %+v", c.file, st)
		}
		t.Logf("| %s | %s | %d | %v | %d → %d (%d) | %s |", c.file, c.why, r.code, kept, wIn, wOut, wIn-wOut,
			fmt.Sprintf("%.1f", float64(st.BackendCalls)/float64(max(st.Pages, 1))))
	}
}
