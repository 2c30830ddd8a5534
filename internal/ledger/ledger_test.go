package ledger

import (
	"bufio"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"archivekit/internal/regularfile"
	"archivekit/internal/utf8name"
)

func open(t *testing.T, dir, name string) *Ledger {
	t.Helper()
	l, err := Open(dir, "tool", "cfg1", map[string]int{"topn": 3}, name)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	return l
}

func record(t *testing.T, l *Ledger, es ...Entry) {
	t.Helper()
	for _, e := range es {
		if err := l.Record(e); err != nil {
			t.Fatal(err)
		}
	}
}

func TestRecordLookupAcrossRuns(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "sub", "cfg1")
	l := open(t, dir, "run1.jsonl")
	record(t, l,
		Entry{Item: "a.png", Digest: "d1", State: Done, Data: []byte(`{"p":[1]}`)},
		Entry{Item: "b.png", Digest: "d2", State: Failed, Reason: "broken"},
		Entry{Item: "a.png", Digest: "d9", State: Skipped, Reason: "empty"},
		Entry{Item: "c.png", Digest: "d3", State: Done},
	)
	l.Close()
	l = open(t, dir, "run2.jsonl")
	record(t, l,
		Entry{Item: "b.png", Digest: "d2", State: Done},                // a retry that worked supersedes the failure
		Entry{Item: "c.png", Digest: "d3", State: Failed, Reason: "x"}, // a later failure does not undo a result
	)
	l.Close()
	l = open(t, dir, "run3.jsonl")
	if l.Files() != 2 {
		t.Errorf("read %d files, want 2", l.Files())
	}
	for _, c := range []struct {
		item, digest string
		ok           bool
		state        State
	}{
		{"a.png", "d1", true, Done},
		{"a.png", "d9", true, Skipped},
		{"b.png", "d2", true, Done},
		{"c.png", "d3", true, Done},
		{"a.png", "other", false, ""}, // content changed: not known
		{"z.png", "d1", false, ""},    // same content, another file
	} {
		e, ok := l.Lookup(c.item, c.digest)
		if ok != c.ok || e.State != c.state {
			t.Errorf("Lookup(%s, %s) = %v %q, want %v %q", c.item, c.digest, ok, e.State, c.ok, c.state)
		}
	}
	for item, want := range map[string]bool{"a.png": true, "b.png": true, "c.png": true, "z.png": false, "a": false} {
		if l.Has(item) != want {
			t.Errorf("Has(%s) = %v, want %v", item, !want, want)
		}
	}
	record(t, l, Entry{Item: "z.png", Digest: "d4", State: Done})
	if !l.Has("z.png") {
		t.Error("Has(z.png) is false after this run recorded it")
	}
	if e, _ := l.Lookup("a.png", "d1"); string(e.Data) != `{"p":[1]}` {
		t.Errorf("data %s", e.Data)
	}
	if n := l.Len(); n != 5 {
		t.Errorf("Len %d, want 5", n)
	}
	// A second run of the same name writes a file of its own.
	if l2, err := Open(dir, "tool", "cfg1", nil, "run1.jsonl"); err != nil || filepath.Base(l2.Path()) != "run1_2.jsonl" {
		t.Errorf("a second run named run1.jsonl: %v, want run1_2.jsonl", err)
	} else {
		l2.Close()
	}
}

