package main

import (
	"bytes"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"archivekit/internal/resources"
	"archivekit/internal/translate/alto"
	"archivekit/internal/translate/chunker"
	"archivekit/internal/translate/guard"
	"archivekit/internal/translate/langid"
	"archivekit/internal/translate/mtapi"
	"archivekit/internal/translate/vocab"
)

// TestShippedConfigKeys pins the shipped config.txt to the table of spec
// translation 2.6: every key with its shipped value. translation_backend and
// output_mode are left unset on purpose (docs/install.md, "Installing and running
// from anywhere": the environment must be able to choose them), so they are
// absent here and resolve to the spec's values through the built-in default.
func TestShippedConfigKeys(t *testing.T) {
	f, err := loadConfig(resources.File{Path: setupConfig})
	if err != nil {
		t.Fatal(err)
	}
	got, warnings := configValues(f)
	if len(warnings) != 0 {
		t.Errorf("shipped config warns: %v", warnings)
	}
	want := map[string]string{
		"input_path":  "./data_samples/my_documents",
		"source_lang": "auto",
		"target_lang": "en",
		"formats":     "alto.xml",
		"output":      "./data_samples/translated_files",
		"fields":      "amcr-fields.txt",
		"vocabulary":  "data_samples/vocabulary.csv",
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("config %s = %q, want %q (spec 2.6)", k, got[k], v)
		}
	}
	for _, k := range []string{"translation_backend", "output_mode"} {
		if v, ok := got[k]; ok {
			t.Errorf("config sets %s = %q: it must stay unset so the environment applies", k, v)
		}
	}
	// The field list named there holds the ten targets of spec 2.6.
	fields, err := resources.Default.Relative(resources.File{Path: setupConfig}, got["fields"], false)
	if err != nil {
		t.Fatal(err)
	}
	data, err := fields.ReadFile()
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, line := range bytes.Split(data, []byte("\n")) {
		if l := bytes.TrimSpace(line); len(l) > 0 && l[0] != '#' {
			n++
		}
	}
	if n != 10 {
		t.Errorf("%s holds %d XPath targets, want 10", fields.Path, n)
	}
}

// TestSpecDefaults: with no flag, the shipped configuration and an empty
// environment, every setting has the default of the flag table of spec
// translation 4.1.
func TestSpecDefaults(t *testing.T) {
	s, _, err := parse([]string{"-c", setupConfig}, env{}.get, &bytes.Buffer{})
	if err != nil {
		t.Fatal(err)
	}
	checks := []struct {
		name      string
		got, want any
	}{
		{"input_path", s.Input, "./data_samples/my_documents"},
		{"--output", s.Output, "./data_samples/translated_files"},
		{"--source_lang", s.Source, "auto"},
		{"--target_lang", s.Target, "en"},
		{"--formats", s.Formats, []string{"alto.xml"}},
		{"--alto (on with alto.xml in --formats)", s.Alto, true},
		{"--xpaths (config fields)", filepath.Base(s.Fields), "amcr-fields.txt"},
		{"--xsd", s.XSD, ""},
		{"--vocabulary ends in data_samples/vocabulary.csv", strings.HasSuffix(filepath.ToSlash(s.Vocabulary), "data_samples/vocabulary.csv"), true},
		{"--document-json", s.DocJSON, ""},
		{"--document-json-out", s.DocJSONOut, ""},
		{"--download-dir", s.DownloadDir, filepath.Join("./data_samples/translated_files", "downloaded_inputs")},
		{"--output-mode", s.Mode, "replace"},
		{"--backend", s.Backend, "mtapi"},
		{"--fast-align", s.FastAlign, false},
	}
	for _, c := range checks {
		if !equal(c.got, c.want) {
			t.Errorf("%s = %v, want %v (spec 4.1)", c.name, c.got, c.want)
		}
	}
}

// TestSpecFlagNames: every flag of spec translation 4.1, in each spelling
// the spec gives (long and short), reaches its setting.
func TestSpecFlagNames(t *testing.T) {
	fieldsFile := filepath.Join("..", "..", "setup", "translate", "amcr-fields.txt")
	tests := []struct {
		args []string
		ok   func(s *settings) bool
	}{
		{[]string{"in.xml"}, func(s *settings) bool { return s.Input == "in.xml" }},
		{[]string{"--output", "o1"}, func(s *settings) bool { return s.Output == "o1" }},
		{[]string{"-o", "o2"}, func(s *settings) bool { return s.Output == "o2" }},
		{[]string{"--source_lang", "cs"}, func(s *settings) bool { return s.Source == "cs" }},
		{[]string{"-src", "de"}, func(s *settings) bool { return s.Source == "de" }},
		{[]string{"--target_lang", "fr"}, func(s *settings) bool { return s.Target == "fr" }},
		{[]string{"-tgt", "pl"}, func(s *settings) bool { return s.Target == "pl" }},
		{[]string{"--formats", "alto.xml,txt"}, func(s *settings) bool { return slices.Equal(s.Formats, []string{"alto.xml", "txt"}) }},
		{[]string{"--formats", "xml"}, func(s *settings) bool { return !s.Alto }},
		{[]string{"--formats", "xml", "--alto"}, func(s *settings) bool { return s.Alto }},
		{[]string{"--config", setupConfig}, func(s *settings) bool { return s.ConfigPath == setupConfig }},
		{[]string{"--xpaths", fieldsFile}, func(s *settings) bool { return s.FieldsExplicit && s.FieldsErr == nil }},
		{[]string{"--xsd", "schema.xsd"}, func(s *settings) bool { return s.XSD == "schema.xsd" }},
		{[]string{"--vocabulary", "v.csv"}, func(s *settings) bool { return s.VocabularyExplicit && s.Vocabulary == "v.csv" }},
		{[]string{"--document-json", "b.json", "--document-json-out", "r.json"}, func(s *settings) bool { return s.DocJSON == "b.json" && s.DocJSONOut == "r.json" }},
		{[]string{"--download-dir", "dl"}, func(s *settings) bool { return s.DownloadDir == "dl" }},
		{[]string{"--output-mode", "append"}, func(s *settings) bool { return s.Mode == "append" && s.ModeFrom == "command line" }},
		{[]string{"--fast-align"}, func(s *settings) bool { return s.FastAlign }},
		{[]string{"--backend", "ct2"}, func(s *settings) bool { return s.Backend == "ct2" && s.BackendFrom == "command line" }},
	}
	for _, tc := range tests {
		args := tc.args
		if !slices.Contains(args, "--config") {
			args = append([]string{"-c", setupConfig}, args...)
		}
		s, _, err := parse(args, env{}.get, &bytes.Buffer{})
		if err != nil {
			t.Errorf("%q: %v", tc.args, err)
			continue
		}
		if !tc.ok(s) {
			t.Errorf("%q did not reach its setting: %+v", tc.args, *s)
		}
	}
}

