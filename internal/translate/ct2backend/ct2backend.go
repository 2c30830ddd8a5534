// Package ct2backend is the translator's self-hosted backend "ct2": models
// converted to CTranslate2 and run through bindings/ct2 (spec translation
// 8, 10.1, 10.3).
//
// Families (CT2_MODEL_FAMILY):
//
//   - llm: a decoder-only model (Generator). The whole text goes into one
//     instruction that names both languages, asks to keep the line breaks,
//     and lists the glossary terms (source = target) to use exactly. When
//     the model folder has a chat template (chat_template.jinja or the
//     chat_template of tokenizer_config.json), it is rendered by a Jinja
//     engine as transformers' apply_chat_template renders it, the
//     instruction as the system message and the text as the user message
//     (one user message, the instruction first, for templates that refuse
//     a system message), and decoding ends at <|im_end|> (when the
//     template writes it), the model's end token or the end tokens of
//     generation_config.json. A template that does not parse or render is
//     an error at load. Without a template (logged)
//     it is one plain prompt (Prompt).
//   - nmt1: a multilingual sequence-to-sequence model addressed by a target
//     token at the start of the source ("<2en> ...", the MADLAD-400
//     convention). The token must be one token of the model's tokenizer:
//     a tokenizer that splits it is an error naming the token.
//   - nmt2: a multilingual sequence-to-sequence model addressed by FLORES-200
//     codes ("ces_Latn", the NLLB convention): the source-language token
//     starts every source (replacing the one NLLB's tokenizer.json puts
//     there itself) and the target-language token is forced as the first
//     output token and removed from the output.
//   - nmt3: a model for one language pair (OPUS-MT style): plain text in,
//     plain text out.
//
// The nmt families translate line by line (empty lines and the whitespace
// around each line are kept) in one batch and offer no glossary (the
// translator sends them vocabulary placeholders instead); llm
// implements backend.Glossary. Every output passes the degeneracy guard
// (internal/translate/guard): an output shorter than CT2_GUARD_MIN_RATIO or longer than
// CT2_GUARD_MAX_RATIO times its source (in characters), empty, a runaway
// repetition or an unchanged copy is a *guard.Rejection error; for the nmt
// families it lists the rejected lines. An output that reached
// CT2_MAX_LENGTH tokens without the model ending it is cut short: it is a
// *guard.Rejection with reason "truncated", never returned as a translation.
package ct2backend

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"

	"archivekit/bindings/ct2"
	"archivekit/internal/ledger"
	"archivekit/internal/translate/backend"
	"archivekit/internal/translate/chunker"
	"archivekit/internal/translate/guard"
)

// Name is the backend's configuration name.
const Name = "ct2"

// Model families.
const (
	LLM  = "llm"
	NMT1 = "nmt1"
	NMT2 = "nmt2"
	NMT3 = "nmt3"
)

// Config selects and tunes the model.
type Config struct {
	ModelDir    string   // CT2_MODEL_DIR (required)
	Family      string   // CT2_MODEL_FAMILY: llm (default), nmt1, nmt2, nmt3
	Device      string   // CT2_DEVICE: cpu (default) or cuda
	ComputeType string   // CT2_COMPUTE_TYPE: int8 (default), float32, ...
	Languages   []string // CT2_LANGUAGES: the languages offered (ISO 639-1); empty = any
	GuardMin    float64  // CT2_GUARD_MIN_RATIO (0.25)
	GuardMax    float64  // CT2_GUARD_MAX_RATIO (4.0)
	// GuardLengthOnly drops the guard's repetition and copy checks (see
	// guard.Config.LengthOnly): for tests on random-weight models only.
	GuardLengthOnly bool
	Threads         int // intra-op threads (0: CTranslate2's default)
	BeamSize        int // 1 (greedy) when 0
	MaxLength       int // CT2_MAX_LENGTH: maximum decoded tokens; 512 when 0
	// MaxInputChars caps the characters of one source sent to an nmt model
	// (CT2_MAX_INPUT_CHARS, default 1000): longer lines are cut at sentence,
	// then clause boundaries (internal/translate/chunker) so no input exceeds the model's
	// positions.
	MaxInputChars int
}

