// Package winpath tells the forms of a Windows path, which name nothing on
// this machine: a drive letter with a separator (C:\scans, C:/scans) and a
// UNC share (\\server\share). A command given one for a folder to write
// refuses it (cliflags.WindowsPath); a book whose href is one fails its
// page saying so (internal/book).
package winpath

import "strings"

// IsDrive reports whether p starts with a drive letter, a colon and a
// backslash or slash.
func IsDrive(p string) bool {
	if len(p) < 3 || p[1] != ':' || (p[2] != '\\' && p[2] != '/') {
		return false
	}
	c := p[0] | 0x20 // lower case
	return c >= 'a' && c <= 'z'
}

// IsUNC reports whether p starts as a UNC share does, with two
// backslashes.
func IsUNC(p string) bool { return strings.HasPrefix(p, `\\`) }

// IsAbs reports whether p is an absolute Windows path: a drive path or a
// UNC share.
func IsAbs(p string) bool { return IsDrive(p) || IsUNC(p) }
