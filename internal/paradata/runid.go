package paradata

import (
	"crypto/rand"
	"encoding/hex"
)

// RunIDFor is the run id of a run whose outputs carry stamp: the stamp,
// so a reader matches a record's run to its files, and eight random hex
// digits, so two runs started in the same second into different folders
// (the shards of one batch on several machines, a run per book) never
// share an id. Records and RO-Crates tell runs apart by program and run
// id; with the stamp alone such runs were one run, and a document record
// kept the contributor of whichever wrote last.
func RunIDFor(stamp string) string {
	var b [4]byte
	_, _ = rand.Read(b[:])
	return stamp + "." + hex.EncodeToString(b[:])
}
