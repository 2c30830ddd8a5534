package ct2backend

import (
	"archivekit/internal/testenv"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"archivekit/bindings/ct2"
	"archivekit/internal/translate/backend"
	"archivekit/internal/translate/guard"
)

func fixture(t *testing.T, name string) string {
	d := testenv.Fixtures(t)
	return filepath.Join(d, "ct2", name)
}

func TestConfigFromEnv(t *testing.T) {
	env := func(m map[string]string) func(string) string { return func(k string) string { return m[k] } }
	dir := t.TempDir()
	file := filepath.Join(dir, "model.bin")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name string
		env  map[string]string
		want string // error substring; "" = ok
	}{
		{"no model dir", map[string]string{}, "CT2_MODEL_DIR is not set"},
		{"bad ratio", map[string]string{"CT2_MODEL_DIR": dir, "CT2_GUARD_MIN_RATIO": "x"}, "CT2_GUARD_MIN_RATIO"},
		{"sp model elsewhere", map[string]string{"CT2_MODEL_DIR": dir, "CT2_SP_MODEL": "/else/sp.model"}, "copy it there"},
		{"missing model dir", map[string]string{"CT2_MODEL_DIR": filepath.Join(dir, "absent")}, "CT2_MODEL_DIR=" + filepath.Join(dir, "absent") + " is not a folder"},
		{"model dir is a file", map[string]string{"CT2_MODEL_DIR": file}, "is not a folder"},
		{"unknown family", map[string]string{"CT2_MODEL_DIR": dir, "CT2_MODEL_FAMILY": "marian"}, `CT2_MODEL_FAMILY="marian"`},
		{"nmt3 without its pair", map[string]string{"CT2_MODEL_DIR": dir, "CT2_MODEL_FAMILY": "nmt3"}, "CT2_LANGUAGES must name it, source first"},
		{"nmt3 with three languages", map[string]string{"CT2_MODEL_DIR": dir, "CT2_MODEL_FAMILY": "nmt3", "CT2_LANGUAGES": "cs,de,en"}, "CT2_LANGUAGES must name it"},
		{"ok", map[string]string{"CT2_MODEL_DIR": dir, "CT2_LANGUAGES": "cs, EN", "CT2_MODEL_FAMILY": "NMT3"}, ""},
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
	b, err := New(Config{ModelDir: dir, Family: NMT3, ComputeType: "float32", Languages: []string{"cs", "en"}, GuardMin: 0.01, GuardMax: 100, GuardLengthOnly: true, MaxLength: 64})
	if err != nil {
		t.Fatal(err)
	}
	defer b.(*Backend).Close()
	if _, ok := b.(backend.Glossary); ok {
		t.Error("nmt families take no vocabulary, so they must not offer a glossary")
	}
	// two lines the random model ends before the length limit
	text := "Pottery finds document a settlement.\n\n  The trench uncovered a hearth. \n"
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
	want, _ := tr.Translate([]string{"Pottery finds document a settlement.", "The trench uncovered a hearth."}, ct2.TranslateOptions{MaxDecodingLength: 64})
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

// withoutChatTemplate is a copy of the generator fixture (linked files)
// without its chat template.
func withoutChatTemplate(t *testing.T) string {
	src := fixture(t, "generator")
	dir := t.TempDir()
	for _, name := range []string{"config.json", "model.bin", "tokenizer.json", "vocabulary.json"} {
		if err := os.Symlink(filepath.Join(src, name), filepath.Join(dir, name)); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// llmCase runs the llm backend on text and checks that it gives what the
// generator gives for prompt: the same text, or the truncation error.
func llmCase(t *testing.T, dir, prompt string, ends []string, run func() (string, error)) {
	t.Helper()
	gen, err := ct2.NewGenerator(dir, ct2.Config{ComputeType: "float32"})
	if err != nil {
		t.Fatal(err)
	}
	defer gen.Close()
	want, err := gen.Generate([]string{prompt}, ct2.GenerateOptions{MaxLength: 400, EndTokens: ends})
	if err != nil {
		t.Fatal(err)
	}
	got, err := run()
	if want[0].Truncated {
		t.Fatalf("the fixture runs this prompt into the limit; pick another text (backend: %v)", err)
	}
	if err != nil {
		t.Fatal(err)
	}
	if got != strings.TrimSpace(want[0].Text) {
		t.Errorf("got %q, the generator gives %q for the prompt", got, want[0].Text)
	}
}

func TestLLMPlainPromptAndGlossary(t *testing.T) {
	dir := withoutChatTemplate(t)
	b, err := New(Config{ModelDir: dir, Family: LLM, ComputeType: "float32", GuardMin: 0.001, GuardMax: 1000, GuardLengthOnly: true, MaxLength: 400})
	if err != nil {
		t.Fatal(err)
	}
	defer b.(*LLMBackend).Close()
	g, ok := b.(backend.Glossary)
	if !ok {
		t.Fatal("llm must offer a glossary")
	}
	terms := [][2]string{{"hrob", "grave"}, {"kostel", "church"}}
	p := Prompt("kostel a hrob", "cs", "en", terms)
	for _, s := range []string{"from Czech to English", "hrob = grave", "kostel = church", "Text:\nkostel a hrob"} {
		if !strings.Contains(p, s) {
			t.Errorf("prompt lacks %q:\n%s", s, p)
		}
	}
	llmCase(t, dir, p, nil, func() (string, error) {
		return g.TranslateWithGlossary(context.Background(), "kostel a hrob", "cs", "en", terms)
	})
}

// The fixture's ChatML template: rendered as transformers renders it, the
// instruction as the system message, decoding ended at <|im_end|> or the
// model's end token.
func TestLLMChatTemplate(t *testing.T) {
	dir := fixture(t, "generator")
	tmpl, note, err := loadChatTemplate(dir)
	if err != nil || tmpl == nil {
		t.Fatalf("template not read: %v %s", err, note)
	}
	if strings.Join(tmpl.EndTokens, " ") != "<|im_end|> <|endoftext|>" {
		t.Errorf("end tokens %q", tmpl.EndTokens)
	}
	b, err := os.ReadFile(filepath.Join(filepath.Dir(dir), "reference.json"))
	if err != nil {
		t.Fatal(err)
	}
	var ref struct {
		Chat []struct {
			Messages []struct{ Role, Content string }
			Rendered string
		}
	}
	if err := json.Unmarshal(b, &ref); err != nil {
		t.Fatal(err)
	}
	for _, c := range ref.Chat {
		var system, user string
		for _, m := range c.Messages {
			switch m.Role {
			case "system":
				system = m.Content
			case "user":
				user = m.Content
			}
		}
		if got, err := tmpl.Render(system, user); err != nil || got != c.Rendered {
			t.Errorf("rendered %q (%v), transformers %q", got, err, c.Rendered)
		}
	}
	be, err := New(Config{ModelDir: dir, Family: LLM, ComputeType: "float32", GuardMin: 0.001, GuardMax: 1000, GuardLengthOnly: true, MaxLength: 400})
	if err != nil {
		t.Fatal(err)
	}
	defer be.(*LLMBackend).Close()
	terms := [][2]string{{"hrob", "grave"}}
	prompt, err := tmpl.Render(Instruction("cs", "en", terms), "kostel a hrob")
	if err != nil {
		t.Fatal(err)
	}
	llmCase(t, dir, prompt, tmpl.EndTokens, func() (string, error) {
		return be.(backend.Glossary).TranslateWithGlossary(context.Background(), "kostel a hrob", "cs", "en", terms)
	})
}

// Templates load when the engine renders them, fall back to the plain
// prompt only when there is none, and are an error naming the file when
// they do not parse, raise, or lose the messages.
func TestChatTemplateLoading(t *testing.T) {
	chatml := "{% for m in messages %}{{'<|im_start|>' + m['role'] + '\\n' + m['content'] + '<|im_end|>\\n'}}{% endfor %}{% if add_generation_prompt %}{{'<|im_start|>assistant\\n'}}{% endif %}"
	cases := []struct {
		name, file, content string
		ok                  bool
		err                 string // "": no error
	}{
		{"none", "", "", false, ""},
		{"no template", "tokenizer_config.json", `{"eos_token": "</s>"}`, false, ""},
		{"named list", "tokenizer_config.json", `{"chat_template": [{"name": "default", "template": "x"}]}`, false, ""},
		{"chatml in config", "tokenizer_config.json", `{"chat_template": "` + chatml + `", "eos_token": {"content": "</s>"}}`, true, ""},
		{"does not parse", "chat_template.jinja", "{% for m in messages %}{{ m.content }}", false, "chat_template.jinja does not parse"},
		{"raises", "chat_template.jinja", "{{ raise_exception('Only user and assistant roles are supported!') }}", false, "chat_template.jinja: with a system and a user message: raise_exception: Only user and assistant roles are supported!; with one user message"},
		{"drops the messages", "chat_template.jinja", "<|start_header_id|>{{ role }}<|end_header_id|>", false, "chat_template.jinja: with a system and a user message: it does not render the messages"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			if c.file == "chat_template.jinja" {
				writeFile(t, filepath.Join(dir, "tokenizer_config.json"), `{"eos_token": {"content": "</s>"}}`)
			}
			if c.file != "" {
				writeFile(t, filepath.Join(dir, c.file), c.content)
			}
			tmpl, note, err := loadChatTemplate(dir)
			if c.err != "" {
				if err == nil || !strings.Contains(err.Error(), c.err) || !strings.Contains(err.Error(), dir) {
					t.Fatalf("got %v, want an error naming %s with %q", err, dir, c.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if (tmpl != nil) != c.ok || (tmpl == nil && note == "") {
				t.Fatalf("template %+v, note %q", tmpl, note)
			}
			if c.ok && strings.Join(tmpl.EndTokens, " ") != "<|im_end|> </s>" {
				t.Errorf("end tokens %q", tmpl.EndTokens)
			}
		})
	}
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "tokenizer_config.json"), "{")
	if _, _, err := loadChatTemplate(dir); err == nil || !strings.Contains(err.Error(), "tokenizer_config.json") {
		t.Errorf("broken config: %v", err)
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

// An output that reaches CT2_MAX_LENGTH is cut: it is a rejection naming
// the line, never a translation, and the other lines stay usable.
func TestTruncationIsRejected(t *testing.T) {
	b, err := New(Config{ModelDir: fixture(t, "translator"), Family: NMT3, ComputeType: "float32", GuardMin: 0.01, GuardMax: 100, GuardLengthOnly: true, MaxLength: 64})
	if err != nil {
		t.Fatal(err)
	}
	defer b.(*Backend).Close()
	// the random model runs the first line into the limit and ends the second
	_, err = b.Translate(context.Background(), "Sonda odkryla zahloubený objekt s pozůstatky ohniště.\nThe trench uncovered a hearth.", "cs", "en")
	r := guard.AsRejection(err)
	if r == nil || r.Reason != guard.Truncated || len(r.Lines) != 1 || r.Lines[0] != 0 {
		t.Fatalf("want a truncation of line 1, got %v", err)
	}
	if !strings.Contains(err.Error(), "CT2_MAX_LENGTH=64") {
		t.Errorf("error does not name the limit: %v", err)
	}
	if got := strings.Split(r.Output, "\n")[1]; got != "li" {
		t.Errorf("second line %q, want the model's ended translation", got)
	}

	g, err := New(Config{ModelDir: fixture(t, "generator"), Family: LLM, ComputeType: "float32", GuardMin: 0.001, GuardMax: 1000, GuardLengthOnly: true, MaxLength: 12})
	if err != nil {
		t.Fatal(err)
	}
	defer g.(*LLMBackend).Close()
	_, err = g.Translate(context.Background(), "kostel a hrob", "cs", "en")
	if r := guard.AsRejection(err); r == nil || r.Reason != guard.Truncated {
		t.Fatalf("llm: want a truncation, got %v", err)
	}
}

type seq2seqRef struct {
	Source, Text     string
	Tokens           []string
	SrcLang, TgtLang string `json:"-"`
}

func refs(t *testing.T, key string) []seq2seqRef {
	b, err := os.ReadFile(filepath.Join(fixture(t, ""), "reference.json"))
	if err != nil {
		t.Fatal(err)
	}
	var r map[string][]seq2seqRef
	json.Unmarshal(b, &r)
	if len(r[key]) == 0 {
		t.Fatalf("reference.json: no %s references", key)
	}
	return r[key]
}

// nmt2 sends the source-language token and forces the target one; the
// random model runs into the limit, so the output comes back only inside
// the truncation rejection: it must be Python's text for the same tokens.
func TestNMT2LanguageTokens(t *testing.T) {
	ref := refs(t, "nllb")[0] // ces_Latn → eng_Latn
	b, err := New(Config{ModelDir: fixture(t, "nllb"), Family: NMT2, ComputeType: "float32", GuardMin: 0.001, GuardMax: 1000, GuardLengthOnly: true, MaxLength: 16})
	if err != nil {
		t.Fatal(err)
	}
	defer b.(*Backend).Close()
	_, err = b.Translate(context.Background(), ref.Source, "cs", "en")
	r := guard.AsRejection(err)
	if len(ref.Tokens) < 16 || r == nil || r.Reason != guard.Truncated {
		t.Fatalf("want a truncation (Python decoded %d tokens), got %v", len(ref.Tokens), err)
	}
	if r.Output != strings.TrimSpace(ref.Text) {
		t.Errorf("output %q, Python %q", r.Output, ref.Text)
	}
	if err := b.Supports(context.Background(), "xx", "en"); err == nil || !strings.Contains(err.Error(), `"xx"`) {
		t.Errorf("unknown source language: %v", err)
	}
}

// nmt1 puts "<2xx>" before the source and refuses a tokenizer that splits it.
func TestNMT1TargetToken(t *testing.T) {
	ref := refs(t, "madlad")[0] // "<2en> ..."
	b, err := New(Config{ModelDir: fixture(t, "madlad"), Family: NMT1, ComputeType: "float32", GuardMin: 0.001, GuardMax: 1000, GuardLengthOnly: true, MaxLength: 16})
	if err != nil {
		t.Fatal(err)
	}
	defer b.(*Backend).Close()
	_, err = b.Translate(context.Background(), strings.TrimPrefix(ref.Source, "<2en> "), "cs", "en")
	r := guard.AsRejection(err)
	if len(ref.Tokens) < 16 || r == nil || r.Reason != guard.Truncated {
		t.Fatalf("want a truncation (Python decoded %d tokens), got %v", len(ref.Tokens), err)
	}
	if r.Output != strings.TrimSpace(ref.Text) {
		t.Errorf("output %q, Python %q", r.Output, ref.Text)
	}
	// the fixture's vocabulary has no <2fr>
	_, err = b.Translate(context.Background(), "Nálezy keramiky.", "cs", "fr")
	if err == nil || !strings.Contains(err.Error(), "splits the language token <2fr>") {
		t.Errorf("split token: %v", err)
	}
}
