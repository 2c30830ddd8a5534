package main

import (
	"bytes"
	"encoding/csv"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"archivekit/internal/testenv"
	"archivekit/internal/translate/alto"
	"archivekit/internal/translate/translator/translatortest"
)

// The source-language order's settings and the end rounds: flag, then
// config, then environment, then default; bad values are usage errors
// naming where they came from.
func TestLangOrderSettings(t *testing.T) {
	dir := t.TempDir()
	cfg := filepath.Join(dir, "c.txt")
	os.WriteFile(cfg, []byte("[translate]\nlang_min_length = 40\ndefault_source_lang = deu\nretry_rounds = 3\nelement_lang = Ignore\n"), 0o644)
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
		element   alto.ElementRule
		elemFrom  string
	}{
		{"defaults", nil, nil, 20, 0.2, "cs", 1, "default", "default", "use", "default"},
		{"environment", nil, env{"TRANSLATE_LANG_MIN_LENGTH": "0", "TRANSLATE_LANG_MIN_CONFIDENCE": "0.5", "TRANSLATE_DEFAULT_SOURCE_LANG": "sk", "TRANSLATE_RETRY_ROUNDS": "0", "TRANSLATE_ELEMENT_LANG": "ignore"},
			0, 0.5, "sk", 0, "TRANSLATE_LANG_MIN_LENGTH", "TRANSLATE_RETRY_ROUNDS", "ignore", "TRANSLATE_ELEMENT_LANG"},
		{"config over environment", []string{"-c", cfg}, env{"TRANSLATE_LANG_MIN_LENGTH": "0", "TRANSLATE_RETRY_ROUNDS": "0", "TRANSLATE_ELEMENT_LANG": "use"},
			40, 0.2, "de", 3, "config lang_min_length", "config retry_rounds", "ignore", "config element_lang"},
		{"flags over config", []string{"-c", cfg, "--lang-min-length", "10", "--lang-min-confidence", "0.3", "--default-source-lang", "pl", "--retry-rounds", "2", "--element-lang", "use"}, nil,
			10, 0.3, "pl", 2, "--lang-min-length", "--retry-rounds", "use", "--element-lang"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s, _, err := parse(append([]string{"in"}, c.args...), c.env.get, &bytes.Buffer{})
			if err != nil {
				t.Fatal(err)
			}
			o := s.Order
			if o.MinLength != c.minLen || o.MinConfidence != c.minConf || o.Default != c.def || s.RetryRounds != c.rounds ||
				s.OrderFrom["min_length"] != c.lenFrom || s.RetryRoundsFrom != c.roundFrom ||
				o.Element != c.element || s.OrderFrom["element"] != c.elemFrom {
				t.Errorf("order %+v from %v, rounds %d from %s", o, s.OrderFrom, s.RetryRounds, s.RetryRoundsFrom)
			}
		})
	}
	for _, bad := range [][]string{{"--lang-min-length", "-1"}, {"--lang-min-confidence", "1"}, {"--default-source-lang", "Czech"}, {"--default-source-lang", "xx"}, {"--retry-rounds", "11"}, {"--element-lang", "skip"}, {"--element-lang", "0"}} {
		if _, _, err := parse(append([]string{"in"}, bad...), env{}.get, &bytes.Buffer{}); err == nil || !strings.Contains(err.Error(), bad[0]) {
			t.Errorf("%v: %v, want a usage error naming the flag", bad, err)
		}
	}
	badCfg := filepath.Join(dir, "bad.txt")
	os.WriteFile(badCfg, []byte("[translate]\nelement_lang = skip\n"), 0o644)
	for _, bad := range []struct {
		args []string
		env  env
		name string
	}{
		{nil, env{"TRANSLATE_ELEMENT_LANG": "maybe"}, "TRANSLATE_ELEMENT_LANG"},
		// Well-formed, but no language (it was recorded and sent).
		{nil, env{"TRANSLATE_DEFAULT_SOURCE_LANG": "zz"}, `TRANSLATE_DEFAULT_SOURCE_LANG="zz": want an ISO 639-1 language code`},
		{[]string{"-c", badCfg}, nil, "config element_lang"},
	} {
		if _, _, err := parse(append([]string{"in"}, bad.args...), bad.env.get, &bytes.Buffer{}); err == nil || !strings.Contains(err.Error(), bad.name) {
			t.Errorf("%s: %v, want a usage error naming it", bad.name, err)
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

// wrongLangALTO is a one-page Czech ALTO in ABBYY FineReader's shape
// whose short block "Obsah" the OCR engine labelled LANG="sk".
const wrongLangALTO = "../../internal/translate/alto/testdata/wrong-lang.alto.xml"

// --element-lang on a short block with a wrong LANG: used (the default),
// it makes "Obsah" Slovak; ignored, the block takes the page's detected
// Czech, and the run metadata records the setting, where it came from and
// the order without the element rule.
func TestElementLangRun(t *testing.T) {
	api := startAPI(t, translatortest.Config{})
	cases := []struct {
		name           string
		args           []string
		env            env
		lang, rule     string
		element, from  string
		order          []any
		elementSources float64
	}{
		{"default: used", nil, nil, "sk", "element", "use", "default", []any{"detected", "element", "document", "default"}, 2},
		{"flag ignore", []string{"--element-lang", "ignore"}, nil, "cs", "document", "ignore", "--element-lang", []any{"detected", "document", "default"}, 0},
		{"environment ignore", nil, env{"TRANSLATE_ELEMENT_LANG": "ignore"}, "cs", "document", "ignore", "TRANSLATE_ELEMENT_LANG", []any{"detected", "document", "default"}, 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			e, out := newEnv(api), t.TempDir()
			for k, v := range c.env {
				e[k] = v
			}
			r := runCLI(t, e, append([]string{wrongLangALTO, "-o", out, "--vocabulary", ""}, c.args...)...)
			if r.code != exitOK {
				t.Fatalf("exit %d: %s", r.code, r.stderr)
			}
			logs, _ := filepath.Glob(filepath.Join(out, "*_log.csv"))
			if len(logs) != 1 {
				t.Fatalf("logs %v", logs)
			}
			f, _ := os.Open(logs[0])
			rows, err := csv.NewReader(f).ReadAll()
			f.Close()
			if err != nil || len(rows) < 2 {
				t.Fatal(err)
			}
			seen := false
			for _, row := range rows[1:] {
				switch {
				case row[3] == "Obsah":
					seen = true
					if row[8] != c.lang || row[9] != c.rule {
						t.Errorf("Obsah (LANG=\"sk\"): %s by %s, want %s by %s", row[8], row[9], c.lang, c.rule)
					}
				case row[8] != "cs":
					t.Errorf("row %v, want Czech", row)
				}
			}
			if !seen {
				t.Error("no log row of Obsah")
			}
			d := readParadata(t, out)
			order, _ := d.Config["source_lang_order"].(map[string]any)
			from, _ := order["from"].(map[string]any)
			if order["element"] != c.element || from["element"] != c.from || !reflect.DeepEqual(order["order"], c.order) {
				t.Errorf("config.source_lang_order %v", order)
			}
			if n := float64(d.Statistics.LangSources["element"]); n != c.elementSources {
				t.Errorf("statistics.lang_sources %v, want %v by the element rule", d.Statistics.LangSources, c.elementSources)
			}
		})
	}
}
