package alto

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"archivekit/internal/translate/xmlsplice"
)

func TestRunningHead(t *testing.T) {
	top := func(texts []string, nums ...int) Edge { return Edge{Texts: texts, Numbers: nums} }
	for _, c := range []struct {
		name  string
		text  string
		lines int
		// beside is the page number of a block on its line
		beside int
		near   map[int]Edge
		want   bool
	}{
		{"number confirmed by the page before", "KRITIK DER REINEN VERNUNFT 45", 1, 0,
			map[int]Edge{-1: top([]string{"Einleitung."}, 44)}, true},
		{"number first, confirmed by the page after", "46 KRITIK DER REINEN VERNUNFT", 1, 0,
			map[int]Edge{1: top(nil, 47)}, true},
		{"number confirmed two pages on", "Einleitung. [xii]", 1, 0,
			map[int]Edge{2: top([]string{"Einleitung. xiv"}, 14)}, true},
		{"number not confirmed", "KRITIK DER REINEN VERNUNFT 45", 1, 0,
			map[int]Edge{-1: top([]string{"Vorrede"}, 12)}, false},
		{"repeated head without number", "Geschichte der Stadt.", 1, 0,
			map[int]Edge{-1: top([]string{"GESCHICHTE DER STADT"})}, true},
		{"verso and recto heads alternate", "EINLEITUNG", 1, 0,
			map[int]Edge{-1: top([]string{"KRITIK DER VERNUNFT"}), -2: top([]string{"Einleitung"})}, true},
		{"repeated with other numbers", "KRITIK 45", 1, 0,
			map[int]Edge{2: top([]string{"KRITIK 47"}, 47)}, true},
		{"chapter heading does not repeat", "Zweites Kapitel.", 1, 0,
			map[int]Edge{-1: top([]string{"Geschichte der Stadt"}), 1: top([]string{"Geschichte der Stadt"})}, false},
		{"chapter number is no page number", "CHAPTER III", 1, 0,
			map[int]Edge{-1: top([]string{"The History"}, 44), 1: top([]string{"The History"}, 46)}, false},
		{"two lines", "KRITIK DER REINEN VERNUNFT 45", 2, 0,
			map[int]Edge{-1: top(nil, 44)}, false},
		{"too many words", "und so weiter und so fort bis zum Ende 45", 1, 0,
			map[int]Edge{-1: top(nil, 44)}, false},
		{"begins in lower case", "grabung des Jahres 45", 1, 0,
			map[int]Edge{-1: top(nil, 44)}, false},
		{"a line of text that repeats nothing", "Im Jahre 1784", 1, 0,
			map[int]Edge{-1: top([]string{"Im Jahre 1783 begann"}, 12)}, false},
		{"too few letters to repeat", "A.", 1, 0,
			map[int]Edge{-1: top([]string{"a"})}, false},
		{"beside a confirmed page number", "Universität und technische Hochschule.", 1, 13,
			map[int]Edge{-1: top([]string{"F. Klein"}, 12)}, true},
		{"beside an unconfirmed number", "Zweites Kapitel.", 1, 13,
			map[int]Edge{-1: top([]string{"F. Klein"}, 4)}, false},
		{"no pages around", "KRITIK DER REINEN VERNUNFT 45", 1, 0, nil, false},
	} {
		if got := RunningHead(HeadBlock{c.text, c.lines, c.beside}, c.near); got != c.want {
			t.Errorf("%s: RunningHead(%q) = %v, want %v", c.name, c.text, got, c.want)
		}
	}
}

func TestPageNumber(t *testing.T) {
	for w, want := range map[string]int{
		"45": 45, "[45]": 45, "45.": 45, "xii": 12, "XLV": 45, "(iv)": 4, "1784": 1784,
		"045": 0, "12345": 0, "Xii": 0, "IIII": 0, "VX": 0, "Kant": 0, "": 0, "-": 0, "12a": 0,
	} {
		if got := pageNumber(w); got != want {
			t.Errorf("pageNumber(%q) = %d, want %d", w, got, want)
		}
	}
}

