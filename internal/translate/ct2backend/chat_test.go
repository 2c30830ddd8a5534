package ct2backend

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// chatExpected is testdata/chat/expected.json: the chat templates of
// published models and what transformers' apply_chat_template renders from
// them (testdata/chat/render.py).
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

// The templates of real models render byte for byte as transformers
// renders them. Templates whose licence keeps them out of the repository
// (Llama, Gemma) are read from $ARCHIVEKIT_CHAT_TEMPLATES when it is set
// (testdata/chat/README.md says where they come from).
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
					t.Skip("licence keeps the template out of the repository; set ARCHIVEKIT_CHAT_TEMPLATES to a folder holding " + m.File)
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
