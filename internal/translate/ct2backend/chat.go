package ct2backend

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/ardanlabs/jinja"
)

// chatTemplate is the chat convention of an llm-family model, read from
// chat_template.jinja (as transformers 4.4x and later save it) or else the
// chat_template of tokenizer_config.json in the model folder. It is
// rendered by a Jinja engine (github.com/ardanlabs/jinja, which follows
// transformers' settings: trim_blocks, lstrip_blocks) with what
// transformers' apply_chat_template gives a template: messages,
// add_generation_prompt, raise_exception, strftime_now, bos_token and
// eos_token, tools and documents none.
type chatTemplate struct {
	// EndTokens end decoding: <|im_end|> where the template writes it,
	// the eos_token of tokenizer_config.json and the eos_token_id of
	// generation_config.json (Gemma's <end_of_turn>, Phi-3's <|end|>).
	EndTokens []string
	// lead is the special token that the tokenizer's post-processor puts
	// before every text (Llama 3's <|begin_of_text|>, Gemma's <bos>);
	// Prompt leaves it out where the template wrote it already.
	lead string

	path     string // the file the template was read from
	dir      string // the model folder
	tmpl     *jinja.Template
	bos, eos *string // nil: not set in tokenizer_config.json
	// merge: the template refuses a system message, so the instruction
	// opens the user message, a blank line before the text.
	merge bool
	now   func() time.Time
}

const imEnd = "<|im_end|>"

// probe is rendered once at load, so that a template the engine cannot
// render fails there and not on the first record.
var probe = [2]string{"Translate the text.", "The text."}

// loadChatTemplate reads dir/chat_template.jinja and
// dir/tokenizer_config.json. It returns nil and a note when there is no
// template (the caller logs the note and uses the plain prompt), an error
// for a file that cannot be read or parsed and for a template that fails
// to parse or to render the probe message.
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
		BOS          json.RawMessage `json:"bos_token"`
		EOS          json.RawMessage `json:"eos_token"`
	}
	if err := json.Unmarshal(b, &cfg); err != nil {
		return nil, "", fmt.Errorf("ct2: %s: %w", path, err)
	}
	var src string
	if j, err := os.ReadFile(filepath.Join(dir, "chat_template.jinja")); err == nil {
		src, path = string(j), filepath.Join(dir, "chat_template.jinja")
	} else if !os.IsNotExist(err) {
		return nil, "", fmt.Errorf("ct2: %w", err)
	} else if len(cfg.ChatTemplate) == 0 || json.Unmarshal(cfg.ChatTemplate, &src) != nil || src == "" {
		// absent, or a list of named templates (not rendered here)
		return nil, path + ": no chat_template.jinja and no single chat_template: plain prompt", nil
	}
	t := &chatTemplate{path: path, dir: dir, bos: tokenValue(cfg.BOS), eos: tokenValue(cfg.EOS), now: time.Now}
	if t.tmpl, err = jinja.Compile(src); err != nil {
		return nil, "", fmt.Errorf("ct2: model %s: chat template %s does not parse: %w", dir, path, err)
	}
	if strings.Contains(src, imEnd) {
		t.EndTokens = append(t.EndTokens, imEnd)
	}
	if eos := t.eos; eos != nil && *eos != "" && *eos != imEnd && !strings.ContainsAny(*eos, " \t\n") {
		t.EndTokens = append(t.EndTokens, *eos)
	}
	if err := t.readTokenizer(); err != nil {
		return nil, "", err
	}
	if err := t.choose(); err != nil {
		return nil, "", err
	}
	return t, "", nil
}

