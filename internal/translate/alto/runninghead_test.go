package alto

import (
	"bytes"
	"context"
	"strings"
	"testing"
)

func TestRunningHead(t *testing.T) {
	top := func(texts []string, nums ...int) Edge { return Edge{Texts: texts, Numbers: nums} }
	for _, c := range []struct {
		name  string
		text  string
		lines int
		near  map[int]Edge
		want  bool
	}{
		{"number confirmed by the page before", "KRITIK DER REINEN VERNUNFT 45", 1,
			map[int]Edge{-1: top([]string{"Einleitung."}, 44)}, true},
		{"number first, confirmed by the page after", "46 KRITIK DER REINEN VERNUNFT", 1,
			map[int]Edge{1: top(nil, 47)}, true},
		{"number confirmed two pages on", "Einleitung. [xii]", 1,
			map[int]Edge{2: top([]string{"Einleitung. xiv"}, 14)}, true},
		{"number not confirmed", "KRITIK DER REINEN VERNUNFT 45", 1,
			map[int]Edge{-1: top([]string{"Vorrede"}, 12)}, false},
		{"repeated head without number", "Geschichte der Stadt.", 1,
			map[int]Edge{-1: top([]string{"GESCHICHTE DER STADT"})}, true},
		{"verso and recto heads alternate", "EINLEITUNG", 1,
			map[int]Edge{-1: top([]string{"KRITIK DER VERNUNFT"}), -2: top([]string{"Einleitung"})}, true},
		{"repeated with other numbers", "KRITIK 45", 1,
			map[int]Edge{2: top([]string{"KRITIK 47"}, 47)}, true},
		{"chapter heading does not repeat", "Zweites Kapitel.", 1,
			map[int]Edge{-1: top([]string{"Geschichte der Stadt"}), 1: top([]string{"Geschichte der Stadt"})}, false},
		{"chapter number is no page number", "CHAPTER III", 1,
			map[int]Edge{-1: top([]string{"The History"}, 44), 1: top([]string{"The History"}, 46)}, false},
		{"two lines", "KRITIK DER REINEN VERNUNFT 45", 2,
			map[int]Edge{-1: top(nil, 44)}, false},
		{"too many words", "und so weiter und so fort bis zum Ende 45", 1,
			map[int]Edge{-1: top(nil, 44)}, false},
		{"begins in lower case", "grabung des Jahres 45", 1,
			map[int]Edge{-1: top(nil, 44)}, false},
		{"a line of text that repeats nothing", "Im Jahre 1784", 1,
			map[int]Edge{-1: top([]string{"Im Jahre 1783 begann"}, 12)}, false},
		{"too few letters to repeat", "A.", 1,
			map[int]Edge{-1: top([]string{"a"})}, false},
		{"no pages around", "KRITIK DER REINEN VERNUNFT 45", 1, nil, false},
	} {
		if got := RunningHead(c.text, c.lines, c.near); got != c.want {
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
