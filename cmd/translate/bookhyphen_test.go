package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"archivekit/internal/ledger"
	"archivekit/internal/shard"
	"archivekit/internal/translate/alto"
	"archivekit/internal/translate/translator/translatortest"
)

// abbyyPage is a page of a book as ABBYY FineReader Engine 11 writes it,
// one ALTO 2 file a page (the attributes of testdata/realworld's
// abbyy11_v2_bom.alto.xml): blocks holds its TextBlocks.
func abbyyPage(n int, blocks string) []byte {
	return []byte(fmt.Sprintf(`<?xml version="1.0" encoding="UTF-8" standalone="yes"?>
<alto xmlns="http://www.loc.gov/standards/alto/ns-v2#" xmlns:xlink="http://www.w3.org/1999/xlink">
  <Description>
    <MeasurementUnit>pixel</MeasurementUnit>
    <OCRProcessing ID="OCR_0"><ocrProcessingStep><processingSoftware><softwareCreator>ABBYY</softwareCreator><softwareName>ABBYY FineReader Engine</softwareName><softwareVersion>11</softwareVersion></processingSoftware></ocrProcessingStep></OCRProcessing>
  </Description>
  <Layout>
    <Page ID="Page%[1]d" PHYSICAL_IMG_NR="%[1]d" HEIGHT="3629" WIDTH="2217">
      <PrintSpace HEIGHT="3344" WIDTH="2217" VPOS="285" HPOS="0">
%[2]s      </PrintSpace>
    </Page>
  </Layout>
</alto>
`, n, blocks))
}

// The foot of page 12 ("... der Aus-", then the page number "- 12 -")
// and the head of page 13 (the page number "13", as every page of the
// shared sample begins, then "grabung des alten Brunnens ..."), as ABBYY
// marks a hyphenated word: HypPart1 with a HYP, then HypPart2, both with
// the whole word in SUBS_CONTENT. Page 14 follows without a hyphen; it
// begins in lower case, as a second part would.
var (
	hyphPage12 = abbyyPage(12, `        <TextBlock ID="P12_B1" HEIGHT="110" WIDTH="1101" VPOS="1148" HPOS="361">
          <TextLine HEIGHT="55" WIDTH="915" VPOS="1154" HPOS="530">
            <String ID="P12_S1" WC="0.92" CONTENT="Die" HEIGHT="48" WIDTH="60" VPOS="1161" HPOS="530"/>
            <SP WIDTH="15" VPOS="1161" HPOS="591"/>
            <String ID="P12_S2" WC="0.88" CONTENT="Arbeiten" HEIGHT="50" WIDTH="153" VPOS="1159" HPOS="607"/>
            <SP WIDTH="15" VPOS="1159" HPOS="761"/>
            <String ID="P12_S3" WC="0.90" CONTENT="galten" HEIGHT="38" WIDTH="110" VPOS="1159" HPOS="777"/>
            <SP WIDTH="15" VPOS="1159" HPOS="888"/>
            <String ID="P12_S4" WC="0.91" CONTENT="der" HEIGHT="38" WIDTH="57" VPOS="1155" HPOS="904"/>
            <SP WIDTH="13" VPOS="1155" HPOS="962"/>
            <String ID="P12_S5" WC="0.73" CONTENT="Aus" HEIGHT="41" WIDTH="70" VPOS="1154" HPOS="976" SUBS_TYPE="HypPart1" SUBS_CONTENT="Ausgrabung"/>
            <HYP CONTENT="&#173;"/>
          </TextLine>
        </TextBlock>
        <TextBlock ID="P12_B2" HEIGHT="40" WIDTH="120" VPOS="3500" HPOS="1050">
          <TextLine HEIGHT="40" WIDTH="120" VPOS="3500" HPOS="1050">
            <String ID="P12_N1" WC="0.95" CONTENT="-" HEIGHT="8" WIDTH="20" VPOS="3520" HPOS="1050"/>
            <SP WIDTH="15" VPOS="3520" HPOS="1071"/>
            <String ID="P12_N2" WC="0.97" CONTENT="12" HEIGHT="38" WIDTH="40" VPOS="3500" HPOS="1087"/>
            <SP WIDTH="15" VPOS="3520" HPOS="1128"/>
            <String ID="P12_N3" WC="0.95" CONTENT="-" HEIGHT="8" WIDTH="20" VPOS="3520" HPOS="1144"/>
          </TextLine>
        </TextBlock>
`)
	hyphPage13 = abbyyPage(13, `        <TextBlock ID="P13_B0" HEIGHT="40" WIDTH="60" VPOS="200" HPOS="1080">
          <TextLine HEIGHT="40" WIDTH="60" VPOS="200" HPOS="1080">
            <String ID="P13_N" WC="0.97" CONTENT="13" HEIGHT="38" WIDTH="40" VPOS="200" HPOS="1080"/>
          </TextLine>
        </TextBlock>
        <TextBlock ID="P13_B1" HEIGHT="110" WIDTH="1101" VPOS="300" HPOS="361">
          <TextLine HEIGHT="56" WIDTH="900" VPOS="309" HPOS="368">
            <String ID="P13_S1" WC="0.63" CONTENT="grabung" HEIGHT="49" WIDTH="150" VPOS="316" HPOS="368" SUBS_TYPE="HypPart2" SUBS_CONTENT="Ausgrabung"/>
            <SP WIDTH="16" VPOS="316" HPOS="519"/>
            <String ID="P13_S2" WC="0.87" CONTENT="des" HEIGHT="38" WIDTH="57" VPOS="316" HPOS="536"/>
            <SP WIDTH="16" VPOS="316" HPOS="594"/>
            <String ID="P13_S3" WC="0.85" CONTENT="alten" HEIGHT="38" WIDTH="90" VPOS="316" HPOS="611"/>
            <SP WIDTH="16" VPOS="316" HPOS="702"/>
            <String ID="P13_S4" WC="0.86" CONTENT="Brunnens." HEIGHT="38" WIDTH="170" VPOS="316" HPOS="719"/>
          </TextLine>
        </TextBlock>
`)
	hyphPage14 = abbyyPage(14, `        <TextBlock ID="P14_B1" HEIGHT="110" WIDTH="1101" VPOS="300" HPOS="361">
          <TextLine HEIGHT="56" WIDTH="900" VPOS="309" HPOS="368">
            <String ID="P14_S1" WC="0.88" CONTENT="und" HEIGHT="49" WIDTH="60" VPOS="316" HPOS="368"/>
            <SP WIDTH="16" VPOS="316" HPOS="429"/>
            <String ID="P14_S2" WC="0.87" CONTENT="dauerte" HEIGHT="38" WIDTH="130" VPOS="316" HPOS="446"/>
            <SP WIDTH="16" VPOS="316" HPOS="577"/>
            <String ID="P14_S3" WC="0.85" CONTENT="Wochen." HEIGHT="38" WIDTH="140" VPOS="316" HPOS="594"/>
          </TextLine>
        </TextBlock>
`)
)

