package ct2backend

import (
	"context"
	"math"
	"testing"

	"archivekit/bindings/ct2"
)

// TestScore: the score of each translated line is the model's own score of
// that line's hypothesis (the log's score column).
func TestScore(t *testing.T) {
	dir := fixture(t, "translator")
	b, err := New(Config{ModelDir: dir, Family: NMT3, ComputeType: "float32", GuardMin: 0.01, GuardMax: 100, GuardLengthOnly: true, MaxLength: 64})
	if err != nil {
		t.Fatal(err)
	}
	defer b.(*Backend).Close()
	src := []string{"Pottery finds document a settlement.", "The trench uncovered a hearth."}
	if _, err := b.Translate(context.Background(), src[0]+"\n"+src[1], "cs", "en"); err != nil {
		t.Fatal(err)
	}
	tr, _ := ct2.NewTranslator(dir, ct2.Config{ComputeType: "float32"})
	defer tr.Close()
	want, _ := tr.Translate(src, ct2.TranslateOptions{MaxDecodingLength: 64})
	for i, s := range src {
		got, ok := b.(*Backend).Score(s)
		if !ok || math.Abs(got-float64(want[i].Score)) > 1e-3 {
			t.Errorf("score of %q: %v (%v), want %v", s, got, ok, want[i].Score)
		}
	}
	if _, ok := b.(*Backend).Score("never translated"); ok {
		t.Error("a score for a segment never translated")
	}
}