// withTopMargin puts a TopMargin holding one TextBlock of text before the
// page's PrintSpace.
func withTopMargin(page []byte, text string) []byte {
	return bytes.Replace(page, []byte("      <PrintSpace "), []byte(`      <TopMargin HEIGHT="280" WIDTH="2217" VPOS="0" HPOS="0">
        <TextBlock ID="TM1" HEIGHT="55" WIDTH="900" VPOS="100" HPOS="530"><TextLine HEIGHT="55" WIDTH="900" VPOS="100" HPOS="530"><String CONTENT="`+text+`" HEIGHT="38" WIDTH="900" VPOS="100" HPOS="530"/></TextLine></TextBlock>
      </TopMargin>
      <PrintSpace `), 1)
}

// sameLine moves the TextBlock id to the line of the page's first block.
func sameLine(page []byte, id string) []byte {
	return bytes.Replace(page, []byte(`ID="`+id+`" HEIGHT="110" WIDTH="1101" VPOS="420"`), []byte(`ID="`+id+`" HEIGHT="110" WIDTH="1101" VPOS="300"`), 1)
}

// withTag labels the TextBlock id with an OtherTag of label.
func withTag(page []byte, id, label string) []byte {
	page = bytes.Replace(page, []byte("  <Layout>"), []byte(`  <Tags><OtherTag ID="BT9" LABEL="`+label+`"/></Tags>
  <Layout>`), 1)
	return bytes.Replace(page, []byte(`ID="`+id+`"`), []byte(`ID="`+id+`" TAGREFS="LT1 BT9"`), 1)
}

