package translator

import (
	"fmt"
	"testing"

	"archivekit/internal/translate/alto"
)

// TestModeByFormat: the mode each kind gets for the mode asked for, as the
// run metadata's output_mode_by_format records it (command line and
// translate-api): alternative is ALTO's own, PAGE-XML and metadata append;
// none asked, each kind its default; hOCR always parallel.
func TestModeByFormat(t *testing.T) {
	for _, c := range []struct {
		mode alto.Mode
		want string
	}{
		{"", "map[alto:replace hocr:parallel metadata:replace page:append]"},
		{alto.Replace, "map[alto:replace hocr:parallel metadata:replace page:replace]"},
		{alto.Append, "map[alto:append hocr:parallel metadata:append page:append]"},
		{alto.Alternative, "map[alto:alternative hocr:parallel metadata:alternative page:append]"},
	} {
		if got := fmt.Sprint(ModeByFormat(c.mode)); got != c.want {
			t.Errorf("ModeByFormat(%q) = %s, want %s", c.mode, got, c.want)
		}
	}
	for m, want := range map[string]bool{"replace": true, "append": true, "alternative": true, "": false, "merge": false, "Append": false} {
		if ValidMode(m) != want {
			t.Errorf("ValidMode(%q) = %v, want %v", m, !want, want)
		}
	}
}
