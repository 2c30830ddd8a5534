package alto

import (
	"bytes"
	"context"
	"errors"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"archivekit/internal/translate/backend"
	"archivekit/internal/translate/langid"
)

var pageRE = regexp.MustCompile(`(?s)    <Page .*?</Page>\n`)

// twoPages returns one ALTO file holding first's Pages and then second's:
// second (its Tags too) with first's Pages put before its own.
func twoPages(first, second []byte) []byte {
	at := pageRE.FindIndex(second)
	out := append([]byte(nil), second[:at[0]]...)
	out = append(out, bytes.Join(pageRE.FindAll(first, -1), nil)...)
	return append(out, second[at[0]:]...)
}

// translateWithin translates src and fails the test when Translate does
// not return within a minute: a page waiting for another forever.
func translateWithin(t *testing.T, src []byte, opt Options) (*Result, error) {
	t.Helper()
	type answer struct {
		res *Result
		err error
	}
	done := make(chan answer, 1)
	go func() {
		res, err := Translate(context.Background(), src, opt)
		done <- answer{res, err}
	}()
	select {
	case a := <-done:
		return a.res, a.err
	case <-time.After(time.Minute):
		t.Fatal("Translate did not return: a page waits for another")
		return nil, nil
	}
}

// TestHyphenAcrossPages: a word hyphenated at the foot of one Page of an
// ALTO file and ended at the top of the next Page of the same file is
// joined as across two files of a book: the file's Pages come out byte
// for byte as the two files do (the whole word's translation where the
// first part was, the second part's String emptied, or left when the join
// is refused) and the backend sees the same texts. Marked with HYP, HypPart1
// and HypPart2, or a trailing hyphen; across a running head but not a
// chapter heading; not from two languages; in every output mode, one page
// at a time or concurrently. Before, the two Pages of one file sent the
// parts apart.
func TestHyphenAcrossPages(t *testing.T) {
	subs := regexp.MustCompile(` SUBS_(TYPE|CONTENT)="[^"]*"`)
	hyp := regexp.MustCompile(`            <HYP [^>]*/>\n`)
	withLang := func(src []byte, id, lang string) []byte {
		return bytes.Replace(src, []byte(`ID="`+id+`"`), []byte(`ID="`+id+`" LANG="`+lang+`"`), 1)
	}
	body13 := " / grabung|P2 des alten Brunnens im Hofe / Sie dauerte drei Wochen"
	for _, c := range []struct {
		name          string
		first, second []byte
		source        string
		joined        bool
	}{
		{"HypPart1, HYP and HypPart2", page12, page13, "de", true},
		{"HYP only", subs.ReplaceAll(page12, nil), subs.ReplaceAll(page13, nil), "de", true},
		{"HypPart1 and HypPart2 without HYP", hyp.ReplaceAll(page12, nil), page13, "de", true},
		{"trailing hyphen", abbyyBookPage(12, "", "Die Arbeiten des Sommers / galten vor allem der Aus-"),
			abbyyBookPage(13, "", "grabung des alten Brunnens im Hofe / Sie dauerte drei Wochen"), "de", true},
		{"marked lone word", page12, abbyyBookPage(13, "Ausgrabung", "grabung|P2 / des alten Brunnens"), "de", true},
		{"running head with page number",
			abbyyBookPage(12, "Ausgrabung", "KRITIK DER REINEN VERNUNFT 12 / Die Arbeiten des Sommers / galten vor allem der Aus|P1"),
			abbyyBookPage(13, "Ausgrabung", "13 EINLEITUNG"+body13), "de", true},
		{"repeated running head",
			abbyyBookPage(12, "Ausgrabung", "Geschichte der Stadt / Die Arbeiten des Sommers / galten vor allem der Aus|P1"),
			abbyyBookPage(13, "Ausgrabung", "Geschichte der Stadt."+body13), "de", true},
		{"chapter heading",
			abbyyBookPage(12, "Ausgrabung", "Geschichte der Stadt / Die Arbeiten des Sommers / galten vor allem der Aus|P1"),
			abbyyBookPage(13, "Ausgrabung", "Zweites Kapitel"+body13), "de", false},
		{"two languages", withLang(page12, "Page12_Block2", "de"), withLang(withLang(short13, "Page13_Block1", "cs"), "Page13_Block2", "cs"), "auto", false},
	} {
		for _, mode := range []Mode{Replace, Append, Alternative} {
			for _, conc := range []int{1, 2} {
				opt := Options{Source: c.source, Target: "en", File: "p", FastAlign: conc == 1, Mode: mode, Detector: langid.Shared()}
				a, b, _ := translatePair(t, c.first, c.second, opt)
				joined := a.Carried != nil
				if mode != Alternative && joined != c.joined {
					t.Fatalf("%s: the files join %v, want %v", c.name, joined, c.joined)
				}
				src := twoPages(c.first, c.second)
				be := upper()
				opt.Backend, opt.Concurrency = be, conc
				res, err := translateWithin(t, src, opt)
				if err != nil {
					t.Fatal(err)
				}
				got, want := pageRE.FindAll(res.Output, -1), [][]byte{pageRE.Find(a.Output), pageRE.Find(b.Output)}
				if len(got) != 2 || !bytes.Equal(got[0], want[0]) || !bytes.Equal(got[1], want[1]) {
					t.Errorf("%s %s conc=%d: the Pages differ from the two files'\ngot:\n%s\nwant:\n%s%s", c.name, mode, conc, bytes.Join(got, nil), want[0], want[1])
				}
				pair := upper()
				opt.Backend, opt.Next = pair, c.second
				a, _ = Translate(context.Background(), c.first, opt)
				opt.Next, opt.Prev = nil, a.Carried
				b, _ = Translate(context.Background(), c.second, opt)
				calls, pairCalls := slices.Clone(be.calls), slices.Clone(pair.calls)
				slices.Sort(calls)
				slices.Sort(pairCalls)
				if !slices.Equal(calls, pairCalls) {
					t.Errorf("%s %s conc=%d: backend saw\n%q\nthe two files\n%q", c.name, mode, conc, calls, pairCalls)
				}
				if res.Stats.Translated != a.Stats.Translated+b.Stats.Translated {
					t.Errorf("%s %s conc=%d: %d blocks translated, the files %d", c.name, mode, conc, res.Stats.Translated, a.Stats.Translated+b.Stats.Translated)
				}
				if !joined {
					continue
				}
				if !strings.Contains(strings.Join(be.calls, "\n"), "Ausgrabung") {
					t.Errorf("%s %s conc=%d: the whole word was not sent: %q", c.name, mode, conc, be.calls)
				}
				if mode == Replace && !bytes.Equal(MaskTranslatable(res.Output), MaskTranslatable(src)) {
					t.Errorf("%s conc=%d: more than what MaskTranslatable masks changed", c.name, conc)
				}
			}
		}
	}
}

