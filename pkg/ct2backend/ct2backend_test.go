package ct2backend

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"archivekit/bindings/ct2"
	"archivekit/pkg/backend"
)

func fixture(t *testing.T, name string) string {
	d := os.Getenv("ARCHIVEKIT_FIXTURES")
	if d == "" {
		t.Skip("ARCHIVEKIT_FIXTURES is not set: run through `make test`")
	}
	return filepath.Join(d, "ct2", name)
}

func TestConfigFromEnv(t *testing.T) {
	env := func(m map[string]string) func(string) string { return func(k string) string { return m[k] } }
	cases := []struct {
		name string
		env  map[string]string
		want string // error substring; "" = ok
	}{
		{"no model dir", map[string]string{}, "CT2_MODEL_DIR is not set"},
		{"bad ratio", map[string]string{"CT2_MODEL_DIR": "/m", "CT2_GUARD_MIN_RATIO": "x"}, "CT2_GUARD_MIN_RATIO"},
		{"sp model elsewhere", map[string]string{"CT2_MODEL_DIR": t.TempDir(), "CT2_SP_MODEL": "/else/sp.model"}, "copy it there"},
		{"ok", map[string]string{"CT2_MODEL_DIR": "/m", "CT2_LANGUAGES": "cs, EN", "CT2_MODEL_FAMILY": "NMT3"}, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cfg, err := ConfigFromEnv(env(c.env))
			if c.want == "" {
				if err != nil {
					t.Fatal(err)
				}
				if cfg.Family != "nmt3" || strings.Join(cfg.Languages, ",") != "cs,en" {
					t.Errorf("config %+v", cfg)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("error %v, want %q", err, c.want)
			}
		})
	}
}

func TestNMTTranslatesLineByLineKeepingLayout(t *testing.T) {
	dir := fixture(t, "translator")
	b, err := New(Config{ModelDir: dir, Family: NMT3, ComputeType: "float32", Languages: []string{"cs", "en"}, GuardMin: 0.01, GuardMax: 100, GuardLengthOnly: true, MaxLength: 16})
	if err != nil {
		t.Fatal(err)
	}
	defer b.(*Backend).Close()
	if _, ok := b.(backend.Glossary); ok {
		t.Error("nmt families take no vocabulary, so they must not offer a glossary")
	}
	text := "Nálezy keramiky dokládají osídlení.\n\n  The trench uncovered a hearth. \n"
	got, err := b.Translate(context.Background(), text, "cs", "en")
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(got, "\n")
	if len(lines) != 4 || lines[1] != "" || lines[3] != "" || !strings.HasPrefix(lines[2], "  ") || !strings.HasSuffix(lines[2], " ") {
		t.Fatalf("layout not kept: %q", got)
	}
	// each line equals the model's own translation of that line
	tr, _ := ct2.NewTranslator(dir, ct2.Config{ComputeType: "float32"})
	defer tr.Close()
	want, _ := tr.Translate([]string{"Nálezy keramiky dokládají osídlení.", "The trench uncovered a hearth."}, ct2.TranslateOptions{MaxDecodingLength: 16})
	if lines[0] != strings.TrimSpace(want[0].Text) || strings.TrimSpace(lines[2]) != strings.TrimSpace(want[1].Text) {
		t.Errorf("got %q, want lines %q and %q", got, want[0].Text, want[1].Text)
	}
	if err := b.Supports(context.Background(), "de", "en"); err == nil || !strings.Contains(err.Error(), "de-en") {
		t.Errorf("unsupported pair: %v", err)
	}
}

func TestLengthGuard(t *testing.T) {
	b, err := New(Config{ModelDir: fixture(t, "translator"), Family: NMT3, ComputeType: "float32", GuardMin: 0.9, GuardMax: 1.1, MaxLength: 16})
	if err != nil {
		t.Fatal(err)
	}
	defer b.(*Backend).Close()
	// the random test model answers 16 tokens whatever the input: a
	// one-letter source is far outside 0.9..1.1
	_, err = b.Translate(context.Background(), "a", "cs", "en")
	if !errors.Is(err, ErrLengthGuard) {
		t.Fatalf("want a length-guard error, got %v", err)
	}
}

func TestLLMPromptAndGlossary(t *testing.T) {
	dir := fixture(t, "generator")
	b, err := New(Config{ModelDir: dir, Family: LLM, ComputeType: "float32", GuardMin: 0.001, GuardMax: 1000, GuardLengthOnly: true, MaxLength: 12})
	if err != nil {
		t.Fatal(err)
	}
	defer b.(*LLMBackend).Close()
	g, ok := b.(backend.Glossary)
	if !ok {
		t.Fatal("llm must offer a glossary")
	}
	terms := [][2]string{{"hrob", "grave"}, {"kostel", "church"}}
	got, err := g.TranslateWithGlossary(context.Background(), "kostel a hrob", "cs", "en", terms)
	if err != nil {
		t.Fatal(err)
	}
	p := Prompt("kostel a hrob", "cs", "en", terms)
	for _, s := range []string{"from Czech to English", "hrob = grave", "kostel = church", "Text:\nkostel a hrob"} {
		if !strings.Contains(p, s) {
			t.Errorf("prompt lacks %q:\n%s", s, p)
		}
	}
	gen, _ := ct2.NewGenerator(dir, ct2.Config{ComputeType: "float32"})
	defer gen.Close()
	want, _ := gen.Generate([]string{p}, ct2.GenerateOptions{MaxLength: 12})
	if got != strings.TrimSpace(want[0].Text) {
		t.Errorf("got %q, the generator gives %q for the prompt", got, want[0].Text)
	}
}

func TestBadModelDirectory(t *testing.T) {
	if _, err := New(Config{ModelDir: t.TempDir(), Family: NMT3}); err == nil || !strings.Contains(err.Error(), "not a CTranslate2 model") {
		t.Errorf("got %v", err)
	}
	if _, err := New(Config{ModelDir: t.TempDir(), Family: "nmt9"}); err == nil || !strings.Contains(err.Error(), "unknown model family") {
		t.Errorf("got %v", err)
	}
}
