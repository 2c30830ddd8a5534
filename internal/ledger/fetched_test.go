package ledger

import (
	"os"
	"path/filepath"
	"testing"
)

// A fetch recorded by one run is found by the next run of the ledger, and
// by ReadFetches in any configuration's folder; its kept file is read only
// with the bytes recorded.
func TestRecordFetch(t *testing.T) {
	out := t.TempDir()
	dir := filepath.Join(out, Folder, "tool_aaaa")
	l, err := Open(dir, "tool", "aaaa", nil, "run1.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	data := []byte("<alto/>")
	f := FetchOf(data)
	if f.SHA256 != DigestBytes(data) || f.Bytes != len(data) {
		t.Fatalf("FetchOf = %+v", f)
	}
	if err := l.RecordFetch("https://example.org/a.xml", "id-a", f); err != nil {
		t.Fatal(err)
	}
	l.Close()

	l2, err := Open(dir, "tool", "aaaa", nil, "run2.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	defer l2.Close()
	for _, c := range []struct {
		url, identity string
		want          bool
	}{
		{"https://example.org/a.xml", "id-a", true},
		{"https://example.org/a.xml", "other", false},
		{"https://example.org/b.xml", "id-a", false},
	} {
		got, ok := l2.Fetched(c.url, c.identity)
		if ok != c.want || ok && got != f {
			t.Errorf("Fetched(%s, %s) = %+v, %v; want %v", c.url, c.identity, got, ok, c.want)
		}
		got, ok = ReadFetches(filepath.Join(out, Folder), "tool").Fetched(c.url, c.identity)
		if ok != c.want || ok && got != f {
			t.Errorf("ReadFetches: %s, %s = %+v, %v; want %v", c.url, c.identity, got, ok, c.want)
		}
	}
	if _, ok := ReadFetches(filepath.Join(out, Folder), "other").Fetched("https://example.org/a.xml", "id-a"); ok {
		t.Error("another tool's ledgers hold the fetch")
	}

	kept := filepath.Join(t.TempDir(), "a.xml")
	if _, ok := f.Read(kept); ok {
		t.Error("Read of a missing file")
	}
	os.WriteFile(kept, []byte("<alto>edited</alto>"), 0o644)
	if _, ok := f.Read(kept); ok {
		t.Error("Read of a file with other bytes")
	}
	os.WriteFile(kept, data, 0o644)
	if b, ok := f.Read(kept); !ok || string(b) != string(data) {
		t.Errorf("Read = %q, %v", b, ok)
	}
}
