package bookout

import "testing"

func TestParseTreeRefuses(t *testing.T) {
	for _, src := range []string{"", "<a>", "</a>", "<a></b>", "<a/><b/>", "<!DOCTYPE a><a/>", "<a><b:c></c></a>"} {
		if _, err := parseTree([]byte(src)); err == nil {
			t.Errorf("%q accepted", src)
		}
	}
}
