package vocab

import (
	"encoding/csv"
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"

	"archivekit/internal/regularfile"
	"archivekit/internal/testenv"
)

// sharedData returns the shared translator data folder.
func sharedData(t testing.TB) string {
	t.Helper()
	return testenv.Data(t, "translator")
}

func TestLoadRealVocabulary(t *testing.T) {
	v, err := Load(filepath.Join(sharedData(t), "vocabulary.csv"))
	if err != nil {
		t.Fatal(err)
	}
	if len(v.Skipped) != 0 {
		t.Errorf("skipped rows: %v", v.Skipped[:min(5, len(v.Skipped))])
	}
	phrases, words := v.Counts()
	if v.Len() != 5087 || phrases+words != 5087 || words < 2000 || phrases < 2000 {
		t.Errorf("Len %d, phrases %d, words %d", v.Len(), phrases, words)
	}
	if e := v.Entries[0]; e.Source != "(polo)zemnice" || e.Target != "pit house" || e.Line != 2 {
		t.Errorf("first entry = %+v", e)
	}
}

func TestParse(t *testing.T) {
	tests := []struct {
		name        string
		data        string
		wantErr     string
		wantLen     int
		wantSkipped []string
	}{
		{"two columns", "source_lemma,target_translation\nhrob,grave\njáma,pit\n", "", 2, nil},
		{"five columns, BOM and CRLF", "\ufeffsource_lemma,target_translation,source,source_id,uri\r\nhrob,grave,arch,HES-1,https://example.org/1\r\n", "", 1, nil},
		{"header with spaces and capitals", " Source_Lemma , Target_Translation \nhrob,grave\n", "", 1, nil},
		{"empty file", "", "empty file", 0, nil},
		{"wrong header", "lemma,translation\nhrob,grave\n", "test.csv:1: header", 0, nil},
		{"a token file is not quoted", "ghp_S3cretT0ken\n", "test.csv:1: the first row (1 columns, not shown) is not a header", 0, nil},
		{"bad rows skipped, rest kept", "source_lemma,target_translation\nhrob,grave\njáma\n,nothing\nkůl,\njáma,pit\nHROB,tomb\n", "", 2,
			[]string{"test.csv:3: 1 columns, want 2", "test.csv:4: empty source_lemma", "test.csv:5: empty target_translation", `test.csv:7: "HROB" already defined on line 2`}},
		{"broken quote", "source_lemma,target_translation\n\"hrob,grave\n", "", 0, []string{"test.csv:2:"}},
		{"not UTF-8", "source_lemma,target_translation\nhr\xf8b,grave\n", "not UTF-8", 0, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			v, err := Parse(strings.NewReader(tc.data), "test.csv")
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if v.Len() != tc.wantLen || len(v.Skipped) != len(tc.wantSkipped) {
				t.Fatalf("Len %d skipped %v", v.Len(), v.Skipped)
			}
			for i, w := range tc.wantSkipped {
				if !strings.Contains(v.Skipped[i].Error(), w) {
					t.Errorf("skipped[%d] = %v, want %q", i, v.Skipped[i], w)
				}
			}
		})
	}
	if _, err := Load(filepath.Join(t.TempDir(), "missing.csv")); err == nil || !strings.Contains(err.Error(), "missing.csv") {
		t.Errorf("missing file: err = %v", err)
	}
}

func TestGlossary(t *testing.T) {
	v, err := Parse(strings.NewReader("source_lemma,target_translation\nhrob,grave\nkostrový hrob,inhumation grave\nkeramika,pottery\nzlomek keramiky,pottery sherd\nmeč,sword\n"), "g.csv")
	if err != nil {
		t.Fatal(err)
	}
	text := "Kostrový hrob a druhý HROB; zlomek keramiky. Keramikář nic."
	got := v.Glossary(text, 40)
	want := [][2]string{{"zlomek keramiky", "pottery sherd"}, {"kostrový hrob", "inhumation grave"}, {"hrob", "grave"}}
	if len(got) != len(want) {
		t.Fatalf("Glossary = %v, want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("Glossary = %v, want %v", got, want)
		}
	}
	if got := v.Glossary(text, 2); len(got) != 2 || got[1][0] != "kostrový hrob" {
		t.Errorf("Glossary max 2 = %v", got)
	}
	if got := v.Glossary(text, 0); got != nil {
		t.Errorf("Glossary max 0 = %v", got)
	}
}