// Variables are the environment variables the ct2 backend reads.
var Variables = []string{"CT2_MODEL_DIR", "CT2_MODEL_FAMILY", "CT2_DEVICE", "CT2_COMPUTE_TYPE", "CT2_LANGUAGES",
	"CT2_GUARD_MIN_RATIO", "CT2_GUARD_MAX_RATIO", "CT2_MAX_LENGTH", "CT2_MAX_INPUT_CHARS", "CT2_SP_MODEL"}

// ConfigFromEnv reads the CT2_* variables (getenv nil: the process
// environment). Bad numbers, a CT2_MODEL_DIR that is not a folder and an
// unknown CT2_MODEL_FAMILY are errors naming the variable, found before any
// model is loaded.
func ConfigFromEnv(getenv func(string) string) (Config, error) {
	if getenv == nil {
		getenv = os.Getenv
	}
	c := Config{
		ModelDir:    getenv("CT2_MODEL_DIR"),
		Family:      strings.ToLower(strings.TrimSpace(getenv("CT2_MODEL_FAMILY"))),
		Device:      getenv("CT2_DEVICE"),
		ComputeType: getenv("CT2_COMPUTE_TYPE"),
	}
	if c.ModelDir == "" {
		return c, errors.New("ct2: CT2_MODEL_DIR is not set (the folder of a converted CTranslate2 model)")
	}
	if fi, err := os.Stat(c.ModelDir); err != nil || !fi.IsDir() {
		return c, fmt.Errorf("ct2: CT2_MODEL_DIR=%s is not a folder (the folder of a converted CTranslate2 model)", c.ModelDir)
	}
	if _, err := os.ReadDir(c.ModelDir); err != nil {
		// An unreadable folder was reported as one without model.bin.
		return c, fmt.Errorf("ct2: CT2_MODEL_DIR=%s cannot be read: %w", c.ModelDir, err)
	}
	switch c.Family {
	case "", LLM, NMT1, NMT2, NMT3:
	default:
		return c, fmt.Errorf("ct2: CT2_MODEL_FAMILY=%q: want llm, nmt1, nmt2 or nmt3", c.Family)
	}
	for _, l := range strings.Split(getenv("CT2_LANGUAGES"), ",") {
		if l = strings.TrimSpace(strings.ToLower(l)); l != "" {
			c.Languages = append(c.Languages, l)
		}
	}
	if c.Family == NMT3 && len(c.Languages) != 2 {
		// A Marian model translates one pair; without it named, text in
		// any language was sent to it and its output marked translated.
		return c, fmt.Errorf("ct2: CT2_MODEL_FAMILY=nmt3 is a model of one language pair (Marian, OPUS-MT): CT2_LANGUAGES must name it, source first (CT2_LANGUAGES=cs,en), not %q", getenv("CT2_LANGUAGES"))
	}
	g, err := guard.FromEnv("CT2", getenv)
	if err != nil {
		return c, fmt.Errorf("ct2: %w", err)
	}
	c.GuardMin, c.GuardMax = g.MinRatio, g.MaxRatio
	for _, v := range []struct {
		name string
		dst  *int
	}{{"CT2_MAX_INPUT_CHARS", &c.MaxInputChars}, {"CT2_MAX_LENGTH", &c.MaxLength}} {
		if s := getenv(v.name); s != "" {
			n, err := strconv.Atoi(s)
			if err != nil || n < 1 {
				return c, fmt.Errorf("ct2: %s=%q: want a positive integer", v.name, s)
			}
			*v.dst = n
		}
	}
	if sp := getenv("CT2_SP_MODEL"); sp != "" {
		// The bridge tokenises from the model folder itself.
		base := filepath.Base(sp)
		if _, err := os.Stat(filepath.Join(c.ModelDir, base)); err != nil {
			return c, fmt.Errorf("ct2: CT2_SP_MODEL=%s: the tokenizer is read from CT2_MODEL_DIR; copy it there as source.spm and target.spm", sp)
		}
	}
	return c, nil
}

