package batch

import (
	"errors"

	"archivekit/internal/translate/backend"
)

// CheckRequest is the check each document translator (alto, metadata,
// pagexml, hocr) makes of its options first: a backend and a target
// language are required, and a source of "" or "auto" (auto reports it)
// needs a language detector. pkg prefixes the errors ("alto: ...").
func CheckRequest(pkg string, b backend.Backend, source, target string, hasDetector bool) (auto bool, err error) {
	if b == nil || target == "" {
		return false, errors.New(pkg + ": Backend and Target are required")
	}
	auto = source == "" || source == "auto"
	if auto && !hasDetector {
		return auto, errors.New(pkg + ": source language is auto but no Detector is given")
	}
	return auto, nil
}
