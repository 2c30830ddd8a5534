package main

import (
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"

	"archivekit/internal/atomicfile"
)

// A book job with source_lang auto fetches every text file of its book to
// detect the book's language before any item runs (bookRecord). Its items
// then take those files from the job's scratch folder (jobs.Scratch),
// where bookRecord kept them, rather than fetching each a second time
// from the client's server: each file is requested once, and an item
// translates the very bytes its book's language was detected on. A file
// is removed from the folder as its item takes it, and the folder with
// the job. With PostgreSQL (no scratch folder) or a file that could not
// be kept, the item fetches it as before.

// scratchName is the file name of a text file's copy: the SHA-256 of its
// URL, so that any URL makes a plain name.
func scratchName(dir, location string) string {
	sum := sha256.Sum256([]byte(location))
	return filepath.Join(dir, hex.EncodeToString(sum[:]))
}

// keepText keeps data, the text file at location, in the scratch folder
// dir, written whole or not at all (atomicfile).
func keepText(dir, location string, data []byte) error {
	return atomicfile.WriteFile(scratchName(dir, location), data, 0o644)
}

// takeText returns the text file at location kept in the scratch folder
// dir and removes it there; ok is false when none is kept (dir "", never
// kept, or taken already).
func takeText(dir, location string) (data []byte, ok bool) {
	if dir == "" {
		return nil, false
	}
	p := scratchName(dir, location)
	data, err := os.ReadFile(p)
	if err != nil {
		return nil, false
	}
	os.Remove(p)
	return data, true
}
