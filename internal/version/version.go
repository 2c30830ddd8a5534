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
	"runtime/debug"

	"archivekit"
)

// stamped is set by the linker (-X); empty in unstamped builds.
var stamped string

// commit is set by the linker (-X) to the source's commit, with "+dirty"
// when the tree had changes; empty in unstamped builds.
var commit string

// Commit is the commit the binary was built from ("3f2a9c1d0b7e", with
// "+dirty" for a tree with changes): the linker's stamp (make builds), else
// what the Go toolchain recorded (go build in a checkout), else "" (go
// test, a source tree without its history). Two builds of one version
// differ by it: a run's metadata and --version say which one ran.
func Commit() string {
	if commit != "" {
		return commit
	}
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return ""
	}
	var rev string
	dirty := false
	for _, s := range info.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			dirty = s.Value == "true"
		}
	}
	if len(rev) > 12 {
		rev = rev[:12]
	}
	if rev != "" && dirty {
		rev += "+dirty"
	}
	return rev
}

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

// Line is the --version output of a command: name, version, commit when
// known, Go version and platform, e.g. "pageclass 0.9.0 (commit
// 3f2a9c1d0b7e, go1.26.8 linux/amd64)".
func Line(command string) string {
	built := ""
	if c := Commit(); c != "" {
		built = "commit " + c + ", "
	}
	return fmt.Sprintf("%s %s (%s%s %s/%s)", command, String(), built, runtime.Version(), runtime.GOOS, runtime.GOARCH)
}
