package ct2

import (
	"archivekit/internal/testenv"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
)

// Fixtures come from test/make_ct2_fixtures.py (run by `make fixtures`).
func fixtures(t testing.TB) string {
	d := testenv.Fixtures(t)
	return filepath.Join(d, "ct2")
}

type generation struct {
	Prompt, Text string
	Tokens       []string
	Score        float32
}

type reference struct {
	CTranslate2        string `json:"ctranslate2"`
	MaxDecodingLength  int    `json:"max_decoding_length"`
	GeneratorMaxLength int    `json:"generator_max_length"`
	LongMaxLength      int    `json:"long_max_length"`
	Translations       []struct {
		Source, Text string
		Tokens       []string
		Score        float32
	}
	Prefixed []struct {
		Source, Prefix, Text string
		Tokens               []string
		Score                float32
	}
	Generations     []generation
	LongGenerations []generation `json:"long_generations"`
	Chat            []struct {
		Rendered, Text string
		EndTokens      []string `json:"end_tokens"`
		Tokens         []string
		Score          float32
	}
}

// noNUL drops the NUL characters that random byte-level models emit: C
// strings cannot carry them, so the bridge leaves them out.
func noNUL(s string) string { return strings.ReplaceAll(s, "\x00", "") }

// checkLength compares a result's decoded length and truncation flag with
// the Python tokens (prefix included) under the limit max.
func checkLength(t *testing.T, what string, got Result, tokens []string, max int) {
	t.Helper()
	if got.Length != len(tokens) || got.Truncated != (len(tokens) >= max) {
		t.Errorf("%s: length %d truncated %v; Python decoded %d tokens of at most %d", what, got.Length, got.Truncated, len(tokens), max)
	}
}

func loadRef(t testing.TB) reference {
	b, err := os.ReadFile(filepath.Join(fixtures(t), "reference.json"))
	if err != nil {
		t.Fatal(err)
	}
	var r reference
	if err := json.Unmarshal(b, &r); err != nil {
		t.Fatal(err)
	}
	return r
}

func TestConverterMatchesBundledVersion(t *testing.T) {
	r := loadRef(t)
	if r.CTranslate2 != Version() {
		t.Fatalf("fixtures converted by ctranslate2 %s, bridge bundles %s: pin test/requirements.txt to the bundled version", r.CTranslate2, Version())
	}
}

