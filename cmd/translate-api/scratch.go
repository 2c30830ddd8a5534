package main

import (
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
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
// dir, written whole or not at all (a temporary file renamed).
func keepText(dir, location string, data []byte) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	f, err := os.CreateTemp(dir, ".part-*")
	if err != nil {
		return err
	}
	_, err = f.Write(data)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(f.Name(), scratchName(dir, location))
	}
	if err != nil {
		os.Remove(f.Name())
	}
	return err
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
