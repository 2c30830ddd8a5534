package ledger

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"

	"archivekit/internal/regularfile"
)

// Fetches. A tool that fetches remote files for its items (the page images
// and text files of a book read from a URL) records each fetch in the
// ledger as soon as the file is kept on the disk, as the item "fetched
// <URL>" (FetchItem) with the digest of what identifies the fetch (the URL
// and what it is fetched for, the caller's choice), and the SHA-256 and
// size of the bytes as its data. A resumed run that finds the record and
// the kept file with those bytes reads the file instead of fetching the
// URL again; one that finds the item done (by the SHA-256 recorded) need
// not read it at all.

// FetchItem is the ledger item of a fetch of url.
func FetchItem(url string) string { return "fetched " + url }

// Fetch is what the ledger records of a fetch.
type Fetch struct {
	// SHA256 is the digest (hex) of the bytes fetched.
	SHA256 string `json:"sha256"`
	Bytes  int    `json:"bytes"`
}

// FetchOf is the Fetch of the bytes data.
func FetchOf(data []byte) Fetch { return Fetch{SHA256: DigestBytes(data), Bytes: len(data)} }

// RecordFetch records that url was fetched as f (FetchOf the bytes):
// identity is the entry's digest (see FetchItem).
func (l *Ledger) RecordFetch(url, identity string, f Fetch) error {
	d, err := json.Marshal(f)
	if err != nil {
		return err
	}
	if err := l.Record(Entry{Item: FetchItem(url), Digest: identity, State: Done, Data: d}); err != nil {
		return fmt.Errorf("fetch of %s: %w", url, err)
	}
	return nil
}

// Fetched returns the fetch of url an earlier run (or this one) recorded
// under identity; false when there is none, or its record is not one.
func (l *Ledger) Fetched(url, identity string) (Fetch, bool) {
	e, ok := l.Lookup(FetchItem(url), identity)
	if !ok || e.State != Done {
		return Fetch{}, false
	}
	var f Fetch
	if json.Unmarshal(e.Data, &f) != nil || !IsDigest(f.SHA256) {
		return Fetch{}, false
	}
	return f, true
}

// Read returns the content of the regular file at path when it is the
// bytes fetched (its digest is f.SHA256); false otherwise (no such file,
// or another content: fetch again).
func (f Fetch) Read(path string) ([]byte, bool) {
	data, err := regularfile.Read(path)
	if err != nil || DigestBytes(data) != f.SHA256 {
		return nil, false
	}
	return data, true
}

// Fetches are the fetches recorded in a tool's ledgers (ReadFetches).
type Fetches map[string]Fetch

// ReadFetches returns the fetches recorded in every ledger of tool in
// the folder dir (a tool's output folder's Folder), whatever their
// configuration: a file fetched is the same file under another
// configuration. It reads them before a run's own ledger is opened (its
// key may not be known yet); files that cannot be read, and lines that are
// not entries, are passed over (a fetch not found is fetched again).
func ReadFetches(dir, tool string) Fetches {
	out := Fetches{}
	EachDone(dir, tool, func(_ string, e Entry) {
		if !strings.HasPrefix(e.Item, FetchItem("")) {
			return
		}
		var f Fetch
		if json.Unmarshal(e.Data, &f) == nil && IsDigest(f.SHA256) {
			out[id(e.Item, e.Digest)] = f
		}
	})
	return out
}

// EachDone calls fn with each entry recorded done in every ledger of tool
// in the folder dir (a tool's output folder's Folder), whatever its
// configuration, and the run's file it is in (<dir>/<tool>_<key>/<run>.jsonl,
// its folder naming the configuration): the runs in the order they ran,
// each one's entries in order. Files that cannot be read, and lines that
// are not entries, are passed over.
func EachDone(dir, tool string, fn func(file string, e Entry)) {
	paths, _ := filepath.Glob(filepath.Join(dir, tool+"_*", "*.jsonl"))
	sortRuns(paths)
	for _, p := range paths {
		entries, _ := Read(p)
		for _, e := range entries {
			if e.State == Done {
				fn(p, e)
			}
		}
	}
}

// Fetched returns the fetch of url recorded under identity.
func (fs Fetches) Fetched(url, identity string) (Fetch, bool) {
	f, ok := fs[id(FetchItem(url), identity)]
	return f, ok
}

// IsDigest says whether s is a SHA-256 in hex, as Digest writes it (safe
// as a file name).
func IsDigest(s string) bool {
	return len(s) == 64 && strings.Trim(s, "0123456789abcdef") == ""
}
