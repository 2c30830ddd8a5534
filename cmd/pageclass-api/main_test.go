package main

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"archivekit/internal/pageclass/imageio"
)

// TestMain lets the test binary be the decoder processes the services
// under test start (imageio.Isolation starts the running program again).
// There, an upload named crash-*.png kills its decoder process as a
// crashing C decoder would.
func TestMain(m *testing.M) {
	if os.Getenv(imageio.EnvWorker) == "1" {
		imageio.TestHookBeforeDecode = func(name string) {
			if strings.HasPrefix(filepath.Base(name), "crash-") {
				_ = syscall.Kill(os.Getpid(), syscall.SIGSEGV)
				time.Sleep(time.Minute) // the signal ends the process first
			}
		}
	}
	imageio.ServeIfWorker()
	os.Exit(m.Run())
}
