package langtag

import (
	"encoding/json"
	"os"
	"os/exec"
	"strings"
	"testing"
)

// TestLangcodes: every tag MT builds is valid for Python's langcodes (in
// the tools virtualenv of test/requirements-tools.txt), which writes it
// back unchanged as its standard form.
func TestLangcodes(t *testing.T) {
	py := os.Getenv("ARCHIVEKIT_PYTOOLS")
	if py == "" {
		t.Skip("ARCHIVEKIT_PYTOOLS not set (make test sets it): langcodes not available")
	}
	var tags []string
	for _, p := range [][2]string{{"en", "cs"}, {"en", "de"}, {"de", "en"}, {"en", "es"}, {"en", "syc"}, {"en", ""}, {"en-GB", "de-AT"}, {"uk", "ru"}, {"en", "zh-Hant"}} {
		tag, err := MT(p[0], p[1])
		if err != nil {
			t.Fatal(err)
		}
		tags = append(tags, tag)
	}
	script := `
import json, sys, langcodes
print(json.dumps([[langcodes.tag_is_valid(t), langcodes.standardize_tag(t)] for t in json.loads(sys.argv[1])]))
`
	arg, _ := json.Marshal(tags)
	out, err := exec.Command(py, "-c", script, string(arg)).Output()
	if err != nil {
		t.Fatalf("langcodes: %v", err)
	}
	var got [][2]any
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	for i, tag := range tags {
		if got[i][0] != true || got[i][1] != tag {
			t.Errorf("%s: langcodes says valid %v, standard form %v", tag, got[i][0], got[i][1])
		}
	}
	t.Logf("langcodes accepts %s", strings.Join(tags, ", "))
}
