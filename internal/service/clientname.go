package service

import (
	"path"
	"strings"
)

// ClientName reduces a file name sent by a client to its last element
// (after either kind of slash), so that it can only label outputs and never
// becomes a path. It is "" when no name is left ("", "/", "." or "..").
func ClientName(name string) string {
	name = path.Base("/" + strings.ReplaceAll(name, `\`, "/"))
	if name == "/" || name == "." || name == ".." {
		return ""
	}
	return name
}