// hyphenBook writes a local METS book of the three pages (ocr/0001.xml
// to ocr/0003.xml) and returns the METS file's path.
func hyphenBook(t *testing.T) string {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "mets.xml"), []byte(altoMETS(3)))
	for k, p := range [][]byte{hyphPage12, hyphPage13, hyphPage14} {
		writeFile(t, filepath.Join(dir, "ocr", fmt.Sprintf("%04d.xml", k+1)), p)
	}
	return filepath.Join(dir, "mets.xml")
}

// stringContent returns the CONTENT of the String with the given ID in an
// output ("<missing>" when there is none).
func stringContent(doc []byte, id string) string {
	m := regexp.MustCompile(`<String ID="` + id + `"[^>]* CONTENT="([^"]*)"`).FindSubmatch(doc)
	if m == nil {
		return "<missing>"
	}
	return string(m[1])
}

// checkJoined checks the outputs of the first two pages under out: the
// whole word's translation where "Aus" was and "grabung" emptied
// (joined), or each part translated as its own word.
func checkJoined(t *testing.T, out string, joined bool) {
	t.Helper()
	p12 := readOrFatal(t, filepath.Join(out, "ocr", "0001_en.xml"))
	p13 := readOrFatal(t, filepath.Join(out, "ocr", "0002_en.xml"))
	want12, want13 := translatortest.Translate("Aus"), translatortest.Translate("grabung")
	if joined {
		want12, want13 = translatortest.Translate("Ausgrabung"), ""
	}
	if got := stringContent(p12, "P12_S5"); got != want12 {
		t.Errorf("page 12's first part: CONTENT=%q, want %q", got, want12)
	}
	if got := stringContent(p13, "P13_S1"); got != want13 {
		t.Errorf("page 13's second part: CONTENT=%q, want %q", got, want13)
	}
	if got := stringContent(p13, "P13_S4"); got != translatortest.Translate("Brunnens.") {
		t.Errorf("page 13's block was not translated: %q", got)
	}
	if stringContent(p12, "P12_N1") != "-" || stringContent(p12, "P12_N2") != "12" || stringContent(p13, "P13_N") != "13" {
		t.Errorf("a page number changed")
	}
	for src, got := range map[string][]byte{string(hyphPage12): p12, string(hyphPage13): p13} {
		if !bytes.Equal(alto.MaskTranslatable(got), alto.MaskTranslatable([]byte(src))) {
			t.Errorf("bytes outside the translated text changed:\n%s", got)
		}
	}
}

