package main

import (
	"archivekit/internal/testenv"
	"context"
	"io"
	"path/filepath"
	"testing"

	"archivekit/bindings/ct2"
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
