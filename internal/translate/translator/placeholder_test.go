package translator

import (
	"archivekit/internal/testenv"
	"context"
	"path/filepath"
	"strings"
	"testing"

	"archivekit/internal/translate/ct2backend"
	"archivekit/internal/translate/metadata"
	"archivekit/internal/translate/vocab"
)

// TestNMTPlaceholderFallback: a ct2 nmt model is sent vocabulary
// placeholders; the tiny random-weight model does not copy them, so each
// such call is redone without protection and no placeholder debris is
// written.
func TestNMTPlaceholderFallback(t *testing.T) {
	d := testenv.Fixtures(t)
	be, err := ct2backend.New(ct2backend.Config{ModelDir: filepath.Join(d, "ct2", "translator"), Family: ct2backend.NMT3,
		ComputeType: "float32", GuardMin: 0.01, GuardMax: 100, GuardLengthOnly: true, MaxLength: 16})
	if err != nil {
		t.Fatal(err)
	}
	defer be.Close()
	v, _ := vocab.Parse(strings.NewReader("source_lemma,target_translation\nkostrový hrob,inhumation grave\n"), "v.csv")
	fields, _ := metadata.ParseFields("fields", []byte("//arch:poznamka\n"))
	out, err := Translate(context.Background(), []byte(termsRecord), "t.xml", Options{Backend: be, Source: "cs", Fields: fields, Vocabulary: v})
	if err != nil {
		t.Fatal(err)
	}
	if out.Stats.PlaceholderCalls != 1 || out.Stats.PlaceholderFallbacks != 1 {
		t.Fatalf("placeholder calls %d, fallbacks %d", out.Stats.PlaceholderCalls, out.Stats.PlaceholderFallbacks)
	}
	if strings.Contains(string(out.Data), "QZX") {
		t.Fatalf("placeholder debris written:\n%s", out.Data)
	}
}
