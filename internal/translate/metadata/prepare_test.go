package metadata

import (
	"context"
	"reflect"
	"testing"
)

// preparingBE records what the pipeline announces (backend.Preparer).
type preparingBE struct {
	upperBE
	prepared [][]string // "lang:tgt", then the segments
}

func (b *preparingBE) Prepare(ctx context.Context, segments []string, src, tgt string) {
	b.prepared = append(b.prepared, append([]string{src + ":" + tgt}, segments...))
}

// TestPrepare: the fields with text are announced once per source
// language, before any translation, in document order; fields in the
// target language and empty ones are not, and each field is detected once.
func TestPrepare(t *testing.T) {
	doc := "<amcr xmlns=\"https://api.aiscr.cz/schema/amcr/2.1/\"><dokument>" +
		"<popis>jedna</popis><poznamka>dva</poznamka><poznamka> </poznamka><popis>tri</popis></dokument></amcr>"
	fs := compileAll(t, "//arch:popis", "//arch:poznamka", "//arch:dokument/arch:popis")
	be := &preparingBE{}
	if _, err := Translate(context.Background(), []byte(doc), Options{Backend: be, Source: "cs", Target: "en", Fields: fs}); err != nil {
		t.Fatal(err)
	}
	want := [][]string{{"cs:en", "jedna", "tri", "dva"}}
	if !reflect.DeepEqual(be.prepared, want) || be.calls != 3 {
		t.Errorf("prepared %q before %d calls, want %q before 3", be.prepared, be.calls, want)
	}

	det := &countingDetector{langs: map[string]string{"jedna": "cs", "dva": "sk", "tri": "en"}}
	be = &preparingBE{}
	// One-word fields: detected only with a minimum length of 0 (the
	// default order gives them the document's language).
	res, err := Translate(context.Background(), []byte(doc), Options{Backend: be, Target: "en", Detector: det, Fields: fs, Order: &detectAll})
	if err != nil {
		t.Fatal(err)
	}
	want = [][]string{{"cs:en", "jedna"}, {"sk:en", "dva"}}
	if !reflect.DeepEqual(be.prepared, want) || res.Languages["sk"] != 1 || res.InTarget != 1 {
		t.Errorf("prepared %q (languages %v), want %q", be.prepared, res.Languages, want)
	}
	if det.fields != 3 {
		t.Errorf("%d field detections, want 3 (one per field)", det.fields)
	}
}

// countingDetector answers langs[text] with confidence 0.9 and counts the
// detections of the texts it knows (fields, not the document).
type countingDetector struct {
	langs  map[string]string
	fields int
}

func (d *countingDetector) Detect(text string) (string, float64) {
	if l, ok := d.langs[text]; ok {
		d.fields++
		return l, 0.9
	}
	return "cs", 0.9
}
