package metadata

import (
	"archivekit/internal/testenv"
	"archivekit/internal/translate/alto"
	"archivekit/internal/translate/xmlsplice"
	"bytes"
	"context"
	"encoding/csv"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// logBackend answers from the real hosted-API logs of the records; unknown
// texts are upper-cased.
type logBackend struct {
	known map[string]string
	mu    sync.Mutex
	calls int
}

func (b *logBackend) Name() string                                        { return "fake" }
func (b *logBackend) Close() error                                        { return nil }
func (b *logBackend) Supports(ctx context.Context, src, tgt string) error { return nil }
func (b *logBackend) Translate(ctx context.Context, text, src, tgt string) (string, error) {
	b.mu.Lock()
	b.calls++
	b.mu.Unlock()
	if v, ok := b.known[text]; ok {
		return v, nil
	}
	return strings.ToUpper(text), nil
}

type record struct {
	name string
	src  []byte
	log  [][]string // real log rows: file, page, xpath, source, target
}

func loadRecords(t *testing.T) ([]record, *logBackend) {
	dir := testenv.Path(t, "records")
	logs := testenv.Path(t, "mt-logs")
	files, _ := filepath.Glob(filepath.Join(dir, "*.xml"))
	if len(files) != 15 {
		t.Fatalf("%d records, want 15", len(files))
	}
	be := &logBackend{known: map[string]string{}}
	var recs []record
	for _, f := range files {
		src, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		name := strings.TrimSuffix(filepath.Base(f), ".xml")
		fh, err := os.Open(filepath.Join(logs, name+"_log.csv"))
		if err != nil {
			t.Fatal(err)
		}
		rows, err := csv.NewReader(fh).ReadAll()
		fh.Close()
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range rows[1:] {
			be.known[r[3]] = r[4]
		}
		recs = append(recs, record{name, src, rows[1:]})
	}
	return recs, be
}

func fields(t *testing.T) []*XPath {
	fs, err := LoadFields(testenv.Path(t, "fields.txt"))
	if err != nil {
		t.Fatal(err)
	}
	if len(fs) != 10 {
		t.Fatalf("%d fields, want 10", len(fs))
	}
	return fs
}

// blankUnits empties the content of every element the fields select.
func blankUnits(t *testing.T, src []byte, fs []*XPath) []byte {
	doc, err := xmlsplice.Parse(src)
	if err != nil {
		t.Fatal(err)
	}
	ed := xmlsplice.NewEditor(src)
	seen := map[*xmlsplice.Node]bool{}
	for _, f := range fs {
		for _, el := range f.Select(doc, DefaultNamespaces) {
			if !seen[el] && !el.SelfClosing {
				seen[el] = true
				ed.Replace(el.StartTagEnd, el.EndTagStart, "")
			}
		}
	}
	out, _ := ed.Bytes()
	return out
}

func TestRealRecordsReplace(t *testing.T) {
	recs, be := loadRecords(t)
	fs := fields(t)
	total := 0
	for _, r := range recs {
		t.Run(r.name, func(t *testing.T) {
			res, err := Translate(context.Background(), r.src, Options{Backend: be, Source: "cs", Target: "en", Fields: fs, File: r.name})
			if err != nil {
				t.Fatal(err)
			}
			// The same fields as the hosted tool's log, in the same order,
			// with its translations written.
			if len(res.Log) != len(r.log) {
				t.Fatalf("%d fields translated, real log has %d", len(res.Log), len(r.log))
			}
			for i, row := range r.log {
				// The field as the record writes it (amcr:), as the hosted
				// tool's log names it (before, the field list's arch:).
				want := row[2]
				if res.Log[i].Line != want || res.Log[i].Source != row[3] || res.Log[i].Target != row[4] {
					t.Errorf("row %d: %q %q, real log %q %q", i, res.Log[i].Line, res.Log[i].Source, want, row[3])
				}
				if !bytes.Contains(res.Output, []byte(xmlsplice.EscapeText(row[4]))) {
					t.Errorf("translation %q not written", row[4])
				}
			}
			if !bytes.Equal(blankUnits(t, res.Output, fs), blankUnits(t, r.src, fs)) {
				t.Error("output differs outside the targeted texts")
			}
			if res.Calls != len(r.log) {
				t.Errorf("%d calls for %d fields", res.Calls, len(r.log))
			}
			total += len(r.log)
		})
	}
	if total == 0 {
		t.Fatal("no field translated")
	}
}

func TestRealRecordsAppendIdempotent(t *testing.T) {
	recs, be := loadRecords(t)
	fs := fields(t)
	for _, r := range recs {
		t.Run(r.name, func(t *testing.T) {
			opt := Options{Backend: be, Source: "cs", Target: "en", Fields: fs, Mode: alto.Append, File: r.name}
			once, err := Translate(context.Background(), r.src, opt)
			if err != nil {
				t.Fatal(err)
			}
			if once.Translated != len(r.log) {
				t.Fatalf("%d appended, want %d", once.Translated, len(r.log))
			}
			be.calls = 0
			twice, err := Translate(context.Background(), once.Output, opt)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(twice.Output, once.Output) {
				t.Error("append twice differs from append once")
			}
			if be.calls != 0 || twice.Calls != 0 || twice.Skipped != 2*len(r.log) {
				t.Errorf("second run: %d backend calls, %d skipped", be.calls, twice.Skipped)
			}
			// Dropping the inserted siblings and the xml:lang="cs" labels gives
			// the input back byte for byte.
			doc, _ := xmlsplice.Parse(once.Output)
			ed := xmlsplice.NewEditor(once.Output)
			doc.Root.Walk(func(n *xmlsplice.Node) bool {
				if a, ok := n.Attr("xml", "lang"); ok && a.Value == "en" {
					ed.Replace(n.Start-len(n.Indent(once.Output)), n.End, "")
				}
				return true
			})
			back, _ := ed.Bytes()
			back = bytes.ReplaceAll(back, []byte(` xml:lang="cs">`), []byte(`>`))
			if !bytes.Equal(back, bytes.ReplaceAll(r.src, []byte(` xml:lang="cs">`), []byte(`>`))) {
				t.Error("append changed more than the inserted siblings and labels")
			}
		})
	}
}

func BenchmarkRealRecords(b *testing.B) {
	dir := testenv.Path(b, "records")
	files, _ := filepath.Glob(filepath.Join(dir, "*.xml"))
	fs, err := LoadFields(testenv.Path(b, "fields.txt"))
	if err != nil {
		b.Fatal(err)
	}
	var srcs [][]byte
	size := 0
	for _, f := range files {
		src, _ := os.ReadFile(f)
		srcs = append(srcs, src)
		size += len(src)
	}
	be := &logBackend{known: map[string]string{}}
	b.SetBytes(int64(size))
	for i := 0; i < b.N; i++ {
		for _, src := range srcs {
			if _, err := Translate(context.Background(), src, Options{Backend: be, Source: "cs", Target: "en", Fields: fs, Mode: alto.Append}); err != nil {
				b.Fatal(err)
			}
		}
	}
}