func (c *Config) defaults() error {
	if c.Family == "" {
		c.Family = LLM
	}
	switch c.Family {
	case LLM, NMT1, NMT2, NMT3:
	default:
		return fmt.Errorf("ct2: unknown model family %q (want llm, nmt1, nmt2 or nmt3)", c.Family)
	}
	if c.Device == "" {
		c.Device = "cpu"
	}
	if c.ComputeType == "" {
		c.ComputeType = "int8"
	}
	if c.GuardMin == 0 {
		c.GuardMin = guard.DefaultMinRatio
	}
	if c.GuardMax == 0 {
		c.GuardMax = guard.DefaultMaxRatio
	}
	if c.GuardMin >= c.GuardMax {
		return fmt.Errorf("ct2: length guard %g..%g is empty", c.GuardMin, c.GuardMax)
	}
	if c.BeamSize == 0 {
		c.BeamSize = 1
	}
	if c.MaxLength == 0 {
		c.MaxLength = 512
	}
	if c.MaxInputChars == 0 {
		c.MaxInputChars = 1000
	}
	return nil
}

// ErrLengthGuard is wrapped by the errors of outputs rejected by the
// degeneracy guard (internal/translate/guard), the length guard among them.
var ErrLengthGuard = guard.ErrRejected

// Backend is an nmt-family model.
type Backend struct {
	cfg    Config
	tr     *ct2.Translator
	gen    *ct2.Generator
	chat   *chatTemplate // llm: the model's chat template; nil = plain prompt
	scores scoreCache
	// langTokens caches the nmt1 target tokens checked to be one token.
	langTokens sync.Map
	// digest is folderDigest of the model folder, read when it was opened.
	digest string
}

// folderDigest is the SHA-256 of a model folder's files (not its
// sub-folders): each file's name and the SHA-256 of its bytes, in name
// order. It names the model that produced a result (the run metadata, the
// resume ledger's configuration), whatever its folder is called; reading
// the files once costs about what loading them does.
func folderDigest(dir string) (string, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return "", err
	}
	var list strings.Builder
	for _, e := range entries {
		if !e.Type().IsRegular() {
			continue
		}
		d, err := ledger.Digest(filepath.Join(dir, e.Name()))
		if err != nil {
			return "", err
		}
		fmt.Fprintf(&list, "%s\x00%s\n", e.Name(), d)
	}
	return "sha256:" + ledger.DigestBytes([]byte(list.String())), nil
}

// Info describes the model for the run metadata and the resume ledger's
// configuration: its folder, its digest (folderDigest), family, languages,
// device, compute type and length limits. A result is labelled with
// exactly the model that produced it, and a --resume with another model
// translates again.
func (b *Backend) Info() map[string]any {
	abs, err := filepath.Abs(b.cfg.ModelDir)
	if err != nil {
		abs = b.cfg.ModelDir
	}
	return map[string]any{"ct2_model_dir": abs, "ct2_model_digest": b.digest, "ct2_model_family": b.cfg.Family,
		"ct2_languages": strings.Join(b.cfg.Languages, ","), "ct2_device": b.cfg.Device, "ct2_compute_type": b.cfg.ComputeType,
		"ct2_max_length": b.cfg.MaxLength, "ct2_max_input_chars": b.cfg.MaxInputChars}
}

// scoreCache keeps the model's scores of the latest translations by their
// source segment, for the log's score column; it forgets everything when
// it grows past maxScores entries.
type scoreCache struct {
	mu sync.Mutex
	m  map[string]float64
}

const maxScores = 1 << 14

func (c *scoreCache) put(seg string, score float64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m == nil || len(c.m) >= maxScores {
		c.m = map[string]float64{}
	}
	c.m[strings.TrimSpace(seg)] = score
}