// TestHyphenAcrossRunningHeads: a word hyphenated at the foot of one file
// ("Aus" HypPart1) and ended at the top of the next ("grabung" HypPart2)
// is joined across the running heads and feet between them (a head with
// the page number the pages confirm, a head or foot that repeats, one in a
// TopMargin, one tagged as a running title), and not across a heading that
// is none (a chapter's, which does not repeat). Before, any block with a
// letter between the parts stopped the join.
func TestHyphenAcrossRunningHeads(t *testing.T) {
	body13 := " / grabung|P2 des alten Brunnens im Hofe / Sie dauerte drei Wochen"
	for _, c := range []struct {
		name          string
		first, second []byte
		joined        bool
	}{
		{"head with page number",
			abbyyBookPage(12, "Ausgrabung", "KRITIK DER REINEN VERNUNFT 12 / Die Arbeiten des Sommers / galten vor allem der Aus|P1"),
			abbyyBookPage(13, "Ausgrabung", "13 EINLEITUNG"+body13), true},
		{"head and number in two blocks",
			abbyyBookPage(12, "Ausgrabung", "12 / Geschichte der Stadt / Die Arbeiten des Sommers / galten vor allem der Aus|P1"),
			abbyyBookPage(13, "Ausgrabung", "13 / Geschichte der Stadt."+body13), true},
		{"head beside its page number",
			abbyyBookPage(12, "Ausgrabung", "12 / Die Arbeiten des Sommers / galten vor allem der Aus|P1"),
			sameLine(abbyyBookPage(13, "Ausgrabung", "Von der Stadt / 13"+body13), "Page13_Block2"), true},
		{"head below a page number, not beside it",
			abbyyBookPage(12, "Ausgrabung", "12 / Die Arbeiten des Sommers / galten vor allem der Aus|P1"),
			abbyyBookPage(13, "Ausgrabung", "13 / Von der Stadt"+body13), false},
		{"repeated head without number",
			abbyyBookPage(12, "Ausgrabung", "Geschichte der Stadt / Die Arbeiten des Sommers / galten vor allem der Aus|P1"),
			abbyyBookPage(13, "Ausgrabung", "Geschichte der Stadt."+body13), true},
		{"repeated foot",
			abbyyBookPage(12, "Ausgrabung", "Die Arbeiten des Sommers / galten vor allem der Aus|P1 / Kant's Werke IV."),
			abbyyBookPage(13, "Ausgrabung", "grabung|P2 des alten Brunnens im Hofe / Sie dauerte drei Wochen / Kant's Werke IV."), true},
		{"head in the TopMargin",
			page12, withTopMargin(page13, "Bibliothek des Klosters"), true},
		{"head tagged as a running title",
			page12, withTag(abbyyBookPage(13, "Ausgrabung", "Von der Stadt"+body13), "Page13_Block1", "RunningTitleZone"), true},
		{"chapter heading",
			abbyyBookPage(12, "Ausgrabung", "Geschichte der Stadt / Die Arbeiten des Sommers / galten vor allem der Aus|P1"),
			abbyyBookPage(13, "Ausgrabung", "Zweites Kapitel"+body13), false},
		{"chapter heading with a number",
			abbyyBookPage(12, "Ausgrabung", "12 / Die Arbeiten des Sommers / galten vor allem der Aus|P1"),
			abbyyBookPage(13, "Ausgrabung", "Kapitel 3"+body13), false},
		{"heading tagged as a title",
			page12, withTag(abbyyBookPage(13, "Ausgrabung", "Von der Stadt"+body13), "Page13_Block1", "Title"), false},
	} {
		t.Run(c.name, func(t *testing.T) {
			a, b, calls := translatePair(t, c.first, c.second, Options{Source: "de", Target: "en", File: "p", FastAlign: true})
			joined := a.Carried != nil && b.FromPrev == "grabung"
			if joined != c.joined || joined != strings.Contains(calls, "Ausgrabung") {
				t.Errorf("joined %v (carried %+v, emptied %q), want %v; backend calls:%s", joined, a.Carried, b.FromPrev, c.joined, calls)
			}
			if c.joined && (strings.Contains(calls, "\ngrabung") || !bytes.Contains(b.Output, []byte(`CONTENT="" HEIGHT="38"`))) {
				t.Errorf("the second part was sent or not emptied:%s\n%s", calls, b.Output)
			}
		})
	}
}

// TestHyphenMarginNotJoined: a block in a page's TopMargin is not the text
// flow: its last word ending in a hyphen is not joined with the first word
// of the PrintSpace's first block (before, "Anmer-" took "kung").
func TestHyphenMarginNotJoined(t *testing.T) {
	page := withTopMargin(abbyyBookPage(5, "", "kung des Brunnens im Hofe / Sie dauerte drei Wochen"), "Anmer-")
	be := upper()
	res, err := Translate(context.Background(), page, Options{Backend: be, Source: "de", Target: "en", File: "p", FastAlign: true})
	if err != nil {
		t.Fatal(err)
	}
	calls := strings.Join(be.calls, "\n")
	if strings.Contains(calls, "Anmerkung") || !strings.Contains(calls, "kung des") {
		t.Errorf("the margin block was joined with the text flow: %q", calls)
	}
	if !bytes.Contains(res.Output, []byte(`CONTENT="KUNG"`)) {
		t.Errorf("the first word of the text flow was not translated as its own:\n%s", res.Output)
	}
}

// kleinPages are the text pages of a real book with running heads
// (testdata/SOURCES.md): F. Klein, "Universität und technische
// Hochschule" (1898), GDZ Göttingen, ALTO 2 by ABBYY FineReader Engine 10,
// one file a page. Even pages begin with the page number and "F . Klein",
// odd ones with "Universität und technische Hochschule ." and the number,
// in two blocks on one line.
var kleinPages = []string{"00000005", "00000006", "00000007", "00000008", "00000009", "00000010",
	"00000011", "00000012", "00000013", "00000014", "00000015"}