// TestHyphenAcrossPagesMarked checks the joined file itself: the whole word
// went to the backend and its translation is written where the first part
// was; the second part's String is emptied (its box stays), its SUBS_*
// and the HYP are gone, and every other byte is kept.
func TestHyphenAcrossPagesMarked(t *testing.T) {
	src := twoPages(page12, page13)
	be := upper()
	res, err := translateWithin(t, src, Options{Backend: be, Source: "de", Target: "en", File: "p", Concurrency: 2})
	if err != nil {
		t.Fatal(err)
	}
	calls := "\n" + strings.Join(be.calls, "\n") + "\n"
	if !strings.Contains(calls, "Ausgrabung") || strings.Contains(calls, "\ngrabung") || strings.Contains(calls, "Aus\n") {
		t.Errorf("the backend saw the parts, not the whole word:%s", calls)
	}
	for _, want := range []string{
		`CONTENT="AUSGRABUNG" HEIGHT="38" WIDTH="57" VPOS="420" HPOS="834"/>`,
		`CONTENT="" HEIGHT="38" WIDTH="57" VPOS="420" HPOS="530"/>`,
		`CONTENT="BRUNNENS"`,
	} {
		if !bytes.Contains(res.Output, []byte(want)) {
			t.Errorf("output lacks %s:\n%s", want, res.Output)
		}
	}
	if bytes.Contains(res.Output, []byte("SUBS_")) || bytes.Contains(res.Output, []byte("<HYP")) {
		t.Errorf("SUBS_* or HYP left:\n%s", res.Output)
	}
	if !bytes.Equal(MaskTranslatable(res.Output), MaskTranslatable(src)) {
		t.Error("more than what MaskTranslatable masks changed")
	}
	if res.Stats.Translated != res.Stats.Units || res.Carried != nil || res.FromPrev != "" {
		t.Errorf("stats %+v, carried %+v, from prev %q", res.Stats, res.Carried, res.FromPrev)
	}
}

