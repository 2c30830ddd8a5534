package session

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"archivekit/internal/testenv"
	"archivekit/internal/translate/backend"
	"archivekit/internal/translate/chat"
	"archivekit/internal/translate/ct2backend"
	"archivekit/internal/translate/lemmatizer"
	"archivekit/internal/translate/metadata"
	"archivekit/internal/translate/translator"
	"archivekit/internal/translate/translator/translatortest"
	"archivekit/internal/translate/vocab"
)

// family is b's model family (backend.Family), or "".
func family(b backend.Backend) string {
	if f, ok := b.(backend.Family); ok {
		return f.Family()
	}
	return ""
}

func TestOpenBackend(t *testing.T) {
	env := func(m map[string]string) func(string) string { return func(k string) string { return m[k] } }
	if b, err := OpenBackend("mtapi", env(map[string]string{"TRANSLATION_URL": "http://127.0.0.1:9"})); err != nil || b.Name() != "mtapi" {
		t.Errorf("mtapi: %v", err)
	}
	if _, err := OpenBackend("chat_compatible", env(nil)); !errors.Is(err, chat.ErrNotConfigured) || !strings.Contains(err.Error(), "LLM_BASE_URL") {
		t.Errorf("chat_compatible without LLM_BASE_URL: %v", err)
	}
	if err := CheckConfig("chat_compatible", env(map[string]string{"LLM_BASE_URL": "http://127.0.0.1:9/v1"})); err == nil || !strings.Contains(err.Error(), "LLM_MODEL") {
		t.Errorf("chat_compatible without LLM_MODEL: %v", err)
	}
	if b, err := OpenBackend("chat_compatible", env(map[string]string{"LLM_BASE_URL": "http://127.0.0.1:9/v1", "LLM_MODEL": "m"})); err != nil || b.Name() != "chat_compatible" {
		t.Errorf("chat_compatible: %v", err)
	} else if _, ok := b.(backend.Glossary); !ok {
		t.Error("chat_compatible takes no glossary")
	}
	if _, err := OpenBackend("ct2", env(nil)); err == nil || !strings.Contains(err.Error(), "CT2_MODEL_DIR") {
		t.Errorf("ct2 without a model: %v", err)
	}
	if d := os.Getenv("ARCHIVEKIT_FIXTURES"); d != "" {
		b, err := OpenBackend("ct2", env(map[string]string{"CT2_MODEL_DIR": filepath.Join(d, "ct2", "translator"),
			"CT2_MODEL_FAMILY": "nmt3", "CT2_COMPUTE_TYPE": "float32", "CT2_LANGUAGES": "cs,en"}))
		if err != nil || b.Name() != "ct2" || family(b) != "nmt3" {
			t.Errorf("ct2 nmt3: %v", err)
		}
		if b != nil {
			b.Close()
		}
	}
	if _, err := OpenBackend("google", env(nil)); err == nil {
		t.Errorf("unknown: %v", err)
	}
	if _, err := OpenBackend("mtapi", env(map[string]string{"MTAPI_MAX_RETRIES": "x"})); err == nil {
		t.Error("bad MTAPI_MAX_RETRIES accepted")
	}
}

// TestNMTPlaceholderFallback: a ct2 nmt model is sent vocabulary
// placeholders; the tiny random-weight model does not copy them, so each
// such call is redone without protection and no placeholder debris is
// written.
func TestNMTPlaceholderFallback(t *testing.T) {
	d := testenv.Fixtures(t)
	be, err := ct2backend.New(ct2backend.Config{ModelDir: filepath.Join(d, "ct2", "translator"), Family: ct2backend.NMT3,
		ComputeType: "float32", GuardMin: 0.01, GuardMax: 100, GuardLengthOnly: true, MaxLength: 16})
	if err != nil {
		t.Fatal(err)
	}
	defer be.Close()
	v, _ := vocab.Parse(strings.NewReader("source_lemma,target_translation\nkostrový hrob,inhumation grave\n"), "v.csv")
	fields, _ := metadata.ParseFields("fields", []byte("//arch:poznamka\n"))
	out, err := translator.Translate(context.Background(), []byte(translatortest.TermsRecord), "t.xml", translator.Options{Backend: be, Source: "cs", Fields: fields, Vocabulary: v})
	if err != nil {
		t.Fatal(err)
	}
	if out.Stats.PlaceholderCalls != 1 || out.Stats.PlaceholderFallbacks != 1 {
		t.Fatalf("placeholder calls %d, fallbacks %d", out.Stats.PlaceholderCalls, out.Stats.PlaceholderFallbacks)
	}
	if strings.Contains(string(out.Data), "QZX") {
		t.Fatalf("placeholder debris written:\n%s", out.Data)
	}
}

