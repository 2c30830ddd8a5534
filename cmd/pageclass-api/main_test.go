package main

import (
	"os"
	"testing"

	"archivekit/internal/pageclass/imageio/decodertest"
)

// TestMain lets the test binary be the decoder processes the services
// under test start (imageio.Isolation starts the running program again);
// an upload named crash-* crashes its decoder process there.
func TestMain(m *testing.M) {
	decodertest.Serve()
	os.Exit(m.Run())
}
