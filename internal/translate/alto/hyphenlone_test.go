package alto

import (
	"bytes"
	"context"
	"strings"
	"sync"
	"testing"

	"archivekit/internal/translate/langid"
)

// abbyyLoneDoc is an ABBYY FineReader Engine 11 page (ALTO 2, the String,
// SP and HYP attributes as the engine writes them: the cneud/alto-tools
// page of testdata/realworld) whose paragraph ends in a line the engine
// made a block of its own: "Holz" + HYP ends the first block, and
// "verschläge." (SUBS_TYPE="HypPart2", SUBS_CONTENT the whole word) is
// the second block's only word. first and second replace the attributes
// of the two parts (their SUBS_*).
func abbyyLoneDoc(first, second string) []byte {
	return []byte(`<?xml version="1.0" encoding="UTF-8" standalone="yes"?>
<alto xmlns="http://www.loc.gov/standards/alto/ns-v2#" xmlns:xlink="http://www.w3.org/1999/xlink">
  <Layout>
    <Page ID="Page1" PHYSICAL_IMG_NR="1" HEIGHT="3629" WIDTH="2217">
      <PrintSpace HEIGHT="3344" WIDTH="2217" VPOS="285" HPOS="0">
        <TextBlock ID="Page1_Block11" HEIGHT="110" WIDTH="1101" VPOS="1148" HPOS="361" STYLEREFS="font2">
          <TextLine HEIGHT="55" WIDTH="915" VPOS="1154" HPOS="530">
            <String WC="0.6600000262" CONTENT="1)" HEIGHT="48" WIDTH="37" VPOS="1161" HPOS="530"/>
            <SP WIDTH="15" VPOS="1161" HPOS="568"/>
            <String WC="0.7371428609" CONTENT="Abbruch" HEIGHT="50" WIDTH="153" VPOS="1159" HPOS="584"/>
            <SP WIDTH="15" VPOS="1159" HPOS="738"/>
            <String WC="0.8766666651" CONTENT="der" HEIGHT="38" WIDTH="57" VPOS="1159" HPOS="754"/>
            <SP WIDTH="15" VPOS="1159" HPOS="812"/>
            <String WC="0.7461538315" CONTENT="Scheidewände" HEIGHT="51" WIDTH="272" VPOS="1156" HPOS="828"/>
            <SP WIDTH="16" VPOS="1156" HPOS="1101"/>
            <String WC="0.6866666675" CONTENT="und" HEIGHT="38" WIDTH="66" VPOS="1156" HPOS="1118"/>
            <SP WIDTH="13" VPOS="1155" HPOS="1185"/>
            <String WC="0.9166666865" CONTENT="der" HEIGHT="38" WIDTH="57" VPOS="1155" HPOS="1199"/>
            <SP WIDTH="13" VPOS="1155" HPOS="1257"/>
            <String WC="0.7300000191" CONTENT="Holz" HEIGHT="41" WIDTH="90" VPOS="1154" HPOS="1271"` + first + `/>
            <HYP CONTENT="&#173;"/>
          </TextLine>
        </TextBlock>
        <TextBlock ID="Page1_Block12" HEIGHT="56" WIDTH="200" VPOS="1209" HPOS="368" STYLEREFS="font2">
          <TextLine HEIGHT="56" WIDTH="200" VPOS="1209" HPOS="368">
            <String WC="0.6290000081" CONTENT="verschläge." HEIGHT="49" WIDTH="195" VPOS="1216" HPOS="368"` + second + `/>
          </TextLine>
        </TextBlock>
      </PrintSpace>
    </Page>
  </Layout>
</alto>
`)
}

const (
	part1 = ` SUBS_TYPE="HypPart1" SUBS_CONTENT="Holzverschläge."`
	part2 = ` SUBS_TYPE="HypPart2" SUBS_CONTENT="Holzverschläge."`
)

