package cliflags

import (
	"fmt"
	"strconv"
	"strings"
	"unicode"

	"archivekit/internal/winpath"
)

// WindowsPath checks path, a folder (or file) a command is to write, for
// the forms of a Windows path, which name nothing on this machine: a path
// that starts with a drive letter and a separator (`C:\out`, `C:/out`) or
// a UNC path (`\\server\share`) is a usage error (UsageError: before, -o
// 'C:\Users\scan\out' made a folder of that very name in the working
// folder, without a word); any other path with a backslash (`results\run1`)
// is taken, with a warning ("" when none): it makes one folder (or file)
// whose name holds the backslashes. where says where path came from, for
// the messages: a flag ("-o"), or a key and its file ("--results (from
// [OUTPUT] FOLDER_RESULTS in cfg.txt)"). An empty path is no problem.
func WindowsPath(where, path string) (warning string, err error) {
	const notSeparators = "backslashes are not folder separators here"
	switch {
	case winpath.IsDrive(path):
		// WSL mounts drive C: at /mnt/c: the likeliest place of the
		// folder meant, as an example.
		like := "/mnt/" + strings.ToLower(path[:1]) + "/" + strings.ReplaceAll(strings.TrimLeft(path[2:], `\/`), `\`, "/")
		return "", Usagef("%s: %s is a Windows path: on this machine give a path such as %s (where the drive is mounted); %s", where, quote(path), strings.TrimSuffix(like, "/"), notSeparators)
	case winpath.IsUNC(path):
		return "", Usagef("%s: %s is a Windows (UNC) path: on this machine give a path such as /mnt/... where the share is mounted; %s", where, quote(path), notSeparators)
	case strings.Contains(path, `\`):
		return fmt.Sprintf("%s: %s has backslashes, and %s: it makes a single folder (or file) named with them, not folders in folders (write %s for those)", where, quote(path), notSeparators, strings.ReplaceAll(path, `\`, "/")), nil
	}
	return "", nil
}

// quote writes path between double quotes, its backslashes as they are
// (a Go-quoted `"C:\\out"` is not what was typed); a path with characters
// that do not print is Go-quoted.
func quote(path string) string {
	if strings.IndexFunc(path, func(r rune) bool { return !unicode.IsPrint(r) }) >= 0 {
		return strconv.Quote(path)
	}
	return `"` + path + `"`
}
