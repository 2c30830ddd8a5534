package translator

import (
	"bytes"
	"context"
	"encoding/csv"
	"slices"
	"testing"

	"archivekit/internal/translate/backend"
	"archivekit/internal/translate/metadata"
)

// TestInTargetRows: a unit already in the target language is left as it
// is, and its log row says so (status and unit_status in_target, no
// translation), in every format: the log has a row for every unit, and
// segment_status counts it. Before, ALTO, PAGE and metadata wrote no row
// and hOCR wrote one saying ok with an empty translation.
func TestInTargetRows(t *testing.T) {
	const (
		en = "The excavation report describes the church and the graves found near the northern wall of the nave."
		cs = "Výzkum kostela odkryl hroby u severní zdi lodi a zbytky starší stavby ze třináctého století."
	)
	fields, err := metadata.ParseFields("fields", []byte("//abstract\n//description\n"))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name, doc string
		kind      Kind
	}{
		{"a.alto.xml", `<alto xmlns="http://www.loc.gov/standards/alto/ns-v4#"><Layout><Page ID="p1"><PrintSpace>` +
			`<TextBlock ID="b1"><TextLine ID="l1"><String CONTENT="` + en + `"/></TextLine></TextBlock>` +
			`<TextBlock ID="b2"><TextLine ID="l2"><String CONTENT="` + cs + `"/></TextLine></TextBlock>` +
			`</PrintSpace></Page></Layout></alto>`, KindALTO},
		{"p.page.xml", `<PcGts xmlns="http://schema.primaresearch.org/PAGE/gts/pagecontent/2019-07-15"><Page imageFilename="a.png" imageWidth="9" imageHeight="9">` +
			`<TextRegion id="r1"><TextLine id="l1"><TextEquiv><Unicode>` + en + `</Unicode></TextEquiv></TextLine></TextRegion>` +
			`<TextRegion id="r2"><TextLine id="l2"><TextEquiv><Unicode>` + cs + `</Unicode></TextEquiv></TextLine></TextRegion>` +
			`</Page></PcGts>`, KindPAGE},
		{"s.hocr", `<html><head><meta name='ocr-capabilities' content='ocr_page ocr_line ocrx_word'/></head><body><div class='ocr_page' title='bbox 0 0 9 9'>` +
			`<p class='ocr_par'><span class='ocr_line' id='l1'><span class='ocrx_word'>` + en + `</span></span></p>` +
			`<p class='ocr_par'><span class='ocr_line' id='l2'><span class='ocrx_word'>` + cs + `</span></span></p>` +
			`</div></body></html>`, KindHOCR},
		{"r.xml", `<record><abstract>` + en + `</abstract><description>` + cs + `</description></record>`, KindMetadata},
	} {
		out, err := Translate(context.Background(), []byte(c.doc), c.name, Options{Backend: standIn(t), Source: "auto", Target: "en", FastAlign: true, Kind: c.kind, Fields: fields})
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		var statuses []backend.Status
		for _, r := range out.Log {
			statuses = append(statuses, r.Status)
			if r.Status == backend.InTarget && (r.Source != en || r.Target != "" || r.Lang != "en") {
				t.Errorf("%s: in-target row %+v, want the English text, no translation, lang en", c.name, r)
			}
		}
		if !slices.Equal(statuses, []backend.Status{backend.InTarget, backend.OK}) && !slices.Equal(statuses, []backend.Status{backend.OK, backend.InTarget}) {
			t.Errorf("%s: log statuses %v, want one in_target and one ok", c.name, statuses)
		}
		if out.Statuses["in_target"] != 1 || out.Statuses["ok"] != 1 || out.Stats.InTarget != 1 {
			t.Errorf("%s: segment statuses %v, in target %d", c.name, out.Statuses, out.Stats.InTarget)
		}
		var buf bytes.Buffer
		if err := WriteLog(&buf, out.Log, "auto", "en"); err != nil {
			t.Fatal(err)
		}
		recs, err := csv.NewReader(&buf).ReadAll()
		if err != nil {
			t.Fatal(err)
		}
		found := false
		for _, r := range recs[1:] {
			if r[5] == "in_target" && r[7] == "in_target" && r[4] == "" {
				found = true
			}
		}
		if !found {
			t.Errorf("%s: no in_target row in the log CSV:\n%s", c.name, buf.String())
		}
	}
}
