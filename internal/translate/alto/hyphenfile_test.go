package alto

import (
	"bytes"
	"context"
	"strconv"
	"strings"
	"testing"

	"archivekit/internal/translate/langid"
)

// abbyyBookPage is one page of a book as ABBYY FineReader Engine 11 writes
// it (ALTO 2, one file a page, the String, SP and HYP attributes of the
// cneud/alto-tools page of testdata/realworld): a paragraph of blocks
// whose text is body; a word whose String is written "Aus|P1" ends with
// SUBS_TYPE="HypPart1", SUBS_CONTENT=whole and a HYP, one written
// "grabung|P2" starts with SUBS_TYPE="HypPart2", SUBS_CONTENT=whole, and
// "grabung|" is unmarked. Each "/" starts a new TextBlock.
func abbyyBookPage(n int, whole, body string) []byte {
	var b strings.Builder
	b.WriteString(`<?xml version="1.0" encoding="UTF-8" standalone="yes"?>
<alto xmlns="http://www.loc.gov/standards/alto/ns-v2#" xmlns:xlink="http://www.w3.org/1999/xlink">
  <Layout>
    <Page ID="Page` + strconv.Itoa(n) + `" PHYSICAL_IMG_NR="` + strconv.Itoa(n) + `" HEIGHT="3629" WIDTH="2217">
      <PrintSpace HEIGHT="3344" WIDTH="2217" VPOS="285" HPOS="0">
`)
	vpos := 300
	for bi, blk := range strings.Split(body, " / ") {
		b.WriteString(`        <TextBlock ID="Page` + strconv.Itoa(n) + `_Block` + strconv.Itoa(bi+1) + `" HEIGHT="110" WIDTH="1101" VPOS="` + strconv.Itoa(vpos) + `" HPOS="361" STYLEREFS="font2">
          <TextLine HEIGHT="55" WIDTH="915" VPOS="` + strconv.Itoa(vpos) + `" HPOS="530">
`)
		hpos := 530
		for wi, w := range strings.Fields(blk) {
			if wi > 0 {
				b.WriteString(`            <SP WIDTH="15" VPOS="` + strconv.Itoa(vpos) + `" HPOS="` + strconv.Itoa(hpos) + `"/>` + "\n")
				hpos += 16
			}
			word, mark, _ := strings.Cut(w, "|")
			attrs := ""
			switch mark {
			case "P1":
				attrs = ` SUBS_TYPE="HypPart1" SUBS_CONTENT="` + whole + `"`
			case "P2":
				attrs = ` SUBS_TYPE="HypPart2" SUBS_CONTENT="` + whole + `"`
			}
			b.WriteString(`            <String WC="0.8766666651" CONTENT="` + word + `" HEIGHT="38" WIDTH="57" VPOS="` + strconv.Itoa(vpos) + `" HPOS="` + strconv.Itoa(hpos) + `"` + attrs + `/>` + "\n")
			if mark == "P1" {
				b.WriteString(`            <HYP CONTENT="&#173;"/>` + "\n")
			}
			hpos += 60
		}
		b.WriteString("          </TextLine>\n        </TextBlock>\n")
		vpos += 120
	}
	b.WriteString("      </PrintSpace>\n    </Page>\n  </Layout>\n</alto>\n")
	return []byte(b.String())
}

var (
	page12 = abbyyBookPage(12, "Ausgrabung", "Die Arbeiten des Sommers / galten vor allem der Aus|P1 / - 12 -")
	page13 = abbyyBookPage(13, "Ausgrabung", "13 / grabung|P2 des alten Brunnens im Hofe / Sie dauerte drei Wochen")
	// short13's first block is too short to be told: its LANG decides.
	short13 = abbyyBookPage(13, "Ausgrabung", "grabung|P2 war / Sie dauerte drei Wochen")
)

// translatePair translates the two files of a book in page order, as
// translate does: the first given the second, the second given what the
// first carried.
func translatePair(t *testing.T, first, second []byte, opt Options) (a, b *Result, calls string) {
	t.Helper()
	be := upper()
	opt.Backend, opt.Next = be, second
	a, err := Translate(context.Background(), first, opt)
	if err != nil {
		t.Fatal(err)
	}
	opt.Next, opt.Prev = nil, a.Carried
	if b, err = Translate(context.Background(), second, opt); err != nil {
		t.Fatal(err)
	}
	return a, b, "\n" + strings.Join(be.calls, "\n") + "\n"
}

