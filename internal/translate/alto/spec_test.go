package alto

import (
	"context"
	"testing"
)

// TestSpecLogLineNum: spec translation 2.2, the log's line_num of an ALTO
// row is the id of its TextLine element; a TextLine without an ID gets its
// 1-based position in the block (as the hosted tool's real log, whose
// sample has no IDs: TestGatheringMatchesRealLog). page_num is 1-based.
func TestSpecLogLineNum(t *testing.T) {
	src := []byte(`<?xml version="1.0" encoding="UTF-8"?>
<alto xmlns="http://www.loc.gov/standards/alto/ns-v4#"><Layout>
<Page ID="P1"><PrintSpace><TextBlock ID="B1">
<TextLine ID="TL_7"><String CONTENT="kostrový"/><SP/><String CONTENT="hrob"/></TextLine>
<TextLine><String CONTENT="jáma"/></TextLine>
</TextBlock></PrintSpace></Page>
</Layout></alto>`)
	res, err := Translate(context.Background(), src, Options{Backend: upper(), Source: "cs", Target: "en", File: "doc"})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Log) != 2 {
		t.Fatalf("%d log rows, want 2: %+v", len(res.Log), res.Log)
	}
	for i, want := range []string{"TL_7", "2"} {
		if r := res.Log[i]; r.Line != want || r.Page != 1 || r.File != "doc" {
			t.Errorf("row %d: file %q page %d line_num %q, want doc, 1, %q", i, r.File, r.Page, r.Line, want)
		}
	}
}
