// Package decodertest lets a test binary be the decoder processes of
// imageio.Isolation, with a fault tests can ask for by a file's name.
package decodertest

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"archivekit/internal/pageclass/imageio"
)

// CrashPrefix starts the name of a file whose decoding kills its decoder
// process with SIGSEGV, as a crashing C decoder would.
const CrashPrefix = "crash-"

// Serve makes the test binary a decoder process when imageio started it
// (and then never returns), with the CrashPrefix fault; otherwise it
// returns at once. Call it first in TestMain.
func Serve() {
	if os.Getenv(imageio.EnvWorker) == "1" {
		imageio.TestHookBeforeDecode = func(name string) {
			if strings.HasPrefix(filepath.Base(name), CrashPrefix) {
				_ = syscall.Kill(os.Getpid(), syscall.SIGSEGV)
				time.Sleep(time.Minute) // the signal ends the process first
			}
		}
	}
	imageio.ServeIfWorker()
}

// Main is a TestMain for a package whose code under test decodes through
// imageio.Isolation: in a decoder process it serves (Serve); otherwise it
// starts one Isolation, hands it to share for every test of the binary
// (starting decoder processes for each run would cost a suite minutes),
// runs the tests, stops it and returns their exit code, for os.Exit.
func Main(m *testing.M, share func(*imageio.Isolation)) int {
	Serve()
	d, err := imageio.NewIsolation(0, 0)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer d.Close()
	share(d)
	return m.Run()
}