// TestHyphenAcrossFiles: a word hyphenated at the foot of one page's ALTO
// file ("Aus" HypPart1 + HYP) and ended on the next file's first line
// ("grabung" HypPart2) reaches the backend whole from the first file,
// whose String takes the whole word's translation (SUBS_* and HYP gone);
// the second file's String is emptied (its box stays) and the word is not
// sent again. Every other byte of both files is kept.
func TestHyphenAcrossFiles(t *testing.T) {
	for _, mode := range []Mode{Replace, Append} {
		for _, fast := range []bool{true, false} {
			a, b, calls := translatePair(t, page12, page13, Options{Source: "de", Target: "en", File: "p", FastAlign: fast, Mode: mode})
			if !strings.Contains(calls, "Ausgrabung") || strings.Contains(calls, "\ngrabung") || strings.Contains(calls, "Aus\n") {
				t.Errorf("%s fast=%v: the backend saw the parts, not the whole word:%s", mode, fast, calls)
			}
			if a.Carried == nil || *a.Carried != (Carried{Word: "grabung", Lang: "de", Block: 2}) || b.FromPrev != "grabung" {
				t.Fatalf("%s fast=%v: carried %+v, emptied %q", mode, fast, a.Carried, b.FromPrev)
			}
			if !bytes.Contains(a.Output, []byte(`CONTENT="AUSGRABUNG" HEIGHT="38" WIDTH="57" VPOS="420" HPOS="834"/>`)) {
				t.Errorf("%s fast=%v: the first file lacks the whole word's translation:\n%s", mode, fast, a.Output)
			}
			if !bytes.Contains(b.Output, []byte(`CONTENT="" HEIGHT="38" WIDTH="57" VPOS="420" HPOS="530"/>`)) {
				t.Errorf("%s fast=%v: the second file's part was not emptied:\n%s", mode, fast, b.Output)
			}
			if !bytes.Contains(b.Output, []byte(`CONTENT="DES"`)) || !bytes.Contains(b.Output, []byte(`CONTENT="BRUNNENS"`)) {
				t.Errorf("%s fast=%v: the rest of the second file's block was not translated:\n%s", mode, fast, b.Output)
			}
			if mode == Replace {
				for _, r := range []*Result{a, b} {
					if bytes.Contains(r.Output, []byte("SUBS_")) || bytes.Contains(r.Output, []byte("<HYP")) {
						t.Errorf("fast=%v: SUBS_* or HYP left:\n%s", fast, r.Output)
					}
				}
				if !bytes.Equal(MaskTranslatable(a.Output), MaskTranslatable(page12)) || !bytes.Equal(MaskTranslatable(b.Output), MaskTranslatable(page13)) {
					t.Errorf("fast=%v: more than what MaskTranslatable masks changed", fast)
				}
			} else if !bytes.Contains(b.Output, []byte(`CONTENT="grabung" HEIGHT="38" WIDTH="57" VPOS="420" HPOS="530" SUBS_TYPE="HypPart2"`)) {
				t.Errorf("append: the original lost its word:\n%s", b.Output)
			}
			if b.Stats.Translated != b.Stats.Units || b.Stats.Untranslated != 0 {
				t.Errorf("%s fast=%v: second file stats %+v", mode, fast, b.Stats)
			}
		}
	}
}

// TestHyphenAcrossFilesAlternative: in Alternative mode, as across two
// blocks of a page, the first part's String gets the whole word's
// translation as its ALTERNATIVE and the second part's none; nothing else
// of either file changes.
func TestHyphenAcrossFilesAlternative(t *testing.T) {
	a, b, calls := translatePair(t, page12, page13, Options{Source: "de", Target: "en", File: "p", FastAlign: true, Mode: Alternative})
	if !strings.Contains(calls, "Ausgrabung") || strings.Contains(calls, "\ngrabung") {
		t.Errorf("the backend saw the parts:%s", calls)
	}
	if !bytes.Contains(a.Output, []byte(`SUBS_CONTENT="Ausgrabung"><ALTERNATIVE PURPOSE="translation:en-t-de-t0-und">AUSGRABUNG</ALTERNATIVE></String>`)) {
		t.Errorf("the first part lacks the whole word's ALTERNATIVE:\n%s", a.Output)
	}
	if !bytes.Contains(b.Output, []byte(`CONTENT="grabung" HEIGHT="38" WIDTH="57" VPOS="420" HPOS="530" SUBS_TYPE="HypPart2" SUBS_CONTENT="Ausgrabung"/>`)) ||
		!bytes.Contains(b.Output, []byte(`>BRUNNENS</ALTERNATIVE>`)) || b.FromPrev != "grabung" {
		t.Errorf("the second part was changed, or its block not translated (from prev %q):\n%s", b.FromPrev, b.Output)
	}
	for _, r := range []struct{ in, out []byte }{{page12, a.Output}, {page13, b.Output}} {
		if got, err := RemoveAlternatives(r.out); err != nil || !bytes.Equal(got, r.in) {
			t.Errorf("removing the ALTERNATIVEs does not give the input back (%v)", err)
		}
	}
}