// TestUseVocabulary: a vocabulary brings the lemmatiser only to a backend
// whose placeholders take lemmas (mtapi); a bad LEMMATIZER_URL is then an
// error, and without a vocabulary no lemmatiser is set up.
func TestUseVocabulary(t *testing.T) {
	v, err := vocab.Parse(strings.NewReader("source_lemma,target_translation\nhrob,grave\n"), "v.csv")
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name    string
		env     map[string]string
		vocab   *vocab.Vocabulary
		lem     bool
		lemURL  string
		wantErr string
	}{
		{"mtapi", map[string]string{"LEMMATIZER_URL": "http://127.0.0.1:9/udpipe/"}, v, true, "http://127.0.0.1:9/udpipe", ""},
		{"mtapi", map[string]string{}, nil, false, "", ""},
		{"mtapi", map[string]string{"LEMMATIZER_URL": "ftp://x"}, v, false, "", "LEMMATIZER_URL"},
		{"chat_compatible", map[string]string{"LLM_BASE_URL": "http://127.0.0.1:9/v1", "LLM_MODEL": "m", "LEMMATIZER_URL": "ftp://x"}, v, false, "", ""},
	}
	for _, tc := range tests {
		tc.env["TRANSLATION_URL"] = "http://127.0.0.1:9"
		s, err := Open(tc.name, func(k string) string { return tc.env[k] })
		if err != nil {
			t.Fatal(err)
		}
		err = s.UseVocabulary(tc.vocab, Breaker{})
		if tc.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("%s: error %v, want one naming %s", tc.name, err, tc.wantErr)
			}
		} else if err != nil {
			t.Errorf("%s: %v", tc.name, err)
		}
		if (s.Lemmatizer != nil) != tc.lem || s.LemmatizerURL != tc.lemURL {
			t.Errorf("%s (vocabulary %v): lemmatiser %v at %q, want %v at %q", tc.name, tc.vocab != nil, s.Lemmatizer != nil, s.LemmatizerURL, tc.lem, tc.lemURL)
		}
		opt := s.Options()
		if opt.Backend != s.Backend || opt.Vocabulary != s.Vocabulary || opt.GlossaryTerms != vocab.DefaultGlossaryTerms {
			t.Errorf("%s: options %+v", tc.name, opt)
		}
		s.Close()
	}
}

// TestUseVocabularyCache: the session's lemmatiser keeps the run's lemmas
// (lemmatizer.Cache, which the translator fills a page at a time) in
// front of the circuit breaker set up by Breaker.
func TestUseVocabularyCache(t *testing.T) {
	v, err := vocab.Parse(strings.NewReader("source_lemma,target_translation\nhrob,grave\n"), "v.csv")
	if err != nil {
		t.Fatal(err)
	}
	env := map[string]string{"TRANSLATION_URL": "http://127.0.0.1:9", "LEMMATIZER_URL": "http://127.0.0.1:9"}
	s, err := Open("mtapi", func(k string) string { return env[k] })
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if err := s.UseVocabulary(v, Breaker{Cooldown: time.Minute}); err != nil {
		t.Fatal(err)
	}
	c, ok := s.Lemmatizer.(*lemmatizer.Cache)
	if !ok {
		t.Fatalf("lemmatiser %T, want a *lemmatizer.Cache", s.Lemmatizer)
	}
	if b, ok := c.Inner.(*lemmatizer.Breaker); !ok || b.Cooldown != time.Minute {
		t.Errorf("cache in front of %T, want the session's breaker", c.Inner)
	}
}

// TestCapabilities: the concrete backends declare the capabilities the
// translator asks for instead of naming them: mtapi is spaced and takes
// placeholders matched by lemma; chat_compatible takes a glossary and no
// placeholders.
func TestCapabilities(t *testing.T) {
	env := map[string]string{"TRANSLATION_URL": "http://127.0.0.1:9", "MTAPI_MIN_INTERVAL_S": "0.5",
		"LLM_BASE_URL": "http://127.0.0.1:9/v1", "LLM_MODEL": "m"}
	getenv := func(k string) string { return env[k] }
	mt, err := OpenBackend("mtapi", getenv)
	if err != nil {
		t.Fatal(err)
	}
	defer mt.Close()
	if sp, ok := mt.(backend.Spaced); !ok || sp.MinInterval() != 500*time.Millisecond {
		t.Errorf("mtapi: not spaced by 0.5 s")
	}
	if translator.PageConcurrency(mt) != 2 {
		t.Errorf("mtapi with spacing: page concurrency %d, want 2", translator.PageConcurrency(mt))
	}
	if p, ok := mt.(backend.Placeholders); !ok {
		t.Error("mtapi takes no placeholders")
	} else if prot, ok := p.Placeholders(); !ok || !prot.Lemmas || prot.Fallback {
		t.Errorf("mtapi placeholders %+v %v", prot, ok)
	}
	ch, err := OpenBackend("chat_compatible", getenv)
	if err != nil {
		t.Fatal(err)
	}
	defer ch.Close()
	if _, ok := ch.(backend.Placeholders); ok {
		t.Error("chat_compatible takes placeholders")
	}
	if translator.PageConcurrency(ch) != translator.DefaultConcurrency {
		t.Errorf("chat_compatible: page concurrency %d", translator.PageConcurrency(ch))
	}
}

// TestUnknownBackend: a name that is not a backend is refused naming the
// three; the original tool's names are answered with the name to give.
func TestUnknownBackend(t *testing.T) {
	for _, tt := range []struct{ name, want string }{
		{"lindat", "the original tool's lindat (the hosted MT API) is mtapi here"},
		{"openai_compatible", "openai_compatible is chat_compatible here"},
		{"deepl", `unknown backend "deepl" (want one of mtapi, chat_compatible, ct2)`},
	} {
		if _, err := OpenBackend(tt.name, func(string) string { return "" }); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: %v, want %q", tt.name, err, tt.want)
		}
	}
}
