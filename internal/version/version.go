// Package version is the one version of archivekit, shared by every command:
// --version, the /info of both services, the run metadata (tool_version) and
// the User-Agent of outbound HTTP clients.
//
// The source is the VERSION file at the repository root. `make build`,
// `make install` and `make dist` stamp it into each binary with
//
//	-ldflags "-X archivekit/internal/version.stamped=$(cat VERSION)"
//
// and a binary built without the stamp (go build, go test) reports the same
// file, embedded at compile time, so the two cannot disagree.
package version

import (
	"fmt"
	"net/http"
	"runtime"

	"archivekit"
)

// stamped is set by the linker (-X); empty in unstamped builds.
var stamped string

// String is the version, e.g. "0.9.0".
func String() string {
	if stamped != "" {
		return stamped
	}
	return archivekit.Version()
}

// Stamped reports whether the linker stamped the version (make builds).
func Stamped() bool { return stamped != "" }

// UserAgent is the User-Agent of every outbound HTTP request, e.g.
// "archivekit/0.9.0".
func UserAgent() string { return "archivekit/" + String() }

// SetUserAgent sets the User-Agent of req unless the caller set one.
func SetUserAgent(req *http.Request) {
	if req.Header.Get("User-Agent") == "" {
		req.Header.Set("User-Agent", UserAgent())
	}
}

// Line is the --version output of a command: name, version, Go version and
// platform, e.g. "pageclass 0.9.0 (go1.26.8 linux/amd64)".
func Line(command string) string {
	return fmt.Sprintf("%s %s (%s %s/%s)", command, String(), runtime.Version(), runtime.GOOS, runtime.GOARCH)
}