// Score implements backend.Scorer: the cumulative log-probability the
// model gave its output for segment (nmt: a line, the sum over its chunks;
// llm: the whole text of one call).
func (b *Backend) Score(segment string) (float64, bool) {
	b.scores.mu.Lock()
	defer b.scores.mu.Unlock()
	v, ok := b.scores.m[strings.TrimSpace(segment)]
	return v, ok
}

// LLMBackend is an llm-family model; it also takes a glossary.
type LLMBackend struct{ *Backend }

// New loads the model. The result is a *Backend for the nmt families and an
// *LLMBackend (which implements backend.Glossary) for llm.
func New(cfg Config) (backend.Backend, error) {
	if err := cfg.defaults(); err != nil {
		return nil, err
	}
	c := ct2.Config{Device: cfg.Device, ComputeType: cfg.ComputeType, Threads: cfg.Threads}
	b := &Backend{cfg: cfg}
	var err error
	if b.digest, err = folderDigest(cfg.ModelDir); err != nil {
		return nil, fmt.Errorf("ct2: CT2_MODEL_DIR=%s: %w", cfg.ModelDir, err)
	}
	if cfg.Family == LLM {
		chat, note, err := loadChatTemplate(cfg.ModelDir)
		if err != nil {
			return nil, err
		}
		if note != "" {
			slog.Info("ct2 llm: "+note, "model", cfg.ModelDir)
		}
		if b.gen, err = ct2.NewGenerator(cfg.ModelDir, c); err != nil {
			return nil, fmt.Errorf("%w (CT2_MODEL_FAMILY is %s, a decoder-only chat model; a translation model such as Marian, NLLB or MADLAD wants nmt3, nmt2 or nmt1)", err, LLM)
		}
		b.chat = chat
		return &LLMBackend{b}, nil
	}
	if b.tr, err = ct2.NewTranslator(cfg.ModelDir, c); err != nil {
		return nil, err
	}
	return b, nil
}

// Close releases the model.
func (b *Backend) Close() error {
	if b.tr != nil {
		b.tr.Close()
	}
	if b.gen != nil {
		b.gen.Close()
	}
	return nil
}

// Name is "ct2".
func (b *Backend) Name() string { return Name }

// Family is the model family, for the licence components.
func (b *Backend) Family() string { return b.cfg.Family }

// Placeholders implements backend.Placeholders: the nmt families take
// vocabulary placeholders (surface matches only: no lemmatiser, whose
// licence would end the permissive recipe), and a reply that lost one is
// translated again without them; llm takes a glossary instead.
func (b *Backend) Placeholders() (backend.Protection, bool) {
	switch b.cfg.Family {
	case NMT1, NMT2, NMT3:
		return backend.Protection{Fallback: true}, true
	}
	return backend.Protection{}, false
}

// Supports checks both languages against CT2_LANGUAGES, and that the
// language codes are known where the family needs a token for them (nmt2:
// a FLORES-200 code for both; nmt1: "<2xx>" is one token of the model's
// tokenizer).
func (b *Backend) Supports(_ context.Context, src, tgt string) error {
	if b.cfg.Family == NMT3 && len(b.cfg.Languages) == 2 && (src != b.cfg.Languages[0] || tgt != b.cfg.Languages[1]) {
		return fmt.Errorf("ct2: language pair %s-%s is not offered by this model: it translates %s into %s only (CT2_LANGUAGES=%s,%s)", src, tgt, b.cfg.Languages[0], b.cfg.Languages[1], b.cfg.Languages[0], b.cfg.Languages[1])
	}
	if len(b.cfg.Languages) > 0 {
		for _, l := range []string{src, tgt} {
			if !contains(b.cfg.Languages, l) {
				return fmt.Errorf("ct2: language pair %s-%s is not offered by this model (CT2_LANGUAGES=%s)", src, tgt, strings.Join(b.cfg.Languages, ","))
			}
		}
	}
	if b.cfg.Family == NMT1 && b.tr != nil {
		if err := b.checkLangToken("<2" + tgt + ">"); err != nil {
			return err
		}
	}
	if b.cfg.Family == NMT2 {
		for _, l := range []string{src, tgt} {
			if _, ok := flores[l]; !ok {
				return fmt.Errorf("ct2: language pair %s-%s: no FLORES-200 code for %q", src, tgt, l)
			}
			if b.tr == nil {
				continue
			}
			// A model that is not NLLB-style (a Marian model given nmt2)
			// ran and wrote nonsense labelled nmt2.
			if err := b.checkLangToken(flores[l]); err != nil {
				return err
			}
		}
	}
	return nil
}