// The Python wheel multiplies matrices with oneMKL/oneDNN, the bridge with
// ruy: the texts must be equal and the scores within 1e-3.
func TestTranslatorMatchesPython(t *testing.T) {
	r := loadRef(t)
	tr, err := NewTranslator(filepath.Join(fixtures(t), "translator"), Config{ComputeType: "float32", Threads: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer tr.Close()
	var srcs []string
	for _, x := range r.Translations {
		srcs = append(srcs, x.Source)
	}
	got, err := tr.Translate(srcs, TranslateOptions{MaxDecodingLength: r.MaxDecodingLength})
	if err != nil {
		t.Fatal(err)
	}
	for i, x := range r.Translations {
		if got[i].Text != x.Text {
			t.Errorf("source %q: Go %q, Python %q", x.Source, got[i].Text, x.Text)
		}
		if d := math.Abs(float64(got[i].Score - x.Score)); d > 1e-3 {
			t.Errorf("source %q: score %g vs Python %g", x.Source, got[i].Score, x.Score)
		}
		checkLength(t, x.Source, got[i], x.Tokens, r.MaxDecodingLength)
	}
	var prefixes [][]string
	srcs = srcs[:0]
	for _, x := range r.Prefixed {
		srcs = append(srcs, x.Source)
		prefixes = append(prefixes, strings.Fields(x.Prefix))
	}
	got, err = tr.Translate(srcs, TranslateOptions{MaxDecodingLength: r.MaxDecodingLength, TargetPrefix: prefixes})
	if err != nil {
		t.Fatal(err)
	}
	for i, x := range r.Prefixed {
		if got[i].Text != x.Text || math.Abs(float64(got[i].Score-x.Score)) > 1e-3 {
			t.Errorf("prefixed %q: Go %q (%g), Python %q (%g)", x.Source, got[i].Text, got[i].Score, x.Text, x.Score)
		}
		checkLength(t, "prefixed "+x.Source, got[i], x.Tokens, r.MaxDecodingLength)
	}
}

func TestGeneratorMatchesPython(t *testing.T) {
	r := loadRef(t)
	g, err := NewGenerator(filepath.Join(fixtures(t), "generator"), Config{ComputeType: "float32", Threads: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	var ps []string
	for _, x := range r.Generations {
		ps = append(ps, x.Prompt)
	}
	for _, run := range []struct {
		max  int
		refs []generation
	}{{r.GeneratorMaxLength, r.Generations}, {r.LongMaxLength, r.LongGenerations}} {
		got, err := g.Generate(ps, GenerateOptions{MaxLength: run.max})
		if err != nil {
			t.Fatal(err)
		}
		for i, x := range run.refs {
			if got[i].Text != noNUL(x.Text) {
				t.Errorf("prompt %q: Go %q, Python %q", x.Prompt, got[i].Text, x.Text)
			}
			if d := math.Abs(float64(got[i].Score - x.Score)); d > 1e-3 {
				t.Errorf("prompt %q: score %g vs Python %g", x.Prompt, got[i].Score, x.Score)
			}
			checkLength(t, x.Prompt, got[i], x.Tokens, run.max)
		}
	}
	truncated := 0
	for _, x := range append(r.LongGenerations, r.Generations...) {
		if len(x.Tokens) >= r.LongMaxLength || len(x.Tokens) == r.GeneratorMaxLength {
			truncated++
		}
	}
	if truncated == 0 || truncated == len(r.LongGenerations)+len(r.Generations) {
		t.Errorf("the fixtures should hold both ended and truncated generations (%d truncated)", truncated)
	}
}

// Decoding ended by chosen end tokens (a chat template's), as Python's
// generate_batch(end_token=...) does.
func TestGeneratorEndTokensMatchPython(t *testing.T) {
	r := loadRef(t)
	g, err := NewGenerator(filepath.Join(fixtures(t), "generator"), Config{ComputeType: "float32", Threads: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	if len(r.Chat) == 0 {
		t.Fatal("no chat references")
	}
	for _, x := range r.Chat {
		got, err := g.Generate([]string{x.Rendered}, GenerateOptions{MaxLength: r.LongMaxLength, EndTokens: x.EndTokens})
		if err != nil {
			t.Fatal(err)
		}
		if got[0].Text != noNUL(x.Text) || math.Abs(float64(got[0].Score-x.Score)) > 1e-3 {
			t.Errorf("%q ended by %v: Go %q (%g), Python %q (%g)", x.Rendered, x.EndTokens, got[0].Text, got[0].Score, x.Text, x.Score)
		}
		checkLength(t, x.Rendered, got[0], x.Tokens, r.LongMaxLength)
	}
	if _, err := g.Generate([]string{"x"}, GenerateOptions{EndTokens: []string{"a b"}}); err == nil {
		t.Error("an end token with a space was accepted")
	}
}

func TestConcurrentTranslate(t *testing.T) {
	r := loadRef(t)
	tr, err := NewTranslator(filepath.Join(fixtures(t), "translator"), Config{ComputeType: "float32"})
	if err != nil {
		t.Fatal(err)
	}
	defer tr.Close()
	var wg sync.WaitGroup
	errs := make(chan string, 16)
	for i := 0; i < 8; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			x := r.Translations[0]
			got, err := tr.Translate([]string{x.Source}, TranslateOptions{MaxDecodingLength: r.MaxDecodingLength})
			if err != nil {
				errs <- err.Error()
			} else if got[0].Text != x.Text {
				errs <- got[0].Text
			}
		}()
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Error(e)
	}
}

func TestBadModelDirectories(t *testing.T) {
	dir := t.TempDir()
	noTok := filepath.Join(dir, "notok")
	os.MkdirAll(noTok, 0o755)
	b, _ := os.ReadFile(filepath.Join(fixtures(t), "translator", "model.bin"))
	os.WriteFile(filepath.Join(noTok, "model.bin"), b, 0o644)
	corrupt := filepath.Join(dir, "corrupt")
	os.MkdirAll(corrupt, 0o755)
	os.WriteFile(filepath.Join(corrupt, "model.bin"), []byte("garbage"), 0o644)
	for _, name := range []string{"source.spm", "target.spm"} {
		b, _ := os.ReadFile(filepath.Join(fixtures(t), "translator", name))
		os.WriteFile(filepath.Join(corrupt, name), b, 0o644)
	}
	cases := []struct {
		name, dir string
		cfg       Config
		want      string
	}{
		{"missing", filepath.Join(dir, "nope"), Config{}, "not a directory"},
		{"not a model", dir, Config{}, "not a CTranslate2 model directory"},
		{"no tokenizer", noTok, Config{}, "no usable tokenizer"},
		{"corrupt model.bin", corrupt, Config{}, "cannot load translator"},
		{"bad device", filepath.Join(fixtures(t), "translator"), Config{Device: "tpu"}, "bad device"},
		{"bad compute type", filepath.Join(fixtures(t), "translator"), Config{ComputeType: "float7"}, "unknown compute type"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			tr, err := NewTranslator(c.dir, c.cfg)
			if err == nil {
				tr.Close()
				t.Fatal("no error")
			}
			if !strings.Contains(err.Error(), c.want) {
				t.Errorf("error %q does not mention %q", err, c.want)
			}
		})
	}
	tr, err := NewTranslator(filepath.Join(fixtures(t), "translator"), Config{})
	if err != nil {
		t.Fatal(err)
	}
	tr.Close()
	if _, err := tr.Translate([]string{"x"}, TranslateOptions{}); err != ErrClosed {
		t.Errorf("translate after close: %v", err)
	}
}

// rssKB is the resident set size of the test process in KiB.
func rssKB(t testing.TB) int {
	kb, err := testenv.RSSKiB()
	if err != nil {
		t.Skip(err)
	}
	return int(kb)
}

func TestLoadTranslateCloseLoopKeepsMemoryFlat(t *testing.T) {
	dir := filepath.Join(fixtures(t), "translator")
	cycle := func() {
		tr, err := NewTranslator(dir, Config{Threads: 1})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := tr.Translate([]string{"Nálezy keramiky."}, TranslateOptions{MaxDecodingLength: 8}); err != nil {
			t.Fatal(err)
		}
		tr.Close()
	}
	for i := 0; i < 100; i++ {
		cycle()
	}
	runtime.GC()
	before := rssKB(t)
	for i := 0; i < 1000; i++ {
		cycle()
	}
	runtime.GC()
	after := rssKB(t)
	t.Logf("RSS before %d kB, after 1000 load/translate/close cycles %d kB", before, after)
	if after-before > 20*1024 {
		t.Errorf("RSS grew by %d kB over 1000 cycles", after-before)
	}
}

type seq2seqRef struct {
	Source       string
	SourceTokens []string `json:"source_tokens"`
	Prefix       []string
	Tokens       []string
	Text         string
	Score        float32
	SrcLang      string `json:"src_lang"`
	TgtLang      string `json:"tgt_lang"`
}

func loadSeq2seq(t *testing.T, key string) []seq2seqRef {
	b, err := os.ReadFile(filepath.Join(fixtures(t), "reference.json"))
	if err != nil {
		t.Fatal(err)
	}
	var r map[string]json.RawMessage
	if err := json.Unmarshal(b, &r); err != nil {
		t.Fatal(err)
	}
	var refs []seq2seqRef
	if err := json.Unmarshal(r[key], &refs); err != nil || len(refs) == 0 {
		t.Fatalf("reference.json: no %s references (%v)", key, err)
	}
	return refs
}

// NLLB: the source-language token given per request replaces the one the
// saved tokenizer.json puts first (eng_Latn), as NllbTokenizerFast does when
// src_lang is set; the forced target token is removed from the text.
func TestNLLBSourcePrefixMatchesPython(t *testing.T) {
	refs := loadSeq2seq(t, "nllb")
	tr, err := NewTranslator(filepath.Join(fixtures(t), "nllb"), Config{ComputeType: "float32", Threads: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer tr.Close()
	for _, x := range refs {
		toks, err := tr.Tokenize(x.Source)
		if err != nil {
			t.Fatal(err)
		}
		if toks[0] != "eng_Latn" || strings.Join(toks[1:], " ") != strings.Join(x.SourceTokens[1:], " ") {
			t.Errorf("%q: tokenised %q; Python (src_lang %s) %q", x.Source, toks, x.SrcLang, x.SourceTokens)
		}
		got, err := tr.Translate([]string{x.Source}, TranslateOptions{MaxDecodingLength: 16,
			SourcePrefix: [][]string{{x.SrcLang}}, TargetPrefix: [][]string{{x.TgtLang}}})
		if err != nil {
			t.Fatal(err)
		}
		if got[0].Text != x.Text || math.Abs(float64(got[0].Score-x.Score)) > 1e-3 {
			t.Errorf("%s→%s %q: Go %q (%g), Python %q (%g)", x.SrcLang, x.TgtLang, x.Source, got[0].Text, got[0].Score, x.Text, x.Score)
		}
		checkLength(t, x.Source, got[0], x.Tokens, 16)
	}
}

// MADLAD: "<2xx>" at the start of the source is one token of the tokenizer.
func TestMADLADTargetTokenMatchesPython(t *testing.T) {
	refs := loadSeq2seq(t, "madlad")
	tr, err := NewTranslator(filepath.Join(fixtures(t), "madlad"), Config{ComputeType: "float32", Threads: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer tr.Close()
	var srcs []string
	for _, x := range refs {
		toks, err := tr.Tokenize(x.Source)
		if err != nil {
			t.Fatal(err)
		}
		if strings.Join(toks, " ") != strings.Join(x.SourceTokens, " ") {
			t.Errorf("%q: tokenised %q, Python %q", x.Source, toks, x.SourceTokens)
		}
		srcs = append(srcs, x.Source)
	}
	got, err := tr.Translate(srcs, TranslateOptions{MaxDecodingLength: 16})
	if err != nil {
		t.Fatal(err)
	}
	for i, x := range refs {
		if got[i].Text != x.Text || math.Abs(float64(got[i].Score-x.Score)) > 1e-3 {
			t.Errorf("%q: Go %q (%g), Python %q (%g)", x.Source, got[i].Text, got[i].Score, x.Text, x.Score)
		}
		checkLength(t, x.Source, got[i], x.Tokens, 16)
	}
}