// A kill can tear the last line of a run's file anywhere; it is ignored.
// Damage before the last line, or a file of another tool, configuration or
// ledger format version, is an error.
func TestTornAndDamaged(t *testing.T) {
	head := `{"ledger":1,"tool":"tool","config":"cfg1"}` + "\n"
	good := `{"item":"a","sha256":"d","state":"done"}` + "\n"
	for _, c := range []struct {
		name, content string
		items         int
		torn          bool
		err           string
	}{
		{"empty file", "", 0, false, ""},
		{"torn header", `{"ledger":1,"to`, 0, false, ""},
		{"whole", head + good, 1, false, ""},
		{"torn line without newline", head + good + `{"item":"b","sha2`, 1, true, ""},
		{"whole JSON without newline", head + good + `{"item":"b","sha256":"d","state":"done"}`, 1, true, ""},
		{"garbage last line", head + good + "\x00\x00\x00\n", 1, true, ""},
		{"damage in the middle", head + "xx\n" + good, 0, false, "line 2 is not a ledger entry"},
		{"unknown state in the middle", head + `{"item":"b","sha256":"d","state":"maybe"}` + "\n" + good, 0, false, "line 2 is not a ledger entry"},
		{"no digest in the middle", head + `{"item":"b","state":"done"}` + "\n" + good, 0, false, "line 2 is not a ledger entry"},
		{"other configuration", `{"ledger":1,"tool":"tool","config":"cfg2"}` + "\n", 0, false, "configuration cfg2"},
		{"other tool", `{"ledger":1,"tool":"translate","config":"cfg1"}` + "\n" + good, 0, false, "belongs to translate configuration cfg1 (format 1)"},
		{"other format version", `{"ledger":2,"tool":"tool","config":"cfg1"}` + "\n" + good, 0, false, "belongs to tool configuration cfg1 (format 2)"},
		{"not a ledger", "hello\nworld\n", 0, false, "not a ledger header"},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			os.WriteFile(filepath.Join(dir, "old.jsonl"), []byte(c.content), 0o644)
			l, err := Open(dir, "tool", "cfg1", nil, "new.jsonl")
			if c.err != "" {
				if err == nil || !strings.Contains(err.Error(), c.err) {
					t.Fatalf("err %v, want %q", err, c.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if l.Len() != c.items || (len(l.Torn()) > 0) != c.torn {
				t.Errorf("items %d torn %v, want %d %v", l.Len(), l.Torn(), c.items, c.torn)
			}
			record(t, l, Entry{Item: "c", Digest: "d", State: Done})
			l.Close()
			es, err := Read(l.Path())
			if err != nil || len(es) != 1 || es[0].Item != "c" {
				t.Fatalf("this run's file: %v %+v", err, es)
			}
		})
	}
}

// TestRecordSetsAt: an entry recorded without a time gets the time it was
// recorded (RFC 3339, UTC); one given a time keeps it. If it failed, the
// ledger would not say when each item completed (nothing to tell a run's
// progress by, or which of two runs did an item), or a time given would be
// overwritten.
func TestRecordSetsAt(t *testing.T) {
	l := open(t, t.TempDir(), "r.jsonl")
	l.now = func() time.Time { return time.Date(2026, 11, 23, 7, 30, 5, 0, time.FixedZone("CET", 3600)) }
	record(t, l, Entry{Item: "a", Digest: "d", State: Done}, Entry{Item: "b", Digest: "d", State: Failed, At: "2020-01-02T03:04:05Z"})
	l.Close()
	es, err := Read(l.Path())
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ item, at string }{
		{"a", "2026-11-23T06:30:05Z"},
		{"b", "2020-01-02T03:04:05Z"},
	} {
		e, _ := l.Lookup(c.item, "d")
		if e.At != c.at {
			t.Errorf("%s: Lookup gives At %q, want %q", c.item, e.At, c.at)
		}
		var written string
		for _, w := range es {
			if w.Item == c.item {
				written = w.At
			}
		}
		if written != c.at {
			t.Errorf("%s: written with At %q, want %q", c.item, written, c.at)
		}
	}
}

func TestRecordRefusesBadEntries(t *testing.T) {
	l := open(t, t.TempDir(), "r.jsonl")
	for _, e := range []Entry{{Digest: "d", State: Done}, {Item: "a", State: Done}, {Item: "a", Digest: "d", State: "maybe"}} {
		if err := l.Record(e); err == nil {
			t.Errorf("%+v accepted", e)
		}
	}
}