// equal compares the scalar and string-slice values of the tables above.
func equal(a, b any) bool {
	if as, ok := a.([]string); ok {
		bs, ok := b.([]string)
		return ok && slices.Equal(as, bs)
	}
	return a == b
}

// TestSpecLimitsAndEnvironmentDefaults pins the numeric defaults of spec
// translation 8 (limits and environment variables) where they live.
func TestSpecLimitsAndEnvironmentDefaults(t *testing.T) {
	none := func(string) string { return "" }
	llm, err := guard.FromEnv("LLM", none)
	if err != nil {
		t.Fatal(err)
	}
	ct2, err := guard.FromEnv("CT2", none)
	if err != nil {
		t.Fatal(err)
	}
	terms, err := vocab.MaxGlossaryTermsFromEnv(none)
	if err != nil {
		t.Fatal(err)
	}
	mt, err := mtapi.ConfigFromEnv(none)
	if err != nil {
		t.Fatal(err)
	}
	checks := []struct {
		name      string
		got, want any
	}{
		{"MTAPI_MIN_INTERVAL_S", mt.Policy.MinInterval, time.Duration(0)},
		{"MTAPI_MAX_RETRIES", mt.Policy.MaxRetries, 4},
		{"MTAPI_BACKOFF_BASE_S", mt.Policy.BackoffBase, time.Second},
		{"LLM_GUARD_MIN_RATIO", llm.MinRatio, 0.25},
		{"LLM_GUARD_MAX_RATIO", llm.MaxRatio, 4.0},
		{"CT2_GUARD_MIN_RATIO", ct2.MinRatio, 0.25},
		{"CT2_GUARD_MAX_RATIO", ct2.MaxRatio, 4.0},
		{"LLM_MAX_GLOSSARY_TERMS", terms, 40},
		{"text chunk per backend call", chunker.DefaultLimit, 4000},
		{"language detection input (characters)", langid.MaxRunes, 2000},
		{"answer of a detector that failed to load", langid.Fallback, "en"},
		{"detection confidence threshold", alto.DefaultMinConfidence, 0.2},
	}
	for _, c := range checks {
		if c.got != c.want {
			t.Errorf("%s = %v, want %v (spec 8)", c.name, c.got, c.want)
		}
	}
}

// TestConfigSections: the keys of a configuration are read whether they
// stand before any section, in [translate] or in [DEFAULT] (the original
// tool's own config.txt has them all there; they were ignored without a
// word, so its output folder, backend and source language were not the
// user's); a named section's key wins over [DEFAULT]'s, and an unknown
// key of [DEFAULT] is warned about too.
func TestConfigSections(t *testing.T) {
	for _, tt := range []struct {
		name, text, want, warn string
	}{
		{"no section", "source_lang = de\n", "de", ""},
		{"translate", "[translate]\nsource_lang = de\n", "de", ""},
		{"DEFAULT (the original's)", "# config\r\n[DEFAULT]\r\nsource_lang = de\r\noutput = ./out\r\n", "de", ""},
		{"named section wins", "[DEFAULT]\nsource_lang = fr\n[translate]\nsource_lang = de\n", "de", ""},
		{"unknown key in DEFAULT", "[DEFAULT]\nsource_lang = de\nsoruce = x\n", "de", `[DEFAULT] soruce`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			p := filepath.Join(t.TempDir(), "config.txt")
			writeFile(t, p, []byte(tt.text))
			f, err := loadConfig(resources.File{Path: p})
			if err != nil {
				t.Fatal(err)
			}
			got, warnings := configValues(f)
			if got["source_lang"] != tt.want {
				t.Errorf("source_lang = %q, want %q (values %v)", got["source_lang"], tt.want, got)
			}
			if w := strings.Join(warnings, "\n"); (tt.warn == "") != (w == "") || !strings.Contains(w, tt.warn) {
				t.Errorf("warnings %q, want %q", w, tt.warn)
			}
		})
	}
}