// TestHyphenAcrossBlocksLoneWord: a word hyphenated across two TextBlocks
// whose second part is the second block's only word reaches the backend
// whole when the ALTO marks that part (HypPart2, SUBS_CONTENT the joined
// word): the whole word's translation is written where "Holz" was, the
// second part's String is emptied (its box stays) and loses its SUBS_*,
// the HYP goes, and the second block, which has no text of its own, is
// counted translated without a log row. Before, the backend saw "Holz" and
// "verschläge." apart.
func TestHyphenAcrossBlocksLoneWord(t *testing.T) {
	src := abbyyLoneDoc(part1, part2)
	for _, fast := range []bool{true, false} {
		be := upper()
		res, err := Translate(context.Background(), src, Options{Backend: be, Source: "de", Target: "en", File: "h", FastAlign: fast})
		if err != nil {
			t.Fatal(err)
		}
		calls := "\n" + strings.Join(be.calls, "\n") + "\n"
		if strings.Count(calls, "Holzverschläge.") == 0 || strings.Contains(calls, "\nverschläge.") || strings.Contains(calls, "Holz\n") {
			t.Errorf("fast=%v: the backend saw the parts, not the whole word once:%s", fast, calls)
		}
		for _, want := range []string{
			`<String WC="0.7300000191" CONTENT="HOLZVERSCHLÄGE." HEIGHT="41" WIDTH="90" VPOS="1154" HPOS="1271"/>`,
			`<String WC="0.6290000081" CONTENT="" HEIGHT="49" WIDTH="195" VPOS="1216" HPOS="368"/>`,
		} {
			if !bytes.Contains(res.Output, []byte(want)) {
				t.Errorf("fast=%v: output lacks\n%s\nin\n%s", fast, want, res.Output)
			}
		}
		if !bytes.Equal(MaskTranslatable(res.Output), MaskTranslatable(src)) {
			t.Errorf("fast=%v: more than what MaskTranslatable masks changed:\n%s", fast, res.Output)
		}
		if bytes.Contains(res.Output, []byte("SUBS_")) || bytes.Contains(res.Output, []byte("<HYP")) {
			t.Errorf("fast=%v: SUBS_* or HYP left after the joined pair:\n%s", fast, res.Output)
		}
		if res.Stats.Units != 2 || res.Stats.Translated != 2 || res.Languages["de"] != 2 || len(res.Log) != 1 {
			t.Errorf("fast=%v: stats %+v, languages %v, %d log rows; want 2 units translated, one row", fast, res.Stats, res.Languages, len(res.Log))
		}
		// The emptied line is said (it was in no warning and no log row).
		if w := strings.Join(res.Warnings, "\n"); res.Stats.LinesJoined != 1 || !strings.Contains(w, "h: 1 lines held only the end of a word") {
			t.Errorf("fast=%v: %d lines joined, warnings %q; want the one said", fast, res.Stats.LinesJoined, w)
		}
	}
}

// In Append mode the originals stay and the second block's copy holds
// the emptied String, so a second append run finds both blocks done.
func TestHyphenAcrossBlocksLoneWordAppend(t *testing.T) {
	res, err := Translate(context.Background(), abbyyLoneDoc(part1, part2), Options{Backend: upper(), Source: "de", Target: "en", File: "h", FastAlign: true, Mode: Append})
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		`<String WC="0.7300000191" CONTENT="Holz" HEIGHT="41" WIDTH="90" VPOS="1154" HPOS="1271"` + part1 + `/>`,
		`<String WC="0.7300000191" CONTENT="HOLZVERSCHLÄGE." HEIGHT="41" WIDTH="90" VPOS="1154" HPOS="1271"/>`,
		`<String WC="0.6290000081" CONTENT="verschläge." HEIGHT="49" WIDTH="195" VPOS="1216" HPOS="368"` + part2 + `/>`,
		`<TextBlock ID="Page1_Block12_en" HEIGHT="56" WIDTH="200" VPOS="1209" HPOS="368" STYLEREFS="font2" LANG="en">
          <TextLine HEIGHT="56" WIDTH="200" VPOS="1209" HPOS="368">
            <String WC="0.6290000081" CONTENT="" HEIGHT="49" WIDTH="195" VPOS="1216" HPOS="368"/>`,
	} {
		if !bytes.Contains(res.Output, []byte(want)) {
			t.Errorf("append: output lacks\n%s\nin\n%s", want, res.Output)
		}
	}
	be := upper()
	again, err := Translate(context.Background(), res.Output, Options{Backend: be, Source: "de", Target: "en", File: "h", FastAlign: true, Mode: Append})
	if err != nil {
		t.Fatal(err)
	}
	if again.Stats.Blocks != 0 || again.Stats.Translated != 0 || len(be.calls) != 0 {
		t.Errorf("second append run: stats %+v, backend calls %q", again.Stats, be.calls)
	}
}

