package alto

import (
	"archivekit/internal/testenv"
	"context"
	"encoding/csv"
	"errors"
	"os"
	"strings"
	"sync"
	"testing"
)

func sharedData(t testing.TB, name string) string { return testenv.Path(t, name) }

func readSample(t testing.TB) []byte {
	src, err := os.ReadFile(sharedData(t, "alto/MTX201501307_anon.alto.xml"))
	if err != nil {
		t.Fatal(err)
	}
	return src
}

// fake is a configurable Backend: answer maps one text (a batch item, or a
// whole single-item call) to its translation; batches are split on newlines
// and answered line by line, then post-processed by batchHook.
type fake struct {
	answer    func(string) string
	batchHook func(lines []string) ([]string, error)
	mu        sync.Mutex
	calls     []string
}

func (f *fake) Name() string                                        { return "fake" }
func (f *fake) Close() error                                        { return nil }
func (f *fake) Supports(ctx context.Context, src, tgt string) error { return nil }
func (f *fake) Translate(ctx context.Context, text, src, tgt string) (string, error) {
	f.mu.Lock()
	f.calls = append(f.calls, text)
	f.mu.Unlock()
	lines := strings.Split(text, "\n")
	out := make([]string, len(lines))
	for i, l := range lines {
		out[i] = f.answer(l)
	}
	if f.batchHook != nil && len(lines) > 1 {
		var err error
		if out, err = f.batchHook(out); err != nil {
			return "", err
		}
	}
	return strings.Join(out, "\n"), nil
}

func (f *fake) nCalls() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.calls)
}

// logRow is one row of the real translation log of the sample.
type logRow struct{ page, line, src, tgt string }

func readLog(t testing.TB) []logRow {
	fh, err := os.Open(sharedData(t, "mt-logs/MTX201501307_anon_log.csv"))
	if err != nil {
		t.Fatal(err)
	}
	defer fh.Close()
	recs, err := csv.NewReader(fh).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	var rows []logRow
	for _, r := range recs[1:] {
		rows = append(rows, logRow{r[1], r[2], r[3], r[4]})
	}
	return rows
}

// mtLogBackend answers from the real hosted-API log of the sample: each
// logged line's source maps to its logged (aligned) target, and each block
// (a run of rows starting at line 1) maps to the join of its targets, which
// is the hosted API's pass-1 answer. Unknown texts are upper-cased.
func mtLogBackend(t testing.TB) *fake {
	known := map[string]string{}
	rows := readLog(t)
	var bs, bt []string
	flush := func() {
		if len(bs) > 0 {
			known[strings.Join(bs, " ")] = strings.Join(Fields(strings.Join(bt, " ")), " ")
		}
		bs, bt = nil, nil
	}
	for _, r := range rows {
		if r.line == "1" {
			flush()
		}
		bs, bt = append(bs, r.src), append(bt, r.tgt)
		if _, ok := known[r.src]; !ok {
			known[r.src] = r.tgt
		}
	}
	flush()
	return &fake{answer: func(s string) string {
		if v, ok := known[s]; ok {
			return v
		}
		return strings.ToUpper(s)
	}}
}

// upper is a well-behaved backend that keeps the word count.
func upper() *fake { return &fake{answer: strings.ToUpper} }

// wordChanger doubles every third word and drops words of one letter, so
// pass 1 and the lines have other word counts than the source.
func wordChanger() *fake {
	return &fake{answer: func(s string) string {
		var out []string
		for i, w := range Fields(s) {
			if len([]rune(w)) == 1 {
				continue
			}
			out = append(out, "x"+w)
			if i%3 == 0 {
				out = append(out, "d"+w)
			}
		}
		return strings.Join(out, " ")
	}}
}

// dropper loses the separator: multi-line answers come back with their last
// two lines merged.
func dropper() *fake {
	f := upper()
	f.batchHook = func(l []string) ([]string, error) {
		n := len(l)
		return append(l[:n-2:n-2], l[n-2]+" "+l[n-1]), nil
	}
	return f
}

// flaky fails every multi-line call.
func flaky() *fake {
	f := upper()
	f.batchHook = func([]string) ([]string, error) { return nil, errors.New("connection reset") }
	return f
}

// fixedDetector answers one language with one confidence.
type fixedDetector struct {
	lang string
	conf float64
}

func (d fixedDetector) Detect(string) (string, float64) { return d.lang, d.conf }