// errorsOn fails every call whose text holds word, as a backend that is
// down for one page.
type errorsOn struct {
	*fake
	word string
}

func (e errorsOn) Translate(ctx context.Context, text, src, tgt string) (string, error) {
	if strings.Contains(text, e.word) {
		return "", errors.New("connection refused")
	}
	return e.fake.Translate(ctx, text, src, tgt)
}

// TestHyphenAcrossPagesFirstNotDone: when the first Page's block is not
// translated the next Page stops waiting for it and nothing is carried:
// a first Page that fails ends the translation with its error (no Page
// waits forever), one whose block the guard rejects or that an earlier
// append run translated leaves the second Page's part in place, sent as
// its own word, and the word hyphenated between the second and the third
// Page is still joined.
func TestHyphenAcrossPagesFirstNotDone(t *testing.T) {
	appended, err := Translate(context.Background(), page12, Options{Backend: upper(), Source: "de", Target: "en", File: "p", Mode: Append})
	if err != nil {
		t.Fatal(err)
	}
	second := abbyyBookPage(13, "Ausgrabung", "grabung|P2 des alten Brunnens / im Hofe stand ein Brunnen-")
	third := abbyyBookPage(14, "", "haus aus Stein / Sie dauerte drei Wochen")
	failing := func(f *fake) backend.Backend { return errorsOn{f, "Sommers"} }
	rejecting := func(f *fake) backend.Backend { return &rejectingFirst{fake: f, n: -1} }
	for _, c := range []struct {
		name  string
		first []byte
		be    func(*fake) backend.Backend
		mode  Mode
		err   string
	}{
		{"first page fails", page12, failing, Replace, "page 1: backend fake (de->en): connection refused"},
		{"first page's block rejected", bytes.Replace(page12, []byte(`CONTENT="vor"`), []byte(`CONTENT="nein"`), 1), rejecting, Replace, ""},
		{"first page already translated", appended.Output, rejecting, Append, ""},
	} {
		for _, conc := range []int{1, 3} {
			f := upper()
			opt := Options{Backend: c.be(f), Source: "de", Target: "en", File: "p", Concurrency: conc, Mode: c.mode, FastAlign: true}
			pages := [][]byte{c.first, second, third}
			res, err := translateWithin(t, twoPages(twoPages(c.first, second), third), opt)
			if c.err != "" {
				if err == nil || !strings.Contains(err.Error(), c.err) {
					t.Errorf("%s conc=%d: error %v, want %q", c.name, conc, err, c.err)
				}
				continue
			}
			if err != nil {
				t.Fatalf("%s conc=%d: %v", c.name, conc, err)
			}
			calls := "\n" + strings.Join(f.calls, "\n") + "\n"
			if !strings.Contains(calls, "\ngrabung des") {
				t.Errorf("%s conc=%d: the second Page did not send its part:%s", c.name, conc, calls)
			}
			if !bytes.Contains(res.Output, []byte(`CONTENT="GRABUNG"`)) {
				t.Errorf("%s conc=%d: the second part was not translated as its own word:\n%s", c.name, conc, res.Output)
			}
			if !strings.Contains(calls, "Brunnenhaus") || strings.Contains(calls, "\nhaus") || !bytes.Contains(res.Output, []byte(`CONTENT="BRUNNENHAUS"`)) {
				t.Errorf("%s conc=%d: the word between the second and third Page was not joined:%s", c.name, conc, calls)
			}
			opt.Backend = c.be(upper())
			for i, r := range translateBook(t, opt, pages, []string{"p12", "p13", "p14"}) {
				if got := pageRE.FindAll(res.Output, -1); len(got) != 3 || !bytes.Equal(got[i], pageRE.Find(r.Output)) {
					t.Errorf("%s conc=%d: Page %d differs from its file's translation", c.name, conc, i+1)
				}
			}
		}
	}
}

