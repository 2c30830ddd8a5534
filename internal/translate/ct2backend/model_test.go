package ct2backend

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestLongerThanPositions: a line under CT2_MAX_INPUT_CHARS whose tokens
// outnumber the model's 512 positions is cut finer and translated (it
// failed the whole document: "No position encodings are defined for
// positions >= 512").
func TestLongerThanPositions(t *testing.T) {
	dir := fixture(t, "translator")
	b, err := New(Config{ModelDir: dir, Family: NMT3, ComputeType: "float32", GuardMin: 0.001, GuardMax: 1000, GuardLengthOnly: true, MaxLength: 16})
	if err != nil {
		t.Fatal(err)
	}
	defer b.(*Backend).Close()
	// Letters the 120-piece vocabulary spells out one character a token:
	// 990 characters, 991 tokens.
	line := strings.Repeat("xq zw ", 165)
	// The random model may run a piece to the length limit, which the guard
	// rejects for that line (a line the document keeps untranslated, with
	// its reason); what must not come back is the model's position error.
	_, err = b.Translate(context.Background(), line, "cs", "en")
	if err != nil && (!errors.Is(err, ErrLengthGuard) || strings.Contains(err.Error(), "position")) {
		t.Fatalf("a line longer than the positions failed: %v", err)
	}
}

// TestLLMLongerThanPositions: an llm segment whose prompt and reply outgrow
// the model's 512 positions is translated in halves (it failed its
// document: "got position 1267").
func TestLLMLongerThanPositions(t *testing.T) {
	g, err := New(Config{ModelDir: fixture(t, "generator"), Family: LLM, ComputeType: "float32", GuardMin: 0.001, GuardMax: 1000, GuardLengthOnly: true, MaxLength: 12})
	if err != nil {
		t.Fatal(err)
	}
	defer g.(*LLMBackend).Close()
	for _, text := range []string{strings.Repeat("xq zw ", 165), strings.TrimSpace(strings.Repeat("xq zw xq zw\n", 90))} {
		_, err = g.Translate(context.Background(), text, "cs", "en")
		if err != nil && (!errors.Is(err, ErrLengthGuard) || strings.Contains(err.Error(), "position")) {
			t.Fatalf("a segment longer than the positions failed: %v", err)
		}
	}
}

// TestInfoNamesTheModel: the backend's description names its model by
// folder and digest, family and languages; the digest follows the files,
// not the folder's name.
func TestInfoNamesTheModel(t *testing.T) {
	src := fixture(t, "translator")
	copyDir := func(dst string) {
		t.Helper()
		entries, err := os.ReadDir(src)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.MkdirAll(dst, 0o755); err != nil {
			t.Fatal(err)
		}
		for _, e := range entries {
			b, err := os.ReadFile(filepath.Join(src, e.Name()))
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(dst, e.Name()), b, 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	a, other := filepath.Join(t.TempDir(), "a"), filepath.Join(t.TempDir(), "other-name")
	copyDir(a)
	copyDir(other)
	info := func(dir string) map[string]any {
		t.Helper()
		b, err := New(Config{ModelDir: dir, Family: NMT3, ComputeType: "float32", Languages: []string{"cs", "en"}})
		if err != nil {
			t.Fatal(err)
		}
		defer b.(*Backend).Close()
		return b.(*Backend).Info()
	}
	ia, io := info(a), info(other)
	if d, _ := ia["ct2_model_digest"].(string); !strings.HasPrefix(d, "sha256:") || d != io["ct2_model_digest"] {
		t.Errorf("digests %v and %v of the same files", ia["ct2_model_digest"], io["ct2_model_digest"])
	}
	if ia["ct2_model_dir"] != a || ia["ct2_model_family"] != "nmt3" || ia["ct2_languages"] != "cs,en" {
		t.Errorf("info %v", ia)
	}
	if err := os.WriteFile(filepath.Join(other, "config.json"), []byte("{}"), 0o644); err != nil {
		t.Fatal(err)
	}
	if d, err := folderDigest(other); err != nil || d == ia["ct2_model_digest"] {
		t.Errorf("a changed file keeps the digest: %v %v", d, err)
	}
}

// TestNMT3OnePair: a Marian model translates its pair in its direction only.
func TestNMT3OnePair(t *testing.T) {
	b := &Backend{cfg: Config{Family: NMT3, Languages: []string{"cs", "en"}}}
	if err := b.Supports(context.Background(), "cs", "en"); err != nil {
		t.Errorf("cs-en: %v", err)
	}
	for _, pair := range [][2]string{{"en", "cs"}, {"sk", "en"}, {"cs", "de"}} {
		if err := b.Supports(context.Background(), pair[0], pair[1]); err == nil || !strings.Contains(err.Error(), "it translates cs into en only") {
			t.Errorf("%s-%s: %v", pair[0], pair[1], err)
		}
	}
}

// TestNMT2NeedsNLLB: nmt2 given a model whose tokenizer does not keep the
// FLORES-200 codes whole (a Marian model) is refused naming the family;
// the NLLB-style model is taken.
func TestNMT2NeedsNLLB(t *testing.T) {
	for _, tt := range []struct {
		model string
		ok    bool
	}{{"nllb", true}, {"translator", false}} {
		b, err := New(Config{ModelDir: fixture(t, tt.model), Family: NMT2, ComputeType: "float32"})
		if err != nil {
			t.Fatal(err)
		}
		err = b.Supports(context.Background(), "cs", "en")
		b.(*Backend).Close()
		if (err == nil) != tt.ok || (err != nil && !strings.Contains(err.Error(), "NLLB-style model (CT2_MODEL_FAMILY=nmt2)")) {
			t.Errorf("%s as nmt2: %v", tt.model, err)
		}
	}
}
