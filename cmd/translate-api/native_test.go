package main

import (
	"context"
	"encoding/json"
	"io"
	"path/filepath"
	"strings"
	"testing"

	"archivekit/bindings/ct2"
	"archivekit/internal/testenv"
)

// The ct2 model opened at start to check the configuration is the one the
// warm-up uses (loaded once), and closing the server releases it.
func TestCT2ModelLoadedOnceAndClosed(t *testing.T) {
	d := testenv.Fixtures(t)
	env := map[string]string{
		"TRANSLATION_BACKEND": "ct2", "CT2_MODEL_DIR": filepath.Join(d, "ct2", "translator"),
		"CT2_MODEL_FAMILY": "nmt3", "CT2_COMPUTE_TYPE": "float32", "CT2_LANGUAGES": "cs,en",
	}
	lookup := func(k string) (string, bool) { v, ok := env[k]; return v, ok }
	base := ct2.LiveHandles()
	s, err := newServer(lookup, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if n := ct2.LiveHandles() - base; n != 1 {
		t.Errorf("%d models open after start, want 1", n)
	}
	if err := s.svc.WarmUp(context.Background()); err != nil {
		t.Fatal(err)
	}
	if n := ct2.LiveHandles() - base; n != 1 {
		t.Errorf("%d models open after warm-up, want 1 (the start's model reused)", n)
	}
	s.close()
	if n := ct2.LiveHandles() - base; n != 0 {
		t.Errorf("%d models still open after close", n)
	}
}

// TestCT2AnswerNamesModel: a JSON answer of the ct2 backend names the model
// that produced it (its folder and the digest of its files), as the run
// metadata does; it said "ct2" only.
func TestCT2AnswerNamesModel(t *testing.T) {
	d := testenv.Fixtures(t)
	model := filepath.Join(d, "ct2", "translator")
	_, ts := startServer(t, map[string]string{
		"TRANSLATION_BACKEND": "ct2", "CT2_MODEL_DIR": model, "CT2_MODEL_FAMILY": "nmt3", "CT2_COMPUTE_TYPE": "float32",
		"CT2_LANGUAGES": "cs,en", "CT2_GUARD_MIN_RATIO": "0.01", "CT2_GUARD_MAX_RATIO": "100", "CT2_MAX_LENGTH": "16",
		"TRANSLATE_PARA_CONFIG": "../../setup/translate/para_config.txt", "LOG_LEVEL": "WARNING"})
	body, ct := multipartBody(t, part{Field: "file", Name: "p.alto.xml", File: true, Data: []byte(pageALTO)},
		part{Field: "source_lang", Data: []byte("cs")}, part{Field: "response_format", Data: []byte("json")})
	resp := post(t, ts.URL+"/translate", ct, body)
	b := readBody(t, resp)
	var a struct {
		Backend     string         `json:"backend"`
		BackendInfo map[string]any `json:"backend_info"`
	}
	if err := json.Unmarshal(b, &a); err != nil || resp.StatusCode != 200 {
		t.Fatalf("%d %.300s", resp.StatusCode, b)
	}
	if dg, _ := a.BackendInfo["ct2_model_digest"].(string); a.Backend != "ct2" || a.BackendInfo["ct2_model_dir"] != model || !strings.HasPrefix(dg, "sha256:") {
		t.Errorf("answer names backend %q, %v", a.Backend, a.BackendInfo)
	}
}
