package main

import (
	"bytes"
	"encoding/csv"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"archivekit/internal/testenv"
	"archivekit/internal/translate/translator/translatortest"
)

// The source-language order's settings and the end rounds: flag, then
// config, then environment, then default; bad values are usage errors
// naming where they came from.
func TestLangOrderSettings(t *testing.T) {
	dir := t.TempDir()
	cfg := filepath.Join(dir, "c.txt")
	os.WriteFile(cfg, []byte("[translate]\nlang_min_length = 40\ndefault_source_lang = deu\nretry_rounds = 3\n"), 0o644)
	cases := []struct {
		name      string
		args      []string
		env       env
		minLen    int
		minConf   float64
		def       string
		rounds    int
		lenFrom   string
		roundFrom string
	}{
		{"defaults", nil, nil, 20, 0.2, "cs", 1, "default", "default"},
		{"environment", nil, env{"TRANSLATE_LANG_MIN_LENGTH": "0", "TRANSLATE_LANG_MIN_CONFIDENCE": "0.5", "TRANSLATE_DEFAULT_SOURCE_LANG": "sk", "TRANSLATE_RETRY_ROUNDS": "0"},
			0, 0.5, "sk", 0, "TRANSLATE_LANG_MIN_LENGTH", "TRANSLATE_RETRY_ROUNDS"},
		{"config over environment", []string{"-c", cfg}, env{"TRANSLATE_LANG_MIN_LENGTH": "0", "TRANSLATE_RETRY_ROUNDS": "0"},
			40, 0.2, "de", 3, "config lang_min_length", "config retry_rounds"},
		{"flags over config", []string{"-c", cfg, "--lang-min-length", "10", "--lang-min-confidence", "0.3", "--default-source-lang", "pl", "--retry-rounds", "2"}, nil,
			10, 0.3, "pl", 2, "--lang-min-length", "--retry-rounds"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s, _, err := parse(append([]string{"in"}, c.args...), c.env.get, &bytes.Buffer{})
			if err != nil {
				t.Fatal(err)
			}
			o := s.Order
			if o.MinLength != c.minLen || o.MinConfidence != c.minConf || o.Default != c.def || s.RetryRounds != c.rounds ||
				s.OrderFrom["min_length"] != c.lenFrom || s.RetryRoundsFrom != c.roundFrom {
				t.Errorf("order %+v from %v, rounds %d from %s", o, s.OrderFrom, s.RetryRounds, s.RetryRoundsFrom)
			}
		})
	}
	for _, bad := range [][]string{{"--lang-min-length", "-1"}, {"--lang-min-confidence", "1"}, {"--default-source-lang", "Czech"}, {"--retry-rounds", "11"}} {
		if _, _, err := parse(append([]string{"in"}, bad...), env{}.get, &bytes.Buffer{}); err == nil || !strings.Contains(err.Error(), bad[0]) {
			t.Errorf("%v: %v, want a usage error naming the flag", bad, err)
		}
	}
}

// End to end on the shared ALTO: the log names each line's source
// language and the rule that chose it, and the run metadata counts the
// blocks per rule and records the order.
func TestLangOrderRun(t *testing.T) {
	api := startAPI(t, translatortest.Config{})
	out := t.TempDir()
	r := runCLI(t, newEnv(api), testenv.Path(t, sampleALTO), "-o", out, "--vocabulary", "", "--lang-min-length", "30")
	if r.code != exitOK {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	f, _ := os.Open(filepath.Join(out, "MTX201501307_anon_log.csv"))
	rows, err := csv.NewReader(f).ReadAll()
	f.Close()
	if err != nil || len(rows) < 2 {
		t.Fatal(err)
	}
	rules := map[string]int{}
	for _, row := range rows[1:] {
		rules[row[9]]++
		if row[8] == "" {
			t.Errorf("row without source_lang: %v", row)
		}
		if row[1] == "4" && row[3] == "Obsah" && (row[8] != "sk" || row[9] != "element") {
			t.Errorf("page 4 Obsah: %v, want sk chosen by its element (LANG=\"sk\")", row)
		}
	}
	if rules["detected"] == 0 || rules["element"] == 0 || rules["document"] == 0 || rules["default"] != 0 {
		t.Errorf("log rows per rule %v", rules)
	}
	d := readParadata(t, out)
	ls := d.Statistics.LangSources
	if ls["detected"] == 0 || ls["element"] == 0 || ls["detected"]+ls["element"]+ls["document"]+ls["default"] != 1193 {
		t.Errorf("statistics.lang_sources %v, want the 1193 blocks with text counted once", ls)
	}
	order, _ := d.Config["source_lang_order"].(map[string]any)
	if order["min_length"] != float64(30) || order["default"] != "cs" || d.Config["confidence_threshold"] != 0.2 {
		t.Errorf("config.source_lang_order %v", order)
	}
}
