// Package archivekit holds what belongs to the whole project: its version,
// read from the VERSION file at the repository root. Commands report it
// through internal/version.
package archivekit

import (
	_ "embed"
	"strings"
)

//go:embed VERSION
var versionFile string

// Version is the content of the VERSION file, trimmed.
func Version() string { return strings.TrimSpace(versionFile) }
