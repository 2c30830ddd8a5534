package main

import (
	"archivekit/internal/testenv"
	"archivekit/internal/translate/chat/chattest"
	"archivekit/internal/translate/lemmatizer/lemmatizertest"
	"archivekit/internal/translate/translator/translatortest"
	"fmt"
	"hash/fnv"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
)

// degenerateLines answers like chattest.Translate, except that each line
// of a request is, with probability share, replaced by one of its words
// repeated 150 times: the failure the archive saw on about 30% of replies.
// The draw hashes the line with the number of times that line was asked
// before, so a retry draws again and runs repeat whatever the order in
// which concurrent pages arrive.
func degenerateLines(share float64) func(n int, system, user string) string {
	var mu sync.Mutex
	seen := map[string]int{}
	return func(_ int, system, user string) string {
		src := strings.Split(user, "\n")
		lines := strings.Split(chattest.Translate(system, user), "\n")
		mu.Lock()
		defer mu.Unlock()
		for i, l := range lines {
			key := l
			if len(src) == len(lines) {
				key = src[i]
			}
			h := fnv.New32a()
			fmt.Fprintf(h, "%d\x00%s", seen[key], key)
			seen[key]++
			if w := strings.Fields(l); len(w) > 0 && float64(h.Sum32()%1000) < share*1000 {
				lines[i] = strings.TrimSpace(strings.Repeat(w[0]+" ", 150))
			}
		}
		return strings.Join(lines, "\n")
	}
}

