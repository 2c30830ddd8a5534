package translator

import (
	"context"
	"strings"
	"sync"
	"testing"

	"archivekit/internal/translate/alto"
	"archivekit/internal/translate/backend"
	"archivekit/internal/translate/metadata"
	"archivekit/internal/translate/translator/translatortest"
)

// degenerateFirst answers each input line mentioning "hrob" with reply for
// its first n requests (counted per line text; n < 0: always), and other
// lines with the stand-in's translation: a model that degenerates on a
// segment now and then, or always.
func degenerateFirst(reply string, n int) func(string) string {
	var mu sync.Mutex
	seen := map[string]int{}
	return func(in string) string {
		mu.Lock()
		defer mu.Unlock()
		lines := strings.Split(in, "\n")
		for i, l := range lines {
			if strings.Contains(strings.ToLower(l), "hrob") && (n < 0 || seen[l] < n) {
				seen[l]++
				lines[i] = reply
			} else {
				lines[i] = translatortest.Translate(l)
			}
		}
		return strings.Join(lines, "\n")
	}
}

// TestEndOfDocumentRounds: a unit whose replies the guard rejected on its
// way (the batch's and the immediate retry's) is tried again after the rest
// of the document; when that reply passes, the unit is translated with
// status retried (unit status rerun) and counted in Stats.Rerun. With
// RetryRounds 0 it stays untranslated, as before the rounds; with more
// degenerate replies than rounds it stays untranslated too.
func TestEndOfDocumentRounds(t *testing.T) {
	fields, err := metadata.ParseFields("fields", []byte("//arch:popis\n//arch:poznamka\n"))
	if err != nil {
		t.Fatal(err)
	}
	for _, doc := range []struct {
		name, data string
		kind       Kind
	}{{"g.alto.xml", guardALTO, KindALTO}, {"g.xml", guardRecord, KindMetadata}, {"g.page.xml", guardPAGE, KindPAGE}, {"g.hocr", guardHOCR, KindHOCR}} {
		for _, tc := range []struct {
			name        string
			bad, rounds int
			translated  bool
		}{
			{"rounds 0", 2, 0, false},
			{"rounds 1", 2, 1, true},
			{"rounds 1, three bad replies", 3, 1, false},
			{"rounds 2, three bad replies", 3, 2, true},
		} {
			t.Run(doc.name+"/"+tc.name, func(t *testing.T) {
				be, srv := newMT(t, translatortest.Config{Garbage: degenerateFirst(strings.TrimSpace(strings.Repeat("grave ", 150)), tc.bad)})
				out, err := Translate(context.Background(), []byte(doc.data), doc.name,
					Options{Backend: be, Source: "cs", Fields: fields, Kind: doc.kind, RetryRounds: tc.rounds, Mode: alto.Replace})
				if err != nil {
					t.Fatal(err)
				}
				if strings.Contains(string(out.Data), "grave grave") {
					t.Fatalf("the degenerate reply was written:\n%s", out.Data)
				}
				var hrob []hrobRow
				for _, r := range out.Log {
					// the unit: block b2 (lines l3, l4), or the field
					// holding "Hrob".
					if r.Line == "l3" || r.Line == "l4" || strings.Contains(r.Source, "Hrob") {
						hrob = append(hrob, hrobRow{r.Status, r.Target, backend.UnitStatus(r.Status, r.Approx)})
					}
				}
				if len(hrob) == 0 {
					t.Fatalf("no log row for the hrob unit: %+v", out.Log)
				}
				written := ""
				for _, r := range hrob {
					written += r.target
					if tc.translated && (r.status != backend.Retried || r.unit != backend.UnitRerun) {
						t.Errorf("want the unit translated in an end round (retried/rerun): %+v", r)
					}
					if !tc.translated && (r.status != backend.Untranslated || r.target != "" || r.unit != "untranslated") {
						t.Errorf("want the unit untranslated: %+v", r)
					}
				}
				if tc.translated && written == "" {
					t.Errorf("the unit's rows have no target: %+v", hrob)
				}
				wantRerun, wantUntr := 0, 1
				if tc.translated {
					wantRerun, wantUntr = 1, 0
				}
				if out.Stats.Rerun != wantRerun || out.Stats.Untranslated != wantUntr || out.Stats.NeedsAttention() != (wantUntr > 0) {
					t.Errorf("stats: rerun %d untranslated %d, want %d and %d", out.Stats.Rerun, out.Stats.Untranslated, wantRerun, wantUntr)
				}
				if tc.translated && strings.Contains(string(out.Data), ">Hrob a jáma<") {
					t.Errorf("translation not written:\n%s", out.Data)
				}
				t.Logf("%d requests, stats %+v", srv.Posts.Load(), out.Stats)
			})
		}
	}
}

// guardPAGE and guardHOCR hold guardALTO's text as PAGE-XML and hOCR lines
// (their units): "Hrob a jáma" is one line.
const (
	guardPAGE = `<?xml version="1.0" encoding="UTF-8"?>
<PcGts xmlns="http://schema.primaresearch.org/PAGE/gts/pagecontent/2019-07-15"><Metadata><Creator>t</Creator></Metadata>
<Page imageFilename="a.png" imageWidth="10" imageHeight="10"><TextRegion id="r1">
<TextLine id="t1"><Coords points="0,0"/><TextEquiv><Unicode>Archeologický výzkum</Unicode></TextEquiv></TextLine>
<TextLine id="t2"><Coords points="0,0"/><TextEquiv><Unicode>Hrob a jáma</Unicode></TextEquiv></TextLine>
</TextRegion></Page></PcGts>`
	guardHOCR = `<!DOCTYPE html><html><head><meta name='ocr-capabilities' content='ocr_page ocr_line ocrx_word'/></head><body>
<div class='ocr_page' id='page_1' title='bbox 0 0 10 10'><p class='ocr_par' id='par_1'>
<span class='ocr_line' id='line_1'><span class='ocrx_word'>Archeologický</span> <span class='ocrx_word'>výzkum</span></span>
<span class='ocr_line' id='line_2'><span class='ocrx_word'>Hrob</span> <span class='ocrx_word'>a</span> <span class='ocrx_word'>jáma</span></span>
</p></div></body></html>`
)

type hrobRow struct {
	status       backend.Status
	target, unit string
}