// A process killed with SIGKILL while recording leaves a ledger that the
// next run reads, with every entry the killed one reported written.
func TestKilledWriter(t *testing.T) {
	if dir := os.Getenv("LEDGER_TEST_WRITER"); dir != "" {
		l, err := Open(dir, "tool", "cfg1", nil, "killed.jsonl")
		if err != nil {
			fmt.Println("error", err)
			os.Exit(1)
		}
		for i := 0; ; i++ {
			if err := l.Record(Entry{Item: strconv.Itoa(i), Digest: "d", State: Done, Data: []byte(`"` + strings.Repeat("x", 5000) + `"`)}); err != nil {
				os.Exit(1)
			}
			fmt.Println(i)
		}
	}
	dir := t.TempDir()
	cmd := exec.Command(os.Args[0], "-test.run=^TestKilledWriter$")
	cmd.Env = append(os.Environ(), "LEDGER_TEST_WRITER="+dir)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(out)
	reported := -1
	for sc.Scan() && reported < 200 {
		n, err := strconv.Atoi(sc.Text())
		if err != nil {
			t.Fatalf("child: %s", sc.Text())
		}
		reported = n
	}
	cmd.Process.Kill() // SIGKILL
	cmd.Wait()
	l := open(t, dir, "next.jsonl")
	for i := 0; i <= reported; i++ {
		if _, ok := l.Lookup(strconv.Itoa(i), "d"); !ok {
			t.Fatalf("entry %d reported written but not in the ledger", i)
		}
	}
	if l.Len() < reported+1 {
		t.Errorf("%d entries, at least %d reported", l.Len(), reported+1)
	}
	// The killed run has ended; a run still open (next) has not, until it
	// closes its file.
	ended := func(l *Ledger) string {
		var names []string
		for _, p := range l.Ended() {
			names = append(names, filepath.Base(p))
		}
		return strings.Join(names, ",")
	}
	if got := ended(l); got != "killed.jsonl" {
		t.Errorf("Ended() by next = %q, want killed.jsonl", got)
	}
	if got := ended(open(t, dir, "while.jsonl")); got != "killed.jsonl" {
		t.Errorf("Ended() while next runs = %q, want killed.jsonl alone", got)
	}
	l.Close()
	if got := ended(open(t, dir, "later.jsonl")); got != "killed.jsonl,next.jsonl" {
		t.Errorf("Ended() after next closed = %q, want killed.jsonl,next.jsonl", got)
	}
}

func TestWriteFailures(t *testing.T) {
	path := filepath.Join(t.TempDir(), "f.csv")
	if err := WriteFailures(path, []Failure{{"b/x.png", "decode: bad"}, {"a.pdf", "page 2: \"broken\", twice"}}); err != nil {
		t.Fatal(err)
	}
	f, _ := os.Open(path)
	defer f.Close()
	recs, err := csv.NewReader(f).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	want := [][]string{{"FILE", "ERROR"}, {"a.pdf", "page 2: \"broken\", twice"}, {"b/x.png", "decode: bad"}}
	if fmt.Sprint(recs) != fmt.Sprint(want) {
		t.Errorf("got %q, want %q", recs, want)
	}
}

// TestReadFailures: a failures table is read back only under its own header
// (FILE,ERROR); any other CSV is refused, naming the header wanted. If it
// failed, a merge handed another table in place of a shard's failures table
// (a results table, an empty file) would take its rows as failures, or
// crash, instead of saying which file is wrong.
func TestReadFailures(t *testing.T) {
	for _, c := range []struct {
		name, content string
		want          string // the rows read, or the error
		err           bool
	}{
		{"header only", "FILE,ERROR\n", "[]", false},
		{"rows", "FILE,ERROR\na.pdf,\"page 2: \"\"broken\"\", twice\"\nb/x.png,decode: bad\n", `[{a.pdf page 2: "broken", twice} {b/x.png decode: bad}]`, false},
		{"empty file", "", "not a failures table (want the header FILE,ERROR)", true},
		{"other header", "FILE,REASON\na.pdf,broken\n", "not a failures table (want the header FILE,ERROR)", true},
		{"header in other case", "file,error\na.pdf,broken\n", "not a failures table", true},
		{"a results table", "FILE,PAGE,CLASS-1,SCORE-1\na.png,1,TEXT,0.9\n", "not a failures table", true},
		{"no header", "a.pdf,broken\n", "not a failures table", true},
	} {
		path := filepath.Join(t.TempDir(), "f.csv")
		if err := os.WriteFile(path, []byte(c.content), 0o644); err != nil {
			t.Fatal(err)
		}
		fs, err := ReadFailures(path)
		if c.err {
			if err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), path) {
				t.Errorf("%s: ReadFailures = %v, %v; want an error naming %s: %q", c.name, fs, err, path, c.want)
			}
			continue
		}
		if err != nil || fmt.Sprint(fs) != c.want {
			t.Errorf("%s: ReadFailures = %v, %v; want %s", c.name, fs, err, c.want)
		}
	}
}

