package main

import (
	"fmt"
	"os"
	"testing"

	"archivekit/internal/pageclass/imageio"
	"archivekit/internal/pageclass/imageio/decodertest"
)

// TestMain lets the test binary be the decoder processes the services
// under test start (imageio.Isolation starts the running program again);
// an upload named crash-* crashes its decoder process there.
//
// The runs share one set of decoder processes (testDecoders): starting
// them for each run cost the suite minutes.
func TestMain(m *testing.M) {
	decodertest.Serve()
	d, err := imageio.NewIsolation(0, 0)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	testDecoders = d
	code := m.Run()
	d.Close()
	os.Exit(code)
}