// readTokenizer reads the leading special token of dir/tokenizer.json's
// post-processor and adds the end tokens of dir/generation_config.json
// (ids, named through the tokenizer's added tokens). Either file may be
// absent.
func (t *chatTemplate) readTokenizer() error {
	var tok struct {
		AddedTokens []struct {
			ID      int    `json:"id"`
			Content string `json:"content"`
		} `json:"added_tokens"`
		PostProcessor json.RawMessage `json:"post_processor"`
	}
	if err := readJSON(filepath.Join(t.dir, "tokenizer.json"), &tok); err != nil {
		return err
	}
	t.lead = leadingToken(tok.PostProcessor)
	var gen struct {
		EOS json.RawMessage `json:"eos_token_id"`
	}
	if err := readJSON(filepath.Join(t.dir, "generation_config.json"), &gen); err != nil {
		return err
	}
	var ids []int
	if json.Unmarshal(gen.EOS, &ids) != nil {
		var id int
		if json.Unmarshal(gen.EOS, &id) == nil {
			ids = []int{id}
		}
	}
	for _, id := range ids {
		for _, a := range tok.AddedTokens {
			if a.ID == id && !slices.Contains(t.EndTokens, a.Content) {
				t.EndTokens = append(t.EndTokens, a.Content)
			}
		}
	}
	return nil
}

// readJSON decodes the JSON file path into v; nothing when it is absent.
func readJSON(path string, v any) error {
	b, err := os.ReadFile(path)
	if os.IsNotExist(err) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("ct2: %w", err)
	}
	if err := json.Unmarshal(b, v); err != nil {
		return fmt.Errorf("ct2: %s: %w", path, err)
	}
	return nil
}

// leadingToken is the special token a tokenizers post-processor
// (TemplateProcessing, alone or in a Sequence) puts before a single text;
// "" when it puts none.
func leadingToken(raw json.RawMessage) string {
	var p struct {
		Type       string            `json:"type"`
		Processors []json.RawMessage `json:"processors"`
		Single     []struct {
			SpecialToken *struct {
				ID string `json:"id"`
			} `json:"SpecialToken"`
		} `json:"single"`
	}
	if json.Unmarshal(raw, &p) != nil {
		return ""
	}
	switch p.Type {
	case "TemplateProcessing":
		if len(p.Single) > 0 && p.Single[0].SpecialToken != nil {
			return p.Single[0].SpecialToken.ID
		}
	case "Sequence":
		for _, q := range p.Processors {
			if tok := leadingToken(q); tok != "" {
				return tok
			}
		}
	}
	return ""
}

// Prompt is Render as the bridge is given it. The bridge tokenises with
// the tokenizer's special tokens, transformers tokenises a chat prompt
// without them: a leading token that the template wrote and the tokenizer
// adds anyway is left out, so that it is there once.
func (t *chatTemplate) Prompt(system, user string) (string, error) {
	out, err := t.Render(system, user)
	if t.lead != "" {
		out = strings.TrimPrefix(out, t.lead)
	}
	return out, err
}

// choose renders the probe as a system and a user message; where the
// template refuses that (Gemma 2 and Mistral v0.3 raise) or loses part of
// either message (the engine is lenient where Jinja raises, see
// docs/translate.md), as one user message.
func (t *chatTemplate) choose() error {
	errSystem := t.tryProbe()
	if errSystem == nil {
		return nil
	}
	t.merge = true
	if err := t.tryProbe(); err != nil {
		return fmt.Errorf("ct2: model %s: chat template %s: with a system and a user message: %v; with one user message: %w", t.dir, t.path, errSystem, err)
	}
	return nil
}

// tryProbe renders the probe and checks that both messages are in it.
func (t *chatTemplate) tryProbe() error {
	out, err := t.render(probe[0], probe[1])
	if err != nil {
		return err
	}
	if !strings.Contains(out, probe[0]) || !strings.Contains(out, probe[1]) {
		return fmt.Errorf("it does not render the messages it is given (%q from %q and %q)", out, probe[0], probe[1])
	}
	return nil
}

// tokenValue reads a special token written as a string or as an object
// with a "content" field; nil when it is absent or null.
func tokenValue(raw json.RawMessage) *string {
	var s *string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var o struct {
		Content *string `json:"content"`
	}
	if json.Unmarshal(raw, &o) == nil {
		return o.Content
	}
	return nil
}

