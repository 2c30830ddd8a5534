package ct2backend

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// chatTemplate is the chat convention of an llm-family model, read from
// chat_template.jinja (as transformers 4.4x and later save it) or else the
// chat_template of tokenizer_config.json in the model folder. Only
// templates of the ChatML shape (<|im_start|>role\ncontent<|im_end|>\n,
// as Qwen 2.x and many others use) are rendered; they are rendered in Go,
// not by a Jinja engine, so any other template falls back to the plain
// prompt (see loadChatTemplate).
type chatTemplate struct {
	// EndTokens end decoding: the template's end of turn and the model's
	// end-of-sequence token.
	EndTokens []string
}

const (
	imStart = "<|im_start|>"
	imEnd   = "<|im_end|>"
)

// loadChatTemplate reads dir/chat_template.jinja and
// dir/tokenizer_config.json. It returns nil and a
// note when there is no template or its shape is not one rendered here
// (the caller logs the note and uses the plain prompt); an error only for a
// file that exists and cannot be read or parsed.
func loadChatTemplate(dir string) (*chatTemplate, string, error) {
	path := filepath.Join(dir, "tokenizer_config.json")
	b, err := os.ReadFile(path)
	if os.IsNotExist(err) {
		return nil, "no tokenizer_config.json: plain prompt", nil
	}
	if err != nil {
		return nil, "", fmt.Errorf("ct2: %w", err)
	}
	var cfg struct {
		ChatTemplate json.RawMessage `json:"chat_template"`
		EOS          json.RawMessage `json:"eos_token"`
	}
	if err := json.Unmarshal(b, &cfg); err != nil {
		return nil, "", fmt.Errorf("ct2: %s: %w", path, err)
	}
	var tmpl string
	if j, err := os.ReadFile(filepath.Join(dir, "chat_template.jinja")); err == nil {
		tmpl, path = string(j), filepath.Join(dir, "chat_template.jinja")
	} else if !os.IsNotExist(err) {
		return nil, "", fmt.Errorf("ct2: %w", err)
	} else if len(cfg.ChatTemplate) == 0 || json.Unmarshal(cfg.ChatTemplate, &tmpl) != nil || tmpl == "" {
		// absent, or a list of named templates (not rendered here)
		return nil, path + ": no chat_template.jinja and no single chat_template: plain prompt", nil
	}
	if !strings.Contains(tmpl, imStart) || !strings.Contains(tmpl, imEnd) {
		return nil, path + ": the chat template is not of the ChatML shape (<|im_start|> ... <|im_end|>): plain prompt", nil
	}
	if strings.Contains(tmpl, "<think>") {
		// reasoning templates add blocks around the reply that a plain
		// ChatML rendering does not reproduce
		return nil, path + ": the chat template has reasoning blocks (<think>), which are not rendered here: plain prompt", nil
	}
	t := &chatTemplate{EndTokens: []string{imEnd}}
	if eos := tokenString(cfg.EOS); eos != "" && eos != imEnd && !strings.ContainsAny(eos, " \t\n") {
		t.EndTokens = append(t.EndTokens, eos)
	}
	return t, "", nil
}

// tokenString reads a special token written as a string or as an object
// with a "content" field.
func tokenString(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var o struct {
		Content string `json:"content"`
	}
	if json.Unmarshal(raw, &o) == nil {
		return o.Content
	}
	return ""
}

// Render renders a system and a user message and opens the assistant's
// turn, as the template does with add_generation_prompt.
func (c *chatTemplate) Render(system, user string) string {
	var p strings.Builder
	if system != "" {
		p.WriteString(imStart + "system\n" + system + imEnd + "\n")
	}
	p.WriteString(imStart + "user\n" + user + imEnd + "\n")
	p.WriteString(imStart + "assistant\n")
	return p.String()
}