// TestHyphenAcrossBlocksLoneWordKept: the lone second part stays apart
// (each block sent as it is) when nothing marks it as the rest of the
// word (a catchword, a marginal gloss, OCR noise look the same), when a
// SUBS_CONTENT names another word, when the blocks are in two languages,
// when the second is skipped (already in the target language), and in
// Alternative mode.
func TestHyphenAcrossBlocksLoneWordKept(t *testing.T) {
	for _, c := range []struct {
		name   string
		src    []byte
		source string
		mode   Mode
	}{
		{"unmarked second part", abbyyLoneDoc(part1, ""), "de", Replace},
		{"SUBS_CONTENT of another word", abbyyLoneDoc(part1, ` SUBS_TYPE="HypPart2" SUBS_CONTENT="Holzverschlag."`), "de", Replace},
		{"first part's SUBS_CONTENT differs", abbyyLoneDoc(` SUBS_TYPE="HypPart1" SUBS_CONTENT="Holzwand"`, part2), "de", Replace},
		{"two languages", bytes.Replace(abbyyLoneDoc(part1, part2), []byte(`ID="Page1_Block12"`), []byte(`ID="Page1_Block12" LANG="cs"`), 1), "auto", Replace},
		{"second in the target language", bytes.Replace(abbyyLoneDoc(part1, part2), []byte(`ID="Page1_Block12"`), []byte(`ID="Page1_Block12" LANG="en"`), 1), "auto", Replace},
		{"alternative mode", abbyyLoneDoc(part1, part2), "de", Alternative},
	} {
		t.Run(c.name, func(t *testing.T) {
			be := upper()
			src := c.src
			if c.source == "auto" {
				src = bytes.Replace(src, []byte(`ID="Page1_Block11"`), []byte(`ID="Page1_Block11" LANG="de"`), 1)
			}
			res, err := Translate(context.Background(), src, Options{Backend: be, Source: c.source, Target: "en", File: "h", FastAlign: true, Mode: c.mode, Detector: langid.Shared()})
			if err != nil {
				t.Fatal(err)
			}
			calls := strings.Join(be.calls, "\n")
			if strings.Contains(calls, "Holzverschläge") {
				t.Errorf("joined: the backend saw %q", calls)
			}
			if c.mode == Replace && !bytes.Contains(res.Output, []byte(`CONTENT="HOLZ"`)) {
				t.Errorf("the first part was not written as its own word:\n%s", res.Output)
			}
		})
	}
}

// TestHyphenAcrossBlocksLoneWordRejected: when the guard rejects the
// first block, the second keeps its word (both untranslated, no source
// text lost); when an end round then accepts the first block, the second
// part's String is emptied with it.
func TestHyphenAcrossBlocksLoneWordRejected(t *testing.T) {
	src := bytes.Replace(abbyyLoneDoc(part1, part2), []byte(`CONTENT="Abbruch"`), []byte(`CONTENT="nein"`), 1)
	for _, c := range []struct {
		name       string
		rejections int
		rounds     int
		second     string
	}{
		{"rejected", -1, 1, `CONTENT="verschläge." HEIGHT="49" WIDTH="195" VPOS="1216" HPOS="368" SUBS_TYPE="HypPart2"`},
		{"accepted in an end round", 2, 1, `CONTENT="" HEIGHT="49" WIDTH="195" VPOS="1216" HPOS="368"/>`},
	} {
		t.Run(c.name, func(t *testing.T) {
			be := &rejectingFirst{fake: upper(), n: c.rejections}
			res, err := Translate(context.Background(), src, Options{Backend: be, Source: "de", Target: "en", File: "h", FastAlign: true, RetryRounds: c.rounds})
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Contains(res.Output, []byte(c.second)) {
				t.Errorf("output lacks\n%s\nin\n%s", c.second, res.Output)
			}
			translated := c.rejections >= 0
			if translated && (res.Stats.Translated != 2 || res.Stats.Untranslated != 0 || res.Stats.Rerun != 1) ||
				!translated && (res.Stats.Translated != 0 || res.Stats.Untranslated != 2) {
				t.Errorf("stats %+v", res.Stats)
			}
		})
	}
}

// rejectingFirst is rejecting for the first n replies holding "nein" (n <
// 0: every one), then upper's.
type rejectingFirst struct {
	*fake
	mu   sync.Mutex
	n    int
	seen int
}

func (r *rejectingFirst) Translate(ctx context.Context, text, src, tgt string) (string, error) {
	r.mu.Lock()
	reject := strings.Contains(text, "nein") && (r.n < 0 || r.seen < r.n)
	if reject {
		r.seen++
	}
	r.mu.Unlock()
	if reject {
		return rejecting{r.fake}.Translate(ctx, text, src, tgt)
	}
	return r.fake.Translate(ctx, text, src, tgt)
}
