package translator

import (
	"context"
	"errors"
	"strings"
	"testing"

	"archivekit/internal/translate/alto"
	"archivekit/internal/translate/mtapi"
	"archivekit/internal/translate/translator/translatortest"
)

const (
	page2019 = `<?xml version="1.0" encoding="UTF-8"?>
<pc:PcGts xmlns:pc="http://schema.primaresearch.org/PAGE/gts/pagecontent/2019-07-15"><pc:Page imageFilename="a.png" imageWidth="9" imageHeight="9">
  <pc:TextRegion id="r1">
    <pc:TextLine id="l1">
      <pc:TextEquiv index="1"><pc:Unicode>Hrob a jáma</pc:Unicode></pc:TextEquiv>
    </pc:TextLine>
  </pc:TextRegion>
</pc:Page></pc:PcGts>`
	page2013 = `<PcGts xmlns="https://schema.primaresearch.org/PAGE/gts/pagecontent/2013-07-15"><Page><TextRegion id="r1"><TextLine id="l1"><TextEquiv><Unicode>sonda</Unicode></TextEquiv></TextLine></TextRegion></Page></PcGts>`
	hocrDoc  = `<!DOCTYPE html>
<html><head><meta name='ocr-capabilities' content='ocr_page ocr_line ocrx_word'/></head><body>
<div class='ocr_page' title='bbox 0 0 9 9'><span class='ocr_line'><span class='ocrx_word'>hrob</span> <span class='ocrx_word'>kostel</span></span></div>
</body></html>`
)

// TestDetectKind: a document's kind is found by its root element,
// whatever its name.
func TestDetectKind(t *testing.T) {
	for _, c := range []struct {
		src  string
		want Kind
	}{
		{`<alto xmlns="http://www.loc.gov/standards/alto/ns-v4#"/>`, KindALTO},
		{page2019, KindPAGE},
		{page2013, KindPAGE},
		{hocrDoc, KindHOCR},
		{`<html><body><p class="x">a</p></body></html>`, KindMetadata},
		{`<PcGts/>`, KindMetadata},
		{`<amcr xmlns="https://api.aiscr.cz/schema/amcr/2.2/"/>`, KindMetadata},
	} {
		if got := DetectKind([]byte(c.src)); got != c.want {
			t.Errorf("DetectKind(%.40q) = %q, want %q", c.src, got, c.want)
		}
	}
}

func standIn(t *testing.T) *mtapi.Backend {
	t.Helper()
	api := translatortest.New(translatortest.Config{})
	t.Cleanup(api.Close)
	be := mtapi.New(mtapi.Config{BaseURL: api.URL})
	t.Cleanup(func() { be.Close() })
	return be
}

// TestTranslatePAGE: PAGE goes through pagexml, appending by default; a
// PAGE 2013 document gives its sidecar; replace mode when asked.
func TestTranslatePAGE(t *testing.T) {
	be := standIn(t)
	out, err := Translate(context.Background(), []byte(page2019), "p.xml", Options{Backend: be, Source: "cs"})
	if err != nil {
		t.Fatal(err)
	}
	want := "      <pc:TextEquiv index=\"1\"><pc:Unicode>Hrob a jáma</pc:Unicode></pc:TextEquiv>\n      <pc:TextEquiv index=\"2\" comments=\"en-t-cs-t0-und\"><pc:Unicode>grave and pit</pc:Unicode></pc:TextEquiv>\n"
	if out.Kind != KindPAGE || out.Name != "p_en.xml" || out.Sidecar || out.Tag != "en-t-cs-t0-und" || !strings.Contains(string(out.Data), want) {
		t.Errorf("kind %q, name %q, sidecar %v:\n%s", out.Kind, out.Name, out.Sidecar, out.Data)
	}
	if out.Stats.Units != 1 || out.Stats.Translated != 1 || len(out.Log) != 1 || out.Log[0].Line != "l1" || out.Statuses["ok"] != 1 {
		t.Errorf("stats %+v, log %+v", out.Stats, out.Log)
	}
	if !strings.HasPrefix(out.Summary, "p: batch summary: 1 clean batches") {
		t.Errorf("summary %q", out.Summary)
	}

	out, err = Translate(context.Background(), []byte(page2013), "old.xml", Options{Backend: be, Source: "cs"})
	if err != nil {
		t.Fatal(err)
	}
	if !out.Sidecar || !strings.Contains(string(out.Data), `<TextLine id="l1" comments="en-t-cs-t0-und"><TextEquiv><Unicode>trench</Unicode>`) {
		t.Errorf("PAGE 2013: sidecar %v:\n%s", out.Sidecar, out.Data)
	}

	out, err = Translate(context.Background(), []byte(page2019), "p.xml", Options{Backend: be, Source: "cs", Mode: alto.Replace})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(out.Data), `<pc:TextEquiv index="1" comments="en-t-cs-t0-und"><pc:Unicode>grave and pit</pc:Unicode>`) {
		t.Errorf("replace:\n%s", out.Data)
	}
	if _, err := Translate(context.Background(), []byte(hocrDoc), "h.xml", Options{Backend: be, Source: "cs", Kind: KindPAGE}); err == nil {
		t.Error("forcing PAGE on hOCR is no error")
	}
}

