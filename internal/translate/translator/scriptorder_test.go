package translator

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"golang.org/x/text/unicode/norm"

	"archivekit/internal/translate/alto"
	"archivekit/internal/translate/backend"
	"archivekit/internal/translate/translator/translatortest"
)

// pageXML is a PAGE-XML document with one region a line for each of
// regions: its primaryLanguage ("" for none) and its line's text.
func pageXML(regions ...[2]string) []byte {
	var b strings.Builder
	b.WriteString(`<?xml version="1.0" encoding="UTF-8"?>
<PcGts xmlns="http://schema.primaresearch.org/PAGE/gts/pagecontent/2019-07-15">
  <Metadata><Creator>test</Creator><Created>2026-11-27T00:00:00</Created><LastChange>2026-11-27T00:00:00</LastChange></Metadata>
  <Page imageFilename="p.png" imageWidth="100" imageHeight="100">
`)
	for i, r := range regions {
		lang := ""
		if r[0] != "" {
			lang = fmt.Sprintf(` primaryLanguage="%s"`, r[0])
		}
		fmt.Fprintf(&b, `    <TextRegion id="r%d"%s><Coords points="0,0 10,0 10,10 0,10"/>
      <TextLine id="l%d"><Coords points="0,0 10,0 10,5 0,5"/><TextEquiv><Unicode>%s</Unicode></TextEquiv></TextLine>
    </TextRegion>
`, i+1, lang, i+1, r[1])
	}
	b.WriteString("  </Page>\n</PcGts>\n")
	return []byte(b.String())
}

// rowsByLine are a run's log rows by their line.
func rowsByLine(out *Output) map[string]alto.LogRow {
	got := map[string]alto.LogRow{}
	for _, r := range out.Log {
		got[r.Line] = r
	}
	return got
}

// Czech written with combining accents (NFD) gets the language, and the
// rule choosing it, that the same line composed (NFC) gets, each line a
// document of its own; it is sent to the backend as it was written, byte
// for byte. (NFD lines went to Croatian, and left untouched where the
// pair is not offered.)
func TestNFDDetectedAsNFC(t *testing.T) {
	for _, l := range []string{
		"Dopis řediteli školy ve Vršovicích",
		"Nález bronzové sekery u Kostelce nad Orlicí",
		"Účetní kniha obecního úřadu ve Štěpánově",
		"Žádost o přidělení bytu v Dejvicích",
	} {
		var want string
		for _, form := range []norm.Form{norm.NFC, norm.NFD} {
			text := form.String(l)
			be, srv := newMT(t, translatortest.Config{Pairs: []string{"cs-en", "sk-en"}})
			out, err := Translate(context.Background(), pageXML([2]string{"", text}), "p.page.xml", Options{Backend: be, Source: "auto", Mode: alto.Replace})
			if err != nil {
				t.Errorf("%q in NFD %v: %v", l, form == norm.NFD, err)
				continue
			}
			r := out.Log[0]
			got := fmt.Sprintf("%s (%s), %s", r.Lang, r.LangSource, r.Status)
			if form == norm.NFC {
				want = got
			} else if got != want {
				t.Errorf("%q: NFD %s, NFC %s", l, got, want)
			}
			if sent := strings.Join(srv.Inputs(), "\n"); !strings.Contains(sent, text) {
				t.Errorf("%q in NFD %v not sent as written: sent %q", l, form == norm.NFD, sent)
			}
		}
	}
}