// TestSharedDataFigures runs the command on the 15 shared records and the
// 79-page shared ALTO with each backend against its local stand-in (ct2:
// the tiny random-weight nmt3 fixture when ARCHIVEKIT_FIXTURES is set),
// and with the chat stand-in degenerating 30% of lines, and reports the
// share of segments per status, backend calls per page or record, and the
// terminology hit rate (docs/translate.md). It checks that the statuses
// account for every log row and that no degenerate reply is written.
//
//	ARCHIVEKIT_FIGURES=1 go test -v -run SharedDataFigures ./cmd/translate
func TestSharedDataFigures(t *testing.T) {
	if os.Getenv("ARCHIVEKIT_FIGURES") == "" {
		t.Skip("set ARCHIVEKIT_FIGURES=1 to measure (about 15 s)")
	}
	records := testenv.Path(t, "records")
	alto := testenv.Path(t, sampleALTO)
	vocabulary := testenv.Path(t, "vocabulary.csv")
	lem := lemmatizertest.New(lemmatizertest.CzechLexicon, "czech-pdt-ud-2.15-241121")
	t.Cleanup(lem.Close)
	mt := startAPI(t, translatortest.Config{})
	chatOK := chattest.New(chattest.Config{})
	t.Cleanup(chatOK.Close)
	chatBad := chattest.New(chattest.Config{Reply: degenerateLines(0.3)})
	t.Cleanup(chatBad.Close)
	chatEnv := func(url string) env {
		return env{"LLM_BASE_URL": url, "LLM_MODEL": "stand-in", "LLM_LANGUAGES": "cs,sk,de,en", "LOG_FORMAT": "json",
			"TRANSLATE_PARA_CONFIG": paraConfig}
	}
	mtEnv := newEnv(mt)
	mtEnv["LEMMATIZER_URL"] = lem.URL
	type run struct {
		name    string
		backend string
		e       env
		posts   func() int32
	}
	runs := []run{
		{"mtapi stand-in", "mtapi", mtEnv, mt.Posts.Load},
		{"chat stand-in", "chat_compatible", chatEnv(chatOK.BaseURL()), chatOK.Posts.Load},
		{"chat stand-in, 30% of lines degenerate", "chat_compatible", chatEnv(chatBad.BaseURL()), chatBad.Posts.Load},
	}
	if fx := os.Getenv("ARCHIVEKIT_FIXTURES"); fx != "" {
		// The tiny random-weight nmt3 model, under the default guard: its
		// output is noise, which the guard mostly rejects.
		runs = append(runs, run{"ct2 nmt3 tiny random model", "ct2", env{"TRANSLATE_PARA_CONFIG": paraConfig, "LOG_FORMAT": "json",
			"CT2_MODEL_DIR": filepath.Join(fx, "ct2", "translator"), "CT2_MODEL_FAMILY": "nmt3", "CT2_COMPUTE_TYPE": "float32",
			"CT2_LANGUAGES": "cs,en", "CT2_MAX_INPUT_CHARS": "300", "CT2_MAX_LENGTH": "64"}, func() int32 { return 0 }})
	}
	for _, be := range runs {
		for _, in := range []struct {
			name string
			args []string
		}{
			{"15 records", []string{records, "--formats", "xml", "--xpaths", "../../setup/translate/amcr-fields.txt"}},
			{"79-page ALTO", []string{alto}},
		} {
			out := t.TempDir()
			before := be.posts()
			args := append(append([]string{}, in.args...), "-o", out, "-src", "cs", "--backend", be.backend, "--vocabulary", vocabulary)
			r := runCLI(t, be.e, args...)
			if r.code != exitOK {
				t.Fatalf("%s, %s: exit %d: %s", be.name, in.name, r.code, r.stderr)
			}
			d := readParadata(t, out)
			st := d.Statistics
			total := 0
			var keys []string
			for k, n := range st.SegmentStatus {
				total += n
				keys = append(keys, k)
			}
			sort.Strings(keys)
			rows := 0
			err := filepath.Walk(out, func(p string, fi os.FileInfo, err error) error {
				if err != nil || fi.IsDir() {
					return err
				}
				b, _ := os.ReadFile(p)
				if strings.HasSuffix(p, "_log.csv") {
					rows += strings.Count(string(b), "\n") - 1
				}
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			if total == 0 || total > rows {
				t.Errorf("%s, %s: %d statuses for %d log rows", be.name, in.name, total, rows)
			}
			var shares []string
			for _, k := range keys {
				shares = append(shares, fmt.Sprintf("%s %.1f%%", k, 100*float64(st.SegmentStatus[k])/float64(total)))
			}
			units := st.Pages
			unit := "page"
			if units == 0 {
				units, unit = st.SuccessfullyProcessed, "record"
			}
			rate := "n/a"
			if tm := st.Terminology; tm != nil && tm.HitRate != nil {
				rate = fmt.Sprintf("%.3f (%d/%d)", *tm.HitRate, tm.Hit, tm.Expected)
			}
			ph := ""
			if st.PlaceholderCalls > 0 {
				ph = fmt.Sprintf("; placeholders lost in %d of %d calls", st.PlaceholderFallbacks, st.PlaceholderCalls)
			}
			t.Logf("%-40s %-13s segments %5d: %s; %.2f calls/%s (%d HTTP requests); terminology %s; %d documents failed%s",
				be.name, in.name, total, strings.Join(shares, ", "), float64(st.BackendCalls)/float64(units), unit, be.posts()-before, rate, st.SkippedFiles, ph)
			checkNoRunaway(t, out)
		}
	}
}

// checkNoRunaway fails when a translated file holds a word repeated 20
// times in a row.
func checkNoRunaway(t *testing.T, dir string) {
	t.Helper()
	filepath.Walk(dir, func(p string, fi os.FileInfo, err error) error {
		if err != nil || fi.IsDir() || !strings.HasSuffix(p, ".xml") {
			return err
		}
		b, _ := os.ReadFile(p)
		words := strings.FieldsFunc(string(b), func(r rune) bool { return r == ' ' || r == '"' || r == '<' || r == '>' || r == '\n' })
		run := 1
		for i := 1; i < len(words); i++ {
			if words[i] == words[i-1] {
				run++
				if run >= 20 {
					t.Errorf("%s: %q repeated %d times in a row", p, words[i], run)
					return nil
				}
			} else {
				run = 1
			}
		}
		return nil
	})
}
