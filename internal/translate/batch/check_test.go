package batch

import (
	"testing"

	"archivekit/internal/translate/backend/backendtest"
)

func TestCheckRequest(t *testing.T) {
	be := &backendtest.Backend{}
	for _, c := range []struct {
		name           string
		source, target string
		detector       bool
		auto           bool
		err            string
	}{
		{"given source", "cs", "en", false, false, ""},
		{"auto with detector", "auto", "en", true, true, ""},
		{"empty source is auto", "", "en", true, true, ""},
		{"auto without detector", "", "en", false, true, "alto: source language is auto but no Detector is given"},
		{"no target", "cs", "", false, false, "alto: Backend and Target are required"},
	} {
		auto, err := CheckRequest("alto", be, c.source, c.target, c.detector)
		got := ""
		if err != nil {
			got = err.Error()
		}
		if auto != c.auto || got != c.err {
			t.Errorf("%s: auto %v, error %q; want %v, %q", c.name, auto, got, c.auto, c.err)
		}
	}
	if _, err := CheckRequest("hocr", nil, "cs", "en", false); err == nil || err.Error() != "hocr: Backend and Target are required" {
		t.Errorf("no backend: %v", err)
	}
}
