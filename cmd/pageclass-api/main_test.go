package main

import (
	"os"
	"testing"

	"archivekit/internal/pageclass/imageio"
	"archivekit/internal/pageclass/imageio/decodertest"
)

// TestMain lets the test binary be the decoder processes the services
// under test start (imageio.Isolation starts the running program again; an
// upload named crash-* crashes its decoder process there), and the
// services share one set of them (testDecoders).
func TestMain(m *testing.M) {
	os.Exit(decodertest.Main(m, func(d *imageio.Isolation) { testDecoders = d }))
}
