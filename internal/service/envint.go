package service

import (
	"fmt"
	"strings"
)

// EnvInt reads a tool's own whole-number setting from the environment
// under the rules of the shared variables: unset gives def; set but empty,
// not a whole number, or outside lo..hi is an error naming the variable
// and the value, so the service fails to start rather than run on a value
// the operator did not ask for.
func EnvInt(lookup func(string) (string, bool), name string, def, lo, hi int) (int, error) {
	v, ok := lookup(name)
	if !ok {
		return def, nil
	}
	v = strings.TrimSpace(v)
	if v == "" {
		return 0, fmt.Errorf("%s is set but empty: give it a value or unset it to use the default (%d)", name, def)
	}
	return whole[int](name, v, int64(lo), int64(hi), fmt.Sprintf("is not a whole number from %d to %d", lo, hi))
}

// EnvBookFetchWorkers is how many files of a book a service fetches at
// once, in order, ahead of their use: pageclass-api a request's pages
// and a book job's, translate-api a book job's text files (while an
// earlier item runs; jobs.BookInput.Fetchers). 1 fetches each file when
// it is used.
const EnvBookFetchWorkers = "BOOK_FETCH_WORKERS"

// DefaultBookFetchWorkers is BOOK_FETCH_WORKERS when unset.
const DefaultBookFetchWorkers = 4

// BookFetchWorkers reads BOOK_FETCH_WORKERS (1 to 32, default 4) under
// EnvInt's rules; both services read it here.
func BookFetchWorkers(lookup func(string) (string, bool)) (int, error) {
	return EnvInt(lookup, EnvBookFetchWorkers, DefaultBookFetchWorkers, 1, 32)
}