// Render renders a system and a user message and opens the assistant's
// turn, as apply_chat_template(messages, add_generation_prompt=True,
// tokenize=False) does.
func (t *chatTemplate) Render(system, user string) (string, error) {
	out, err := t.render(system, user)
	if err != nil {
		return "", fmt.Errorf("ct2: model %s: chat template %s: %w", t.dir, t.path, err)
	}
	return out, nil
}

// render is Render with errors that do not name the files.
func (t *chatTemplate) render(system, user string) (string, error) {
	user1 := map[string]any{"role": "user", "content": user}
	messages := []any{map[string]any{"role": "system", "content": system}, user1}
	switch {
	case system == "":
		messages = messages[1:]
	case t.merge:
		user1["content"] = system + "\n\n" + user
		messages = messages[1:]
	}
	var raised error
	data := map[string]jinja.Value{
		"messages":              jinja.FromGoValue(messages),
		"add_generation_prompt": jinja.NewBool(true),
		"tools":                 jinja.None(),
		"documents":             jinja.None(),
		"raise_exception": jinja.NewCallable("raise_exception", func(args []jinja.Value, _ map[string]jinja.Value) (jinja.Value, error) {
			msg := ""
			if len(args) > 0 && args[0].IsString() {
				msg = args[0].AsString()
			} else if len(args) > 0 {
				msg = args[0].String()
			}
			raised = errors.New("raise_exception: " + msg)
			return jinja.Undefined(), raised
		}),
		"strftime_now": jinja.NewCallable("strftime_now", func(args []jinja.Value, _ map[string]jinja.Value) (jinja.Value, error) {
			if len(args) != 1 || !args[0].IsString() {
				return jinja.Undefined(), errors.New("strftime_now takes one format string")
			}
			s, err := strftime(t.now(), args[0].AsString())
			return jinja.NewString(s), err
		}),
	}
	if t.bos != nil {
		data["bos_token"] = jinja.NewString(*t.bos)
	}
	if t.eos != nil {
		data["eos_token"] = jinja.NewString(*t.eos)
	}
	out, err := t.tmpl.RenderValues(data)
	if raised != nil {
		return "", raised
	}
	if err != nil {
		return "", fmt.Errorf("it does not render: %w", err)
	}
	return out, nil
}

// strftime formats tm as Python's datetime.strftime does for the
// directives chat templates use.
func strftime(tm time.Time, format string) (string, error) {
	var b strings.Builder
	for i := 0; i < len(format); i++ {
		if format[i] != '%' || i+1 == len(format) {
			b.WriteByte(format[i])
			continue
		}
		i++
		switch format[i] {
		case 'd':
			fmt.Fprintf(&b, "%02d", tm.Day())
		case 'm':
			fmt.Fprintf(&b, "%02d", int(tm.Month()))
		case 'Y':
			fmt.Fprintf(&b, "%d", tm.Year())
		case 'y':
			fmt.Fprintf(&b, "%02d", tm.Year()%100)
		case 'b':
			b.WriteString(tm.Month().String()[:3])
		case 'B':
			b.WriteString(tm.Month().String())
		case 'a':
			b.WriteString(tm.Weekday().String()[:3])
		case 'A':
			b.WriteString(tm.Weekday().String())
		case 'H':
			fmt.Fprintf(&b, "%02d", tm.Hour())
		case 'M':
			fmt.Fprintf(&b, "%02d", tm.Minute())
		case 'S':
			fmt.Fprintf(&b, "%02d", tm.Second())
		case 'j':
			fmt.Fprintf(&b, "%03d", tm.YearDay())
		case '%':
			b.WriteByte('%')
		default:
			return "", errors.New("strftime_now: unsupported directive %" + string(format[i]))
		}
	}
	return b.String(), nil
}