// TestHyphenAcrossPagesRealSample counts the words the 79-page sample
// joins across its Pages: the Strings emptied when the file is translated
// whole, less those emptied when each Page is translated as a file of its
// own (joins inside a page). Every other byte is kept.
func TestHyphenAcrossPagesRealSample(t *testing.T) {
	src := readSample(t)
	pageEl := regexp.MustCompile(`(?s)<Page .*?</Page>`)
	at := pageEl.FindAllIndex(src, -1)
	head, foot := src[:at[0][0]], src[at[len(at)-1][1]:]
	opt := Options{Source: "cs", Target: "en", File: "MTX201501307_anon", FastAlign: true, Concurrency: 4}
	emptied := func(in, out []byte) int {
		return bytes.Count(out, []byte(`CONTENT=""`)) - bytes.Count(in, []byte(`CONTENT=""`))
	}
	opt.Backend = upper()
	whole, err := translateWithin(t, src, opt)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(MaskTranslatable(whole.Output), MaskTranslatable(src)) {
		t.Error("more than what MaskTranslatable masks changed")
	}
	inPages := 0
	for _, a := range at {
		one := slices.Concat(head, src[a[0]:a[1]], foot)
		opt.Backend = upper()
		res, err := Translate(context.Background(), one, opt)
		if err != nil {
			t.Fatal(err)
		}
		inPages += emptied(one, res.Output)
	}
	joins := emptied(src, whole.Output) - inPages
	t.Logf("%d Pages: %d words joined across two Pages, %d inside a Page", len(at), joins, inPages)
	if joins != sampleJoins {
		t.Errorf("%d words joined across Pages, want %d", joins, sampleJoins)
	}
}

// sampleJoins is how many words the sample joins across two of its Pages.
const sampleJoins = 0

// TestHyphenAcrossPagesRealBook: F. Klein's lecture (GDZ, ABBYY 10, one
// ALTO file a page) made one file of 11 Pages translates, four Pages at
// once, Page for Page as its files do when each is given the next and
// what the one before carried: "empfand", hyphenated from page 14 to page
// 15 below the running head and page number, is sent once, whole, and no
// other word is joined. Before, the file sent "em -" and "pfand" apart.
func TestHyphenAcrossPagesRealBook(t *testing.T) {
	pageEl := regexp.MustCompile(`(?s)<Page .*?</Page>`)
	files := readKlein(t)
	var one []byte
	for i, b := range files {
		at := pageEl.FindIndex(b)
		switch {
		case i == 0:
			one = append(one, b[:at[1]]...)
		case i == len(files)-1:
			one = append(one, b[at[0]:]...)
		default:
			one = append(one, b[at[0]:at[1]]...)
		}
	}
	be := upper()
	res, err := translateWithin(t, one, Options{Backend: be, Source: "de", Target: "en", File: "klein", FastAlign: true, Concurrency: 4})
	if err != nil {
		t.Fatal(err)
	}
	pair := upper()
	var want [][]byte
	for _, r := range translateBook(t, Options{Backend: pair, Source: "de", Target: "en", FastAlign: true}, files, kleinPages) {
		want = append(want, pageEl.Find(r.Output))
	}
	if got := pageEl.FindAll(res.Output, -1); !slices.EqualFunc(got, want, bytes.Equal) {
		t.Error("the file's Pages differ from the files translated one by one")
	}
	calls := strings.Join(be.calls, "\n")
	if strings.Count(calls, "empfand") != 1 || strings.Contains(calls, "em -") || strings.Contains(calls, "\npfand") {
		t.Errorf("the backend did not get \"empfand\" once, whole")
	}
	got, exp := slices.Clone(be.calls), slices.Clone(pair.calls)
	slices.Sort(got)
	slices.Sort(exp)
	if !slices.Equal(got, exp) {
		t.Error("the backend saw other texts than from the files one by one")
	}
	if !bytes.Equal(MaskTranslatable(res.Output), MaskTranslatable(one)) {
		t.Error("more than what MaskTranslatable masks changed")
	}
}