// sentParts reports whether the MT received the word whole and whether
// it received its second part alone.
func sentParts(inputs []string) (whole, part bool) {
	for _, in := range inputs {
		for _, line := range strings.Split(in, "\n") {
			whole = whole || strings.Contains(line, "Ausgrabung")
			part = part || strings.HasPrefix(line, "grabung")
		}
	}
	return whole, part
}

// TestBookHyphenAcrossFiles: in a METS book of one ABBYY ALTO file a page,
// the word hyphenated at the foot of page 12 ("Aus-") and ended on page
// 13 ("grabung") reaches the MT whole, once; its translation is written
// where "Aus" was and page 13's "grabung" String is emptied (its box
// stays), every other byte kept. The ledger records the join. In append
// mode the originals stay and the copies hold the same. Before, the MT
// got "Aus" and "grabung des alten Brunnens." apart.
func TestBookHyphenAcrossFiles(t *testing.T) {
	mets := hyphenBook(t)
	api := startAPI(t, translatortest.Config{})
	out := t.TempDir()
	r := runCLI(t, newEnv(api), mets, "-o", out, "-src", "de", "--vocabulary", "")
	if r.code != exitOK {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	if whole, part := sentParts(api.Inputs()); !whole || part {
		t.Errorf("the MT got the whole word: %v, its second part alone: %v:\n%s", whole, part, strings.Join(api.Inputs(), "\n"))
	}
	checkJoined(t, out, true)
	led := ledgerData(t, out)
	if d := led["ocr/0001.xml"]; d.HyphenNext == nil || *d.HyphenNext != (alto.Carried{Word: "grabung", Lang: "de", Block: 2}) {
		t.Errorf("ledger of page 12: %+v", d)
	}
	if d := led["ocr/0002.xml"]; d.HyphenPrev != "grabung" {
		t.Errorf("ledger of page 13: %+v", d)
	}

	app := t.TempDir()
	if r := runCLI(t, newEnv(api), mets, "-o", app, "-src", "de", "--vocabulary", "", "--output-mode", "append"); r.code != exitOK {
		t.Fatalf("append: exit %d: %s", r.code, r.stderr)
	}
	p12 := readOrFatal(t, filepath.Join(app, "ocr", "0001_en.xml"))
	p13 := readOrFatal(t, filepath.Join(app, "ocr", "0002_en.xml"))
	if !bytes.Contains(p12, []byte(`CONTENT="Aus" HEIGHT="41" WIDTH="70" VPOS="1154" HPOS="976" SUBS_TYPE="HypPart1"`)) ||
		!bytes.Contains(p12, []byte(`CONTENT="`+translatortest.Translate("Ausgrabung")+`" HEIGHT="41" WIDTH="70" VPOS="1154" HPOS="976"/>`)) {
		t.Errorf("append: page 12 lacks the original or the whole word's translation:\n%s", p12)
	}
	if !bytes.Contains(p13, []byte(`CONTENT="grabung" HEIGHT="49"`)) || !bytes.Contains(p13, []byte(`CONTENT="" HEIGHT="49" WIDTH="150" VPOS="316" HPOS="368"/>`)) {
		t.Errorf("append: page 13 lacks the original or the copy's emptied part:\n%s", p13)
	}
}

// ledgerData reads the ledger entries' data under out, by item.
func ledgerData(t *testing.T, out string) map[string]itemData {
	t.Helper()
	files, _ := filepath.Glob(filepath.Join(out, LedgerFolder, "*", "*.jsonl"))
	got := map[string]itemData{}
	for _, f := range files {
		for _, line := range bytes.Split(readOrFatal(t, f), []byte("\n")) {
			var e ledger.Entry
			var d itemData
			if json.Unmarshal(line, &e) != nil || e.State != ledger.Done || json.Unmarshal(e.Data, &d) != nil {
				continue
			}
			got[filepath.ToSlash(e.Item)[strings.LastIndex(filepath.ToSlash(e.Item), "ocr/"):]] = d
		}
	}
	return got
}

// TestBookHyphenAcrossFilesResume: a run stopped after page 12 (which
// wrote the whole word) and resumed empties page 13's part without
// sending it (the ledger says page 12 holds the word); a resume that
// translates page 12 again (its output removed) translates page 13 again
// too, whose kept output had lost its part to page 12's. Both give the
// outputs of one clean run.
func TestBookHyphenAcrossFilesResume(t *testing.T) {
	mets := hyphenBook(t)
	api := startAPI(t, translatortest.Config{})
	args := func(out string, more ...string) []string {
		return append([]string{mets, "-o", out, "-src", "de", "--vocabulary", "", "--fast-align"}, more...)
	}
	clean := t.TempDir()
	if r := runCLI(t, newEnv(api), args(clean)...); r.code != exitOK {
		t.Fatalf("clean run: exit %d: %s", r.code, r.stderr)
	}
	want := outputs(t, clean)
	same := func(out string) {
		t.Helper()
		got := outputs(t, out)
		for k, b := range want {
			if strings.HasPrefix(k, "ocr"+string(filepath.Separator)) && strings.HasSuffix(k, ".xml") && !bytes.Equal(got[k], b) {
				t.Errorf("%s differs from the clean run's:\n%s", k, got[k])
			}
		}
	}

	out := t.TempDir()
	if code := runStoppedAfter(1, args(out), newEnv(api)); code == exitOK || fileExists(filepath.Join(out, "ocr", "0002_en.xml")) {
		t.Fatalf("the run was not stopped after page 12: exit %d", code)
	}
	before := len(api.Inputs())
	r := runCLI(t, newEnv(api), args(out, "--resume")...)
	if r.code != exitOK || translated(t, r.stderr) != 2 {
		t.Fatalf("resume: exit %d, %d translated: %s", r.code, translated(t, r.stderr), r.stderr)
	}
	if _, part := sentParts(api.Inputs()[before:]); part {
		t.Errorf("the resume sent the second part alone: %q", api.Inputs()[before:])
	}
	checkJoined(t, out, true)
	same(out)

	if err := os.Remove(filepath.Join(out, "ocr", "0001_en.xml")); err != nil {
		t.Fatal(err)
	}
	before = len(api.Inputs())
	r = runCLI(t, newEnv(api), args(out, "--resume")...)
	if r.code != exitOK || translated(t, r.stderr) != 2 {
		t.Fatalf("resume without page 12's output: exit %d, %d translated (want pages 12 and 13): %s", r.code, translated(t, r.stderr), r.stderr)
	}
	if whole, part := sentParts(api.Inputs()[before:]); !whole || part {
		t.Errorf("resume without page 12's output: whole word %v, part alone %v", whole, part)
	}
	checkJoined(t, out, true)
	same(out)
}

// TestBookHyphenAcrossFilesShards: with --shard, two pages translated by
// different shares are not joined (each translates its part: no text
// lost), and pages of one share are. With --pages, pages read one after
// the other are joined only when their METS ORDERs are consecutive (a
// selection may leave a page out between two).
func TestBookHyphenAcrossFilesShards(t *testing.T) {
	mets := hyphenBook(t)
	api := startAPI(t, translatortest.Config{})
	out := t.TempDir()
	for i := 0; i < 2; i++ {
		if r := runCLI(t, newEnv(api), mets, "-o", out, "-src", "de", "--vocabulary", "", "--fast-align", "--shard", fmt.Sprintf("%d/2", i)); r.code != exitOK {
			t.Fatalf("shard %d: exit %d: %s", i, r.code, r.stderr)
		}
	}
	s := shard.Spec{Count: 2}
	together := s.Has("ocr/0001.xml") == s.Has("ocr/0002.xml")
	if whole, part := sentParts(api.Inputs()); whole != together || part == together {
		t.Errorf("pages in one share: %v; the MT got the whole word: %v, the part alone: %v", together, whole, part)
	}
	checkJoined(t, out, together)

	for _, c := range []struct {
		pages  string
		joined bool
	}{
		{"PHYS_0001..PHYS_0003", true}, // ORDER 1 and 2: consecutive
		{"~PHYS_0002", false},          // pages 12 and 14 read one after the other
	} {
		sel := t.TempDir()
		before := len(api.Inputs())
		if r := runCLI(t, newEnv(api), mets, "-o", sel, "-src", "de", "--vocabulary", "", "--fast-align", "--pages", c.pages); r.code != exitOK {
			t.Fatalf("--pages %s: exit %d: %s", c.pages, r.code, r.stderr)
		}
		sent := strings.Join(api.Inputs()[before:], "\n")
		if strings.Contains(sent, "Ausgrabung") != c.joined || strings.Contains(sent, "Ausund") || !strings.Contains(sent, "und dauerte") {
			t.Errorf("--pages %s: the MT got:\n%s", c.pages, sent)
		}
		if c.joined {
			checkJoined(t, sel, true)
		}
	}
}

// runStoppedAfter runs translate with args, cancelled once n inputs are
// recorded, and returns its exit code.
func runStoppedAfter(n int, args []string, e env) int {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	itemHook = func(k int) {
		if k == n {
			cancel()
		}
	}
	defer func() { itemHook = nil }()
	var stdout, stderr bytes.Buffer
	return run(ctx, args, e.get, &stdout, &stderr)
}

func fileExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

// kleinDir holds the real book with running heads of the alto package's
// tests (its testdata/SOURCES.md): F. Klein 1898, one ABBYY ALTO 2 file a
// page.
const kleinDir = "../../internal/translate/alto/testdata/real/gdz-kleiuniv"

// TestBookHyphenAcrossRunningHeads: two real pages of a book as a local
// METS book, page 12 ending in "em" "-", page 13 beginning with its
// running head "Universität und technische Hochschule .", its number "13"
// beside it, and then "pfand": translate sends "empfand" once, whole, and
// empties page 13's "pfand"; the ledger names the block it took the word
// from (the third), so a run stopped after page 12 and resumed empties
// the same String without sending it. Before, the running head stopped
// the join.
func TestBookHyphenAcrossRunningHeads(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "mets.xml"), []byte(altoMETS(2)))
	for k, name := range []string{"00000014.xml", "00000015.xml"} {
		writeFile(t, filepath.Join(dir, "ocr", fmt.Sprintf("%04d.xml", k+1)), readOrFatal(t, filepath.Join(kleinDir, name)))
	}
	api := startAPI(t, translatortest.Config{})
	args := func(out string, more ...string) []string {
		return append([]string{filepath.Join(dir, "mets.xml"), "-o", out, "-src", "de", "--vocabulary", "", "--fast-align"}, more...)
	}
	emptied := []byte(`<String VPOS="246" HPOS="261" WIDTH="203" HEIGHT="80" CONTENT="" />`)
	check := func(out string, inputs []string, whole bool) {
		t.Helper()
		sent := "\n" + strings.Join(inputs, "\n")
		if strings.Count(sent, "empfand") != map[bool]int{true: 1, false: 0}[whole] || strings.Contains(sent, "\npfand") || strings.Contains(sent, " em -") {
			t.Errorf("the MT did not get \"empfand\" whole (once: %v):%s", whole, sent)
		}
		if p13 := readOrFatal(t, filepath.Join(out, "ocr", "0002_en.xml")); !bytes.Contains(p13, emptied) {
			t.Errorf("page 13's \"pfand\" was not emptied")
		}
	}
	out := t.TempDir()
	if r := runCLI(t, newEnv(api), args(out)...); r.code != exitOK {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	check(out, api.Inputs(), true)
	if d := ledgerData(t, out)["ocr/0001.xml"]; d.HyphenNext == nil || *d.HyphenNext != (alto.Carried{Word: "pfand", Lang: "de", Block: 3}) {
		t.Errorf("ledger of page 12: %+v", d.HyphenNext)
	}

	resumed := t.TempDir()
	if code := runStoppedAfter(1, args(resumed), newEnv(api)); code == exitOK || fileExists(filepath.Join(resumed, "ocr", "0002_en.xml")) {
		t.Fatalf("the run was not stopped after page 12: exit %d", code)
	}
	before := len(api.Inputs())
	if r := runCLI(t, newEnv(api), args(resumed, "--resume")...); r.code != exitOK {
		t.Fatalf("resume: exit %d: %s", r.code, r.stderr)
	}
	check(resumed, api.Inputs()[before:], false)
}
