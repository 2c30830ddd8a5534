package ct2backend

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// chatExpected is testdata/chat/expected.json: the chat templates (the
// project's own and those of published models) and what transformers'
// apply_chat_template renders from them (testdata/chat/render.py).
type chatExpected struct {
	Cases  []struct{ System, User string }
	Models []struct {
		Name, File string
		Local      bool
		BOS, EOS   *string
		Renders    []struct {
			Merged   bool
			Rendered string
		}
	}
}

// Chat templates render byte for byte as transformers renders them: the
// project's own test templates (testdata/chat/archivekit-*.jinja) always,
// the templates of published models (Qwen, Mistral, Phi, Llama, Gemma),
// which are not in the repository, when $ARCHIVEKIT_CHAT_TEMPLATES names a
// folder holding them (testdata/chat/README.md says where to get each).
func TestChatTemplatesOfPublishedModels(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("testdata", "chat", "expected.json"))
	if err != nil {
		t.Fatal(err)
	}
	var exp chatExpected
	if err := json.Unmarshal(b, &exp); err != nil {
		t.Fatal(err)
	}
	local := os.Getenv("ARCHIVEKIT_CHAT_TEMPLATES")
	for i, m := range exp.Models {
		t.Run(m.Name, func(t *testing.T) {
			path := filepath.Join("testdata", "chat", m.File)
			if m.Local {
				if local == "" {
					t.Skip("published model's template, not in the repository; set ARCHIVEKIT_CHAT_TEMPLATES to a folder holding " + m.File)
				}
				path = filepath.Join(local, m.File)
			}
			src, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			dir := t.TempDir()
			cfg := map[string]any{"chat_template": string(src)}
			if m.BOS != nil {
				cfg["bos_token"] = *m.BOS
			}
			if m.EOS != nil {
				// the object form, as many tokenizer_config.json files write it
				cfg["eos_token"] = map[string]any{"content": *m.EOS, "special": true}
			}
			if i%2 == 1 {
				// the other half reads the template from chat_template.jinja
				delete(cfg, "chat_template")
				writeFile(t, filepath.Join(dir, "chat_template.jinja"), string(src))
			}
			js, _ := json.Marshal(cfg)
			writeFile(t, filepath.Join(dir, "tokenizer_config.json"), string(js))
			tmpl, note, err := loadChatTemplate(dir)
			if err != nil || tmpl == nil {
				t.Fatalf("not loaded: %v %s", err, note)
			}
			tmpl.now = func() time.Time { return time.Date(2025, 3, 7, 12, 0, 0, 0, time.Local) }
			for j, c := range exp.Cases {
				want := m.Renders[j]
				got, err := tmpl.Render(c.System, c.User)
				if err != nil {
					t.Fatalf("case %d: %v", j, err)
				}
				if tmpl.merge != want.Merged {
					t.Errorf("case %d: instruction merged into the user message %v, want %v", j, tmpl.merge, want.Merged)
				}
				if got != want.Rendered {
					t.Errorf("case %d:\n got %q\nwant %q", j, got, want.Rendered)
				}
			}
			if m.EOS != nil && !strings.Contains(" "+strings.Join(tmpl.EndTokens, " ")+" ", " "+*m.EOS+" ") {
				t.Errorf("end tokens %q lack %q", tmpl.EndTokens, *m.EOS)
			}
		})
	}
}

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// The tokenizer files of the model folder: a leading special token that
// the tokenizer's post-processor adds is not written twice, and the end
// tokens of generation_config.json end decoding.
func TestChatTemplateTokenizerFiles(t *testing.T) {
	// the post-processor of Llama 3's, Gemma's and Mistral's tokenizer.json:
	// one special token before the text
	const tokenizer = `{"added_tokens": [{"id": 1, "content": "<s>"}, {"id": 32000, "content": "<|endoftext|>"}, {"id": 32007, "content": "<|end|>"}],
	  "post_processor": {"type": "Sequence", "processors": [{"type": "ByteLevel"},
	    {"type": "TemplateProcessing", "single": [{"SpecialToken": {"id": "<s>", "type_id": 0}}, {"Sequence": {"id": "A", "type_id": 0}}]}]}}`
	cases := []struct {
		template, eos, generation string
		prompt                    string
		end                       []string
	}{
		// archivekit-user-only writes bos_token itself: the tokenizer's <s> is the only one
		{"archivekit-user-only.jinja", "</s>", "", "[[start]]\n[USER] Přelož text.\n\nkostel\n[ASSISTANT]", []string{"</s>"}},
		// archivekit-turns writes none: nothing to leave out; its turn ends at <|end|>
		{"archivekit-turns.jinja", "<|endoftext|>", `{"eos_token_id": [32000, 32007]}`,
			"<|turn 1|>user\n### Přelož text.\n\nkostel<|end|>\n<|turn 2|>assistant\n", []string{"<|endoftext|>", "<|end|>"}},
	}
	for _, c := range cases {
		t.Run(c.template, func(t *testing.T) {
			dir := t.TempDir()
			src, err := os.ReadFile(filepath.Join("testdata", "chat", c.template))
			if err != nil {
				t.Fatal(err)
			}
			writeFile(t, filepath.Join(dir, "chat_template.jinja"), string(src))
			writeFile(t, filepath.Join(dir, "tokenizer_config.json"), `{"bos_token": "<s>", "eos_token": "`+c.eos+`"}`)
			writeFile(t, filepath.Join(dir, "tokenizer.json"), tokenizer)
			if c.generation != "" {
				writeFile(t, filepath.Join(dir, "generation_config.json"), c.generation)
			}
			tmpl, _, err := loadChatTemplate(dir)
			if err != nil {
				t.Fatal(err)
			}
			got, err := tmpl.Prompt("Přelož text.", "kostel")
			if err != nil || got != c.prompt {
				t.Errorf("prompt %q (%v), want %q", got, err, c.prompt)
			}
			if strings.Join(tmpl.EndTokens, " ") != strings.Join(c.end, " ") {
				t.Errorf("end tokens %q, want %q", tmpl.EndTokens, c.end)
			}
		})
	}
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "tokenizer_config.json"), `{"chat_template": "{{ messages[0].content }}"}`)
	writeFile(t, filepath.Join(dir, "generation_config.json"), `{`)
	if _, _, err := loadChatTemplate(dir); err == nil || !strings.Contains(err.Error(), "generation_config.json") {
		t.Errorf("broken generation_config.json: %v", err)
	}
}