// TestHyphenAcrossFilesLoneWord: a second part that is its block's only
// word joins when the ALTO marks it (HypPart2, SUBS_CONTENT the word); its
// block is then written without a backend call (String emptied, counted
// translated, no log row). Unmarked, or in Alternative mode, it stays.
func TestHyphenAcrossFilesLoneWord(t *testing.T) {
	for _, c := range []struct {
		name   string
		second []byte
		mode   Mode
		joined bool
	}{
		{"marked", abbyyBookPage(13, "Ausgrabung", "grabung|P2 / des alten Brunnens"), Replace, true},
		{"unmarked", abbyyBookPage(13, "Ausgrabung", "grabung / des alten Brunnens"), Replace, false},
		{"alternative mode", abbyyBookPage(13, "Ausgrabung", "grabung|P2 / des alten Brunnens"), Alternative, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			a, b, calls := translatePair(t, page12, c.second, Options{Source: "de", Target: "en", File: "p", FastAlign: true, Mode: c.mode})
			if joined := strings.Contains(calls, "Ausgrabung"); joined != c.joined || joined == strings.Contains(calls, "\ngrabung") {
				t.Errorf("joined %v, want %v; calls:%s", joined, c.joined, calls)
			}
			if (a.Carried != nil) != c.joined || (b.FromPrev != "") != c.joined {
				t.Errorf("carried %+v, emptied %q", a.Carried, b.FromPrev)
			}
			if c.joined && (b.Stats.Translated != 2 || len(b.Log) != 1 || !bytes.Contains(b.Output, []byte(`CONTENT="" HEIGHT="38" WIDTH="57" VPOS="300" HPOS="530"/>`))) {
				t.Errorf("stats %+v, %d log rows:\n%s", b.Stats, len(b.Log), b.Output)
			}
		})
	}
}

// TestHyphenAcrossFilesKept: the parts stay apart when the two blocks are
// translated from different languages, when the second is in the target
// language, when a block with letters (a running head) comes between, when the previous file's word is not the first word here, and
// when the first block's translation was rejected (nothing carried: the
// second file keeps and translates its word), and when what the previous
// file carried is another word or from another language.
func TestHyphenAcrossFilesKept(t *testing.T) {
	withLang := func(src []byte, id, lang string) []byte {
		return bytes.Replace(src, []byte(`ID="`+id+`"`), []byte(`ID="`+id+`" LANG="`+lang+`"`), 1)
	}
	for _, c := range []struct {
		name          string
		first, second []byte
		source        string
		prev          *Carried // given to the second file instead of what the first carried
	}{
		{"two languages", withLang(page12, "Page12_Block2", "de"), withLang(short13, "Page13_Block1", "cs"), "auto", nil},
		{"second in the target language", withLang(page12, "Page12_Block2", "de"), withLang(short13, "Page13_Block1", "en"), "auto", nil},
		{"first rejected", bytes.Replace(page12, []byte(`CONTENT="vor"`), []byte(`CONTENT="nein"`), 1), page13, "de", nil},
		{"another word carried", page12, page13, "de", &Carried{Word: "grabungen", Lang: "de"}},
		{"a running head between", page12, abbyyBookPage(13, "Ausgrabung", "Geschichte der Stadt / grabung|P2 des alten Brunnens"), "de", nil},
		{"carried from another language", page12, page13, "de", &Carried{Word: "grabung", Lang: "cs"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			be := &rejectingFirst{fake: upper(), n: -1}
			opt := Options{Backend: be, Source: c.source, Target: "en", File: "p", FastAlign: true, Detector: langid.Shared(), Next: c.second}
			a, err := Translate(context.Background(), c.first, opt)
			if err != nil {
				t.Fatal(err)
			}
			opt.Next, opt.Prev = nil, a.Carried
			if c.prev != nil {
				a.Carried, opt.Prev = nil, c.prev
			}
			b, err := Translate(context.Background(), c.second, opt)
			if err != nil {
				t.Fatal(err)
			}
			if a.Carried != nil || b.FromPrev != "" {
				t.Errorf("joined: carried %+v, emptied %q", a.Carried, b.FromPrev)
			}
			if c.source == "de" && !bytes.Contains(b.Output, []byte(`CONTENT="GRABUNG"`)) {
				t.Errorf("the second part was not translated as its own word:\n%s", b.Output)
			}
		})
	}
}

// TestHyphenPageNumberNotJoined: a page's last word with a HYP before a
// page-number block ("- 12 -") is not joined with the number's "-" (the
// rest of a word begins with a letter): before, "Aus-" went to the
// backend and the "-" String was emptied.
func TestHyphenPageNumberNotJoined(t *testing.T) {
	be := upper()
	res, err := Translate(context.Background(), page12, Options{Backend: be, Source: "de", Target: "en", File: "p", FastAlign: true})
	if err != nil {
		t.Fatal(err)
	}
	calls := strings.Join(be.calls, "\n")
	if strings.Contains(calls, "Aus-") || !strings.Contains(calls, "- 12 -") {
		t.Errorf("the page number was joined: %q", calls)
	}
	if bytes.Count(res.Output, []byte(`CONTENT="-"`)) != 2 {
		t.Errorf("a dash of the page number changed:\n%s", res.Output)
	}
}
