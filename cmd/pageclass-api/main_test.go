package main

import (
	"os"
	"testing"

	"archivekit/internal/pageclass/imageio"
)

// TestMain lets the test binary be the decoder processes the runs under
// test start (imageio.Isolation starts the running program again).
func TestMain(m *testing.M) {
	imageio.ServeIfWorker()
	os.Exit(m.Run())
}