func TestGlossaryRealVocabulary(t *testing.T) {
	v, err := Load(filepath.Join(sharedData(t), "vocabulary.csv"))
	if err != nil {
		t.Fatal(err)
	}
	texts := mtLogSources(t)
	all := strings.Join(texts, "\n")
	got := v.Glossary(all, DefaultGlossaryTerms)
	if len(got) != DefaultGlossaryTerms {
		t.Fatalf("%d glossary terms for the whole log corpus, want %d", len(got), DefaultGlossaryTerms)
	}
	for i := 1; i < len(got); i++ {
		if len([]rune(got[i][0])) > len([]rune(got[i-1][0])) {
			t.Fatalf("not longest first: %q after %q", got[i][0], got[i-1][0])
		}
	}
	for _, g := range got {
		if !regexp.MustCompile(`(?i)(^|[^\p{L}\p{N}])` + regexp.QuoteMeta(g[0]) + `($|[^\p{L}\p{N}])`).MatchString(all) {
			t.Errorf("glossary term %q is not in the text as a whole word", g[0])
		}
	}
}

func TestMaxGlossaryTermsFromEnv(t *testing.T) {
	for _, tc := range []struct {
		v    string
		want int
		bad  bool
	}{{"", 40, false}, {"12", 12, false}, {"0", 0, false}, {"-1", 0, true}, {"lots", 0, true}} {
		got, err := MaxGlossaryTermsFromEnv(func(string) string { return tc.v })
		if (err != nil) != tc.bad || got != tc.want || (tc.bad && !strings.Contains(err.Error(), "LLM_MAX_GLOSSARY_TERMS")) {
			t.Errorf("%q: %d, %v", tc.v, got, err)
		}
	}
}

// mtLogSources returns the source texts of the real hosted-API logs.
func mtLogSources(t testing.TB) []string {
	files, _ := filepath.Glob(filepath.Join(sharedData(t), "mt-logs", "*.csv"))
	var out []string
	for _, f := range files {
		fh, err := os.Open(f)
		if err != nil {
			t.Fatal(err)
		}
		recs, err := csv.NewReader(fh).ReadAll()
		fh.Close()
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		for _, r := range recs[1:] {
			out = append(out, r[3])
		}
	}
	if len(out) == 0 {
		t.Fatal("no mt-logs")
	}
	return out
}

// TestHostedAPICopiesVowellessCapitals checks the placeholder design against
// the real hosted-API logs: tokens of two or more capital consonants (how
// the placeholders look) come back unchanged in at least 90 % of cases.
func TestHostedAPICopiesVowellessCapitals(t *testing.T) {
	files, _ := filepath.Glob(filepath.Join(sharedData(t), "mt-logs", "*.csv"))
	tok := regexp.MustCompile(`\b[BCDFGHJKLMNPQRSTVWXZ]{2,}\b`)
	total, kept := 0, 0
	for _, f := range files {
		fh, _ := os.Open(f)
		recs, err := csv.NewReader(fh).ReadAll()
		fh.Close()
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range recs[1:] {
			for _, w := range tok.FindAllString(r[3], -1) {
				total++
				if regexp.MustCompile(`\b` + w + `\b`).MatchString(r[4]) {
					kept++
				}
			}
		}
	}
	t.Logf("vowel-less capital tokens copied unchanged: %d of %d", kept, total)
	if total < 100 || float64(kept) < 0.9*float64(total) {
		t.Fatalf("%d of %d copied", kept, total)
	}
	for _, p := range prefixes {
		if !tok.MatchString(p + codeSuffix(0)) {
			t.Errorf("placeholder %s does not have the shape the test measured", p+codeSuffix(0))
		}
	}
}

// A vocabulary path naming a pipe or a device is refused with the file
// named, instead of blocking on a read that never ends.
func TestLoadRefusesNonRegularFile(t *testing.T) {
	fifo := filepath.Join(t.TempDir(), "vocabulary.csv")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	for _, path := range []string{fifo, "/dev/zero"} {
		_, err := Load(path)
		if err == nil || !strings.Contains(err.Error(), path) || !errors.Is(err, regularfile.ErrNotRegular) {
			t.Errorf("Load(%s) = %v, want a not-a-regular-file error naming it", path, err)
		}
	}
}