// TestRunningHeadsRealBook translates the book's files one after the
// other as translate does (each given the next, and what the one before
// carried): of its 10 page crossings one ends in a hyphen (page 12's "em"
// "-", page 13's "pfand" below the running head and the number 13), and
// it is joined ("empfand" sent once, its second part emptied); no other
// word is joined across pages. Before, the running head stopped the join.
// It also checks, page by page, that the running heads and numbers are
// passed over at the top and nothing at the foot, where this book has none.
func TestRunningHeadsRealBook(t *testing.T) {
	docs := readKlein(t)
	be := upper()
	var joined []string
	for i, res := range translateBook(t, Options{Backend: be, Source: "de", Target: "en", FastAlign: true}, docs, kleinPages) {
		if res.FromPrev != "" {
			joined = append(joined, kleinPages[i-1]+"/"+kleinPages[i]+" "+res.FromPrev)
		}
	}
	if want := []string{"00000014/00000015 pfand"}; !slices.Equal(joined, want) {
		t.Errorf("joined across pages: %q, want %q", joined, want)
	}
	calls := strings.Join(be.calls, "\n")
	if strings.Count(calls, "empfand") != 1 || strings.Contains(calls, "em -") || strings.Contains(calls, "\npfand") {
		t.Errorf("the backend did not get \"empfand\" once, whole")
	}

	// The top and foot of each page's text flow, judged with its pages around.
	var seq edgeSeq
	for _, src := range docs {
		doc, err := xmlsplice.Parse(src)
		if err != nil {
			t.Fatal(err)
		}
		seq.add(pagesOf(doc), furnitureTags(doc))
	}
	for i := range docs {
		top, foot := seq.body(i, false), seq.body(i, true)
		got := prefix(top.text, 24) + " ... " + prefix(foot.text, 24)
		if got != kleinFlow[i] {
			t.Errorf("%s: text flow %q, want %q", kleinPages[i], got, kleinFlow[i])
		}
	}
}

// readKlein reads the files of kleinPages.
func readKlein(t *testing.T) [][]byte {
	var docs [][]byte
	for _, p := range kleinPages {
		b, err := os.ReadFile(filepath.Join("testdata", "real", "gdz-kleiuniv", p+".xml"))
		if err != nil {
			t.Fatal(err)
		}
		docs = append(docs, b)
	}
	return docs
}

// translateBook translates files (named names) with opt one by one, in
// page order, as translate does a book's: each given the next and what
// the one before carried.
func translateBook(t *testing.T, opt Options, files [][]byte, names []string) []*Result {
	var out []*Result
	var prev *Carried
	for i, src := range files {
		opt.File, opt.Prev, opt.Next = names[i], prev, nil
		if i+1 < len(files) {
			opt.Next = files[i+1]
		}
		res, err := Translate(context.Background(), src, opt)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, res)
		prev = res.Carried
	}
	return out
}

// kleinFlow is the beginning of the first and last block of each page's
// text flow, read on the pages.
var kleinFlow = []string{
	"Hochgeehrte Anwesende ! ... l *", // "l *": a signature mark
	"— ich selbst aber will S ... Aber darum ist mein Stan",
	"müssen . So zweifellos e ... So ist denn auch die gro",
	"Die Grundlage der Ecole  ... Die Grundlage der Ecole ",
	"die Abgrenzung der Hochs ... Unter denselben Gesichts",
	"Untersuchungen viel Raum ... Indem ich mich nun zur U",
	"wie analoge Ursachen bei ... Die Absicht bei Gründung",
	"sollten die sämmtlichen  ... Also eine Correctur durc",
	"und sich die Frage vorle ... Die so formulirte Forder",
	"allgemeinen Organisation ... Sie haben nun alle die E",
	"pfand mit einiger Erregu ... pfand mit einiger Erregu",
}

func prefix(s string, n int) string {
	r := []rune(s)
	return string(r[:min(n, len(r))])
}