// Short Cyrillic lines, too short to detect, are never sent as the Czech
// of their document or of a given --source_lang cs: they are withheld as
// text in Cyrillic whose language could not be told (und-Cyrl, from the
// script check), as Arabic lines are. A line declared Ukrainian is sent
// as Ukrainian when the source is detected.
func TestShortCyrillicNotCzech(t *testing.T) {
	const czech = "Záchranný archeologický výzkum proběhl v obci Vraní během roku 2014 na ploše budoucí stavby."
	cyrillic := []string{"Тарас Шевченко", "12 березня 1921 р.", "Київ, Хрещатик 5"}
	regions := [][2]string{{"", czech}}
	for _, c := range cyrillic {
		regions = append(regions, [2]string{"", c})
	}
	regions = append(regions, [2]string{"Ukrainian", "Іван Франко"})
	for _, source := range []string{"auto", "cs"} {
		t.Run("source "+source, func(t *testing.T) {
			be, srv := newMT(t, translatortest.Config{Pairs: []string{"cs-en", "sk-en", "uk-en"}})
			out, err := Translate(context.Background(), pageXML(regions...), "p.page.xml", Options{Backend: be, Source: source, Mode: alto.Replace})
			if err != nil {
				t.Fatal(err)
			}
			got := rowsByLine(out)
			if r := got["l1"]; r.Lang != "cs" || r.Status != backend.OK {
				t.Errorf("Czech line: %+v", r)
			}
			for i, c := range cyrillic {
				r := got[fmt.Sprintf("l%d", i+2)]
				if r.Status != backend.UnsupportedLang || r.Lang != "und-Cyrl" || r.LangSource != alto.FromScript || r.Target != "" {
					t.Errorf("%q: status %s, language %s (%s); want unsupported_lang, und-Cyrl from script", c, r.Status, r.Lang, r.LangSource)
				}
			}
			declared := got["l5"]
			sent := strings.Join(srv.Inputs(), "\n")
			for _, c := range cyrillic {
				if strings.Contains(sent, c) {
					t.Errorf("%q sent to the backend", c)
				}
			}
			if source == "auto" && (declared.Lang != "uk" || declared.Status != backend.OK || !strings.Contains(sent, "Іван Франко")) {
				t.Errorf("line declared Ukrainian: %+v; want translated from uk", declared)
			}
			if source == "cs" && (declared.Lang != "und-Cyrl" || strings.Contains(sent, "Іван Франко")) {
				t.Errorf("line declared Ukrainian, source cs: %+v; want withheld", declared)
			}
			if w := strings.Join(out.Warnings, "\n"); !strings.Contains(w, "Cyrillic script: its language could not be told") {
				t.Errorf("warnings %q do not say why the Cyrillic lines were withheld", w)
			}
		})
	}
}

// A region whose PAGE-XML primaryLanguage names a language in a script of
// its own ("Greek", "Hebrew") is sent in that language when the backend
// offers it, as "Czech" or "Ukrainian" regions are; before, only the
// names of the languages the detector knows were read.
func TestPageLanguageNames(t *testing.T) {
	be, srv := newMT(t, translatortest.Config{Pairs: []string{"cs-en", "el-en", "he-en", "ka-en"}})
	src := pageXML(
		[2]string{"Greek", "Ἐν ἀρχῇ ἦν ὁ λόγος"},
		[2]string{"Hebrew", "ספר בראשית"},
		[2]string{"Georgian", "ვეფხისტყაოსანი"},
	)
	out, err := Translate(context.Background(), src, "p.page.xml", Options{Backend: be, Source: "auto", Mode: alto.Replace})
	if err != nil {
		t.Fatal(err)
	}
	got := rowsByLine(out)
	for line, want := range map[string]string{"l1": "el", "l2": "he", "l3": "ka"} {
		if r := got[line]; r.Lang != want || r.LangSource != alto.FromElement || r.Status != backend.OK {
			t.Errorf("%s %q: %s (%s), %s; want %s from the element, translated", line, r.Source, r.Lang, r.LangSource, r.Status, want)
		}
	}
	if n := len(srv.Inputs()); n == 0 {
		t.Error("nothing sent")
	}
}

// A document none of whose units was sent because the script check
// withheld them all says so, and how to send them, rather than that the
// backend does not offer their language (it offers he-en here).
func TestNothingTranslatedWithheld(t *testing.T) {
	cases := []struct {
		name, source string
		src          []byte
		want         []string
	}{
		{"Hebrew, declared Czech", "auto", pageXML(
			[2]string{"Czech", "ספר בראשית פרק ראשון"}, [2]string{"Czech", "בראשית ברא אלהים את השמים ואת הארץ"}),
			[]string{"of its 2 units, 2 withheld by the script check because their language could not be told (Hebrew script, und-Hebr)", "--source_lang he", "element language"}},
		{"Ukrainian, source cs", "cs", pageXML(
			[2]string{"", "Тарас Шевченко"}, [2]string{"", "Київ, Хрещатик 5"}, [2]string{"", "Зібрання творів у шести томах, том перший, поезії"}),
			[]string{"of its 3 units, 3 withheld by the script check because their language could not be told (Cyrillic script, und-Cyrl)", "source_lang", "element language"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			be, srv := newMT(t, translatortest.Config{Pairs: []string{"cs-en", "he-en", "uk-en"}})
			_, err := Translate(context.Background(), c.src, "p.page.xml", Options{Backend: be, Source: c.source, Mode: alto.Replace})
			if !errors.Is(err, ErrNothingTranslated) {
				t.Fatalf("err %v, want nothing translated", err)
			}
			for _, w := range c.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("%q\ndoes not say %q", err, w)
				}
			}
			if strings.Contains(err.Error(), "does not offer") {
				t.Errorf("%q blames the backend", err)
			}
			if n := len(srv.Inputs()); n != 0 {
				t.Errorf("%d texts sent", n)
			}
		})
	}
}