// checkLangToken makes sure the model's tokenizer keeps an nmt1 target
// token such as "<2en>" as one token: split into pieces it would address
// no language and the model would translate into whatever it guessed.
func (b *Backend) checkLangToken(tok string) error {
	if v, ok := b.langTokens.Load(tok); ok {
		if v == nil {
			return nil
		}
		return v.(error)
	}
	toks, err := b.tr.Tokenize(tok)
	if err != nil {
		return err
	}
	var res error
	if !contains(toks, tok) {
		style := "a MADLAD-style model (CT2_MODEL_FAMILY=nmt1)"
		if b.cfg.Family == NMT2 {
			style = "an NLLB-style model (CT2_MODEL_FAMILY=nmt2)"
		}
		res = fmt.Errorf("ct2: the tokenizer of %s splits the language token %s into %q: it is not in the model's vocabulary (is this %s, and is the language one it knows?)", b.cfg.ModelDir, tok, toks, style)
	}
	if res == nil {
		b.langTokens.Store(tok, nil)
	} else {
		b.langTokens.Store(tok, res)
	}
	return res
}

// truncated is the rejection of an output cut at the length limit.
func truncated(maxLength int, out string) *guard.Rejection {
	return &guard.Rejection{Reason: guard.Truncated, Output: out,
		Detail: fmt.Sprintf("the output reached CT2_MAX_LENGTH=%d tokens before the model ended it, so it is cut short", maxLength)}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func (b *Backend) guard() guard.Config {
	return guard.Config{MinRatio: b.cfg.GuardMin, MaxRatio: b.cfg.GuardMax, LengthOnly: b.cfg.GuardLengthOnly}
}

// Deterministic implements backend.Deterministic: with greedy or beam
// decoding the same source gives the same output, so a rejected one is
// not retried.
func (b *Backend) Deterministic() bool { return true }

// piece is one source sent to the model: a chunk of a line, with the
// whitespace around it kept as it was.
type piece struct {
	line       int
	lead, tail string
	source     string
}

// minInputChars is the shortest cut of a line tried when a source is too
// long for the model's positions (tooLong).
const minInputChars = 60

// pieces cuts lines into the sources sent to the model, each at most limit
// characters (chunker.Split: at sentence, then clause boundaries).
func (b *Backend) pieces(lines []string, limit int, tgt string) ([]string, []piece) {
	var sources []string
	var out []piece
	for i, l := range lines {
		for _, c := range chunker.Split(l, limit) {
			t := strings.TrimSpace(c)
			if t == "" {
				continue
			}
			lead := c[:len(c)-len(strings.TrimLeft(c, " \t\r"))]
			tail := c[len(strings.TrimRight(c, " \t\r")):]
			if b.cfg.Family == NMT1 {
				t = "<2" + tgt + "> " + t
			}
			sources = append(sources, t)
			out = append(out, piece{i, lead, tail, t})
		}
	}
	return sources, out
}

// translateOptions are the decoding options of n sources (nmt2: the
// FLORES-200 codes of both languages as prefixes).
func (b *Backend) translateOptions(n int, src, tgt string) ct2.TranslateOptions {
	opt := ct2.TranslateOptions{BeamSize: b.cfg.BeamSize, MaxDecodingLength: b.cfg.MaxLength}
	if b.cfg.Family == NMT2 {
		opt.TargetPrefix = make([][]string, n)
		opt.SourcePrefix = make([][]string, n)
		for i := range n {
			opt.TargetPrefix[i] = []string{flores[tgt]}
			opt.SourcePrefix[i] = []string{flores[src]}
		}
	}
	return opt
}

// tooLong says a translation failed because a source has more tokens than
// the model has positions (CTranslate2: "No position encodings are defined
// for positions >= 512").
func tooLong(err error) bool {
	return err != nil && strings.Contains(err.Error(), "position encodings")
}

// Translate translates text line by line (nmt families).
func (b *Backend) Translate(ctx context.Context, text, src, tgt string) (string, error) {
	srcLang := src
	if err := ctx.Err(); err != nil {
		return "", err
	}
	if err := b.Supports(ctx, src, tgt); err != nil {
		return "", err
	}
	lines := strings.Split(text, "\n")
	var pieces []piece
	var res []ct2.Result
	for limit := b.cfg.MaxInputChars; ; limit /= 2 {
		var sources []string
		sources, pieces = b.pieces(lines, limit, tgt)
		if len(sources) == 0 {
			return text, nil
		}
		var err error
		if res, err = b.tr.Translate(sources, b.translateOptions(len(sources), srcLang, tgt)); err == nil {
			break
		}
		if !tooLong(err) || limit/2 < minInputChars {
			return "", backend.Failed(err)
		}
		// A source longer in tokens than the model has positions (a
		// character cap cannot promise it): cut the lines finer and try
		// again, rather than failing the whole document.
		slog.Debug("ct2: a source is longer than the model's positions; cutting lines finer", "max_input_chars", limit/2)
	}
	sources := make([]string, len(pieces))
	for k, p := range pieces {
		sources[k] = p.source
	}
	lineScore := make([]float64, len(lines))
	scored := make([]bool, len(lines))
	for k, p := range pieces {
		if !res[k].ScoreMissing() {
			lineScore[p.line] += float64(res[k].Score)
			scored[p.line] = true
		}
	}
	for i, l := range lines {
		if scored[i] {
			b.scores.put(l, lineScore[i])
		}
	}
	outLines := make([]strings.Builder, len(lines))
	touched := make([]bool, len(lines))
	var first *guard.Rejection
	var bad []int
	for k, p := range pieces {
		out := strings.TrimSpace(res[k].Text)
		if b.cfg.Family == NMT2 {
			out = strings.TrimSpace(strings.TrimPrefix(out, flores[tgt]))
		}
		src := sources[k]
		if b.cfg.Family == NMT1 {
			src = strings.TrimPrefix(src, "<2"+tgt+"> ")
		}
		r := b.guard().Check(src, out, srcLang, tgt)
		if res[k].Truncated {
			r = truncated(b.cfg.MaxLength, out)
		}
		if r != nil {
			if first == nil {
				first = r
			}
			if len(bad) == 0 || bad[len(bad)-1] != p.line {
				bad = append(bad, p.line)
			}
		}
		outLines[p.line].WriteString(p.lead + out + p.tail)
		touched[p.line] = true
	}
	for i := range lines {
		if touched[i] {
			lines[i] = outLines[i].String()
		}
	}
	out := strings.Join(lines, "\n")
	if first != nil {
		return "", fmt.Errorf("ct2: line %d: %w", bad[0]+1, &guard.Rejection{Reason: first.Reason, Detail: first.Detail, Lines: bad, Output: out})
	}
	return out, nil
}

// Translate translates the whole text in one prompt.
func (b *LLMBackend) Translate(ctx context.Context, text, src, tgt string) (string, error) {
	return b.TranslateWithGlossary(ctx, text, src, tgt, nil)
}

// halves translates a segment too long for the model's positions (cause)
// in two: its lines' first and second halves, joined by a line break; a
// single line cut at a sentence or clause boundary near its middle
// (chunker.Split), joined by a space. A line shorter than minInputChars is
// not cut: the model's error is returned.
func (b *LLMBackend) halves(ctx context.Context, text, src, tgt string, terms [][2]string, cause error) (string, error) {
	sep := "\n"
	parts := strings.Split(text, sep)
	if len(parts) > 1 {
		h := len(parts) / 2
		parts = []string{strings.Join(parts[:h], sep), strings.Join(parts[h:], sep)}
	} else {
		if len(text) < 2*minInputChars {
			return "", backend.Failed(cause)
		}
		sep = " "
		cut := chunker.Split(text, len(text)/2+1)
		if len(cut) < 2 {
			return "", backend.Failed(cause)
		}
		parts = []string{strings.TrimSpace(cut[0]), strings.TrimSpace(strings.Join(cut[1:], " "))}
	}
	out := make([]string, len(parts))
	for i, p := range parts {
		var err error
		if out[i], err = b.TranslateWithGlossary(ctx, p, src, tgt, terms); err != nil {
			return "", err
		}
	}
	return strings.Join(out, sep), nil
}

// Instruction is what llm-family models are told: both languages, keep
// the line breaks, the glossary terms. With a chat template it is the
// system message.
func Instruction(src, tgt string, terms [][2]string) string {
	var p strings.Builder
	fmt.Fprintf(&p, "Translate the following text from %s to %s. Keep every line break. Reply with the translation only.",
		backend.LanguageName(src), backend.LanguageName(tgt))
	if len(terms) > 0 {
		p.WriteString("\nUse exactly these translations of terms:")
		for _, t := range terms {
			fmt.Fprintf(&p, "\n%s = %s", t[0], t[1])
		}
	}
	return p.String()
}

// Prompt is the plain prompt given to llm-family models without a chat
// template: the instruction, then the text.
func Prompt(text, src, tgt string, terms [][2]string) string {
	return Instruction(src, tgt, terms) + "\n\nText:\n" + text + "\n\nTranslation:\n"
}

// TranslateWithGlossary implements backend.Glossary.
func (b *LLMBackend) TranslateWithGlossary(ctx context.Context, text, src, tgt string, terms [][2]string) (string, error) {
	if err := ctx.Err(); err != nil {
		return "", err
	}
	if err := b.Supports(ctx, src, tgt); err != nil {
		return "", err
	}
	if strings.TrimSpace(text) == "" {
		return text, nil
	}
	opt := ct2.GenerateOptions{BeamSize: b.cfg.BeamSize, MaxLength: b.cfg.MaxLength}
	prompt := Prompt(text, src, tgt, terms)
	if b.chat != nil {
		var err error
		if prompt, err = b.chat.Prompt(Instruction(src, tgt, terms), text); err != nil {
			return "", err
		}
		opt.EndTokens = b.chat.EndTokens
	}
	res, err := b.gen.Generate([]string{prompt}, opt)
	if tooLong(err) {
		// The prompt and its reply are longer than the model's positions:
		// the segment is translated in halves (it failed its document).
		return b.halves(ctx, text, src, tgt, terms, err)
	}
	if err != nil {
		return "", backend.Failed(err)
	}
	out := backend.UnwrapReply(text, res[0].Text)
	if !res[0].ScoreMissing() {
		b.scores.put(text, float64(res[0].Score))
	}
	if res[0].Truncated {
		return "", fmt.Errorf("ct2: %w", truncated(b.cfg.MaxLength, out))
	}
	if r := b.guard().CheckLines(text, out, src, tgt); r != nil {
		return "", fmt.Errorf("ct2: %w", r)
	}
	return out, nil
}

// flores maps the 20 languages of spec 10.2 to FLORES-200 codes.
var flores = map[string]string{
	"cs": "ces_Latn", "en": "eng_Latn", "fr": "fra_Latn", "de": "deu_Latn", "ru": "rus_Cyrl", "pl": "pol_Latn",
	"uk": "ukr_Cyrl", "sk": "slk_Latn", "bg": "bul_Cyrl", "hr": "hrv_Latn", "sl": "slv_Latn", "lv": "lvs_Latn",
	"lt": "lit_Latn", "et": "est_Latn", "hu": "hun_Latn", "ro": "ron_Latn", "es": "spa_Latn", "it": "ita_Latn",
	"nl": "nld_Latn", "hi": "hin_Deva",
}