// TestFailuresNotUTF8: a file name (or error) that is not valid UTF-8 (a
// Windows-1250 name unpacked on Linux) is written escaped, \xNN, so the
// table is valid UTF-8; it reads back as written, Unescape gives the name's
// bytes, and a merge (read, then written again) leaves the table as it was.
// If it failed, the failures table would hold a raw byte that a spreadsheet
// or a CSV reader shows as U+FFFD, or refuses, and a merged table would
// differ from the shards'.
func TestFailuresNotUTF8(t *testing.T) {
	dir := t.TempDir()
	name := "z\xe1pis.png"
	path := filepath.Join(dir, "f.csv")
	if err := WriteFailures(path, []Failure{{name, "decode: byte \xff"}, {"plain.png", "empty"}}); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if want := "FILE,ERROR\nplain.png,empty\nz\\xe1pis.png,decode: byte \\xff\n"; string(b) != want || !utf8.Valid(b) {
		t.Errorf("table %q, want %q", b, want)
	}
	fs, err := ReadFailures(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		got, want, original string
	}{
		{fs[0].File, "plain.png", "plain.png"},
		{fs[1].File, `z\xe1pis.png`, name},
		{fs[1].Error, `decode: byte \xff`, "decode: byte \xff"},
	} {
		if c.got != c.want || utf8name.Unescape(c.got) != c.original {
			t.Errorf("read %q, want %q (unescaped %q)", c.got, c.want, c.original)
		}
	}
	again := filepath.Join(dir, "merged.csv")
	if err := WriteFailures(again, fs); err != nil {
		t.Fatal(err)
	}
	if b2, _ := os.ReadFile(again); string(b2) != string(b) {
		t.Errorf("written again %q, want %q", b2, b)
	}
}

func TestKeyAndDigest(t *testing.T) {
	a, _ := Key(map[string]any{"models": []string{"v1.4"}, "digests": []string{"x"}})
	b, _ := Key(map[string]any{"models": []string{"v1.4"}, "digests": []string{"y"}})
	if a == b || len(a) != 16 {
		t.Errorf("keys %s %s", a, b)
	}
	p := filepath.Join(t.TempDir(), "f")
	os.WriteFile(p, []byte("abc"), 0o644)
	if d, err := Digest(p); err != nil || d != "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad" {
		t.Errorf("digest %s %v", d, err)
	}
	if d := DigestBytes([]byte("abc")); d != "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad" {
		t.Errorf("DigestBytes = %s, want the SHA-256 of abc", d)
	}
	zero := filepath.Join(t.TempDir(), "zero.png")
	os.Symlink("/dev/zero", zero)
	if _, err := Digest(zero); !errors.Is(err, regularfile.ErrNotRegular) {
		t.Errorf("digest of a link to /dev/zero: %v, want ErrNotRegular", err)
	}
}

// An item whose name is not valid UTF-8 (a Windows-1250 name unpacked on
// Linux) is found again by the next run, and one whose name differs only in
// that byte is another item; before, JSON wrote U+FFFD for the byte and a
// resumed run did the file again, every time.
func TestItemNotUTF8(t *testing.T) {
	dir := t.TempDir()
	name, other := "z\xe1pis.png", "z\xe9pis.png"
	l := open(t, dir, "run1.jsonl")
	record(t, l, Entry{Item: name, Digest: "d1", State: Done}, Entry{Item: "plain.png", Digest: "d2", State: Done})
	l.Close()
	l = open(t, dir, "run2.jsonl")
	if _, ok := l.Lookup(name, "d1"); !ok {
		t.Errorf("%q not found again", name)
	}
	if _, ok := l.Lookup(other, "d1"); ok || l.Has(other) {
		t.Errorf("%q taken for %q", other, name)
	}
	if _, ok := l.Lookup("plain.png", "d2"); !ok {
		t.Error("plain.png not found again")
	}
	b, _ := os.ReadFile(filepath.Join(dir, "run1.jsonl"))
	if !strings.Contains(string(b), "\"item\":{\"text\":\"z\uFFFDpis.png\",\"bytes\":\"euFwaXMucG5n\"}") || !strings.Contains(string(b), `"item":"plain.png"`) {
		t.Errorf("run file:\n%s", b)
	}
}

// A Text goes through JSON and back unchanged, valid UTF-8 or not; a plain
// JSON string reads as a Text.
func TestTextRoundTrip(t *testing.T) {
	for _, s := range []string{"plain.png", "zápis.png", "z\xe1pis.png", "\xff", ""} {
		b, err := json.Marshal(Text(s))
		if err != nil {
			t.Fatal(err)
		}
		var back Text
		if err := json.Unmarshal(b, &back); err != nil || string(back) != s || !utf8.Valid(b) {
			t.Errorf("%q: %s gives %q (%v)", s, b, back, err)
		}
	}
	var old Text
	if err := json.Unmarshal([]byte(`"a/b.xml"`), &old); err != nil || old != "a/b.xml" {
		t.Errorf("a JSON string: %q %v", old, err)
	}
}
