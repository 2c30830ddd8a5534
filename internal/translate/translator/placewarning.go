package translator

import (
	"path"
	"strings"
)

// PlaceWarning is a document's warning msg, which begins with the name it
// was translated under (its file name or Stem), beginning with its path
// in dir instead ("volA/0001: ..."): volumes number their pages alike, and
// "0001: ..." of three folders could not be told apart. dir is a
// slash-separated folder; msg is returned as it is when dir is "" or "."
// or msg does not begin with the name.
func PlaceWarning(msg, dir, name string) string {
	if dir == "" || dir == "." {
		return msg
	}
	for _, p := range []string{name, Stem(name)} {
		if rest, ok := strings.CutPrefix(msg, p+": "); ok {
			return path.Join(dir, p) + ": " + rest
		}
	}
	return msg
}