// TestTranslateHOCR: hOCR, DOCTYPE and all, goes through hocr into a
// parallel document.
func TestTranslateHOCR(t *testing.T) {
	out, err := Translate(context.Background(), []byte(hocrDoc), "scan.hocr", Options{Backend: standIn(t), Source: "cs"})
	if err != nil {
		t.Fatal(err)
	}
	want := strings.NewReplacer("ocrx_word'>hrob", "ocrx_word'>grave", "ocrx_word'>kostel", "ocrx_word'>KOSTEL",
		"title='bbox 0 0 9 9'", `title='bbox 0 0 9 9' lang="en-t-cs-t0-und"`, "ocrx_word'/>", "ocrx_word ocrp_lang'/>").Replace(hocrDoc)
	if out.Kind != KindHOCR || out.Name != "scan_en.hocr" || string(out.Data) != want {
		t.Errorf("kind %q, name %q:\n%s\nwant\n%s", out.Kind, out.Name, out.Data, want)
	}
}

// TestPageWithoutText: a page document without text (a blank page of a
// book) is written as it was, byte for byte, and said to hold no text; a
// metadata record none of whose fields matched still fails.
func TestPageWithoutText(t *testing.T) {
	for _, c := range []struct{ name, src string }{
		{"blank.alto.xml", "\ufeff<?xml version=\"1.0\"?>\r\n<alto xmlns=\"http://www.loc.gov/standards/alto/ns-v3#\"><Layout><Page ID=\"P2\"><PrintSpace/></Page></Layout></alto>\r\n"},
		{"strings-without-text.alto.xml", `<alto xmlns="http://www.loc.gov/standards/alto/ns-v4#"><Layout><Page ID="p"><PrintSpace><TextBlock ID="b"><TextLine ID="l"><String CONTENT=" "/></TextLine></TextBlock></PrintSpace></Page></Layout></alto>`},
		{"blank.xml", `<PcGts xmlns="http://schema.primaresearch.org/PAGE/gts/pagecontent/2019-07-15"><Page imageFilename="p.tif" imageWidth="9" imageHeight="9"><TextRegion id="r"><Coords points="0,0 9,0 9,9"/></TextRegion></Page></PcGts>`},
		{"blank.hocr", `<html><body><div class='ocr_page'></div></body></html>`},
	} {
		t.Run(c.name, func(t *testing.T) {
			out, err := Translate(context.Background(), []byte(c.src), c.name, Options{Backend: standIn(t), Source: "cs"})
			if err != nil {
				t.Fatal(err)
			}
			if !out.NoText || string(out.Data) != c.src || out.Stats.Calls != 0 || len(out.Log) != 0 {
				t.Errorf("no text %v, %d calls, %d log rows, data:\n%q\nwant\n%q", out.NoText, out.Stats.Calls, len(out.Log), out.Data, c.src)
			}
			if !strings.Contains(out.Summary, "no text") {
				t.Errorf("summary %q", out.Summary)
			}
		})
	}
	_, err := Translate(context.Background(), []byte(`<record><title>Kronika</title></record>`), "r.xml", Options{Backend: standIn(t), Source: "cs", Kind: KindMetadata, Fields: loadFields(t)})
	if !errors.Is(err, ErrNothingTranslated) {
		t.Errorf("record without a field of the list: %v, want nothing translated", err)
	}
}

// TestOutputTag: every kind's output names its machine translation with
// the tag the PAGE and hOCR documents carry.
func TestOutputTag(t *testing.T) {
	alto := `<alto xmlns="http://www.loc.gov/standards/alto/ns-v4#"><Layout><Page ID="p"><PrintSpace><TextBlock ID="b"><TextLine ID="l"><String CONTENT="hrob"/></TextLine></TextBlock></PrintSpace></Page></Layout></alto>`
	for name, src := range map[string]string{"a.alto.xml": alto, "h.hocr": hocrDoc} {
		out, err := Translate(context.Background(), []byte(src), name, Options{Backend: standIn(t), Source: "cs", Target: "en"})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if out.Tag != "en-t-cs-t0-und" {
			t.Errorf("%s: tag %q", name, out.Tag)
		}
	}
}
