package main

import (
	"fmt"
	"strconv"

	"archivekit/internal/cliflags"
)

// EnvFetchWorkers is the environment variable of --fetch-workers.
const EnvFetchWorkers = "TRANSLATE_FETCH_WORKERS"

// defaultFetchWorkers is --fetch-workers' default, the Fetcher's own
// bound on requests to one host (fetch.Policy.MaxPerHost).
const defaultFetchWorkers = 4

// setFetchWorkers resolves --fetch-workers: the flag, else the
// configuration's fetch_workers, else TRANSLATE_FETCH_WORKERS, else 4. A
// value that is not a whole number from 1 to 32 is a usage error naming
// where it came from.
func (s *settings) setFetchWorkers(c *cli, p picker, getenv func(string) string) error {
	v, from := precedence(p.set["fetch-workers"], c.FetchWorkers, p.cfg["fetch_workers"], getenv(EnvFetchWorkers), "")
	s.FetchWorkers, s.FetchWorkersFrom = defaultFetchWorkers, "default"
	if v == "" {
		return nil
	}
	switch from {
	case "command line":
		from = "--fetch-workers"
	case "config":
		from = "config fetch_workers"
	case "environment":
		from = EnvFetchWorkers
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 || n > 32 {
		return cliflags.Usage(fmt.Errorf("%s: %q is not a whole number from 1 to 32", from, v))
	}
	s.FetchWorkers, s.FetchWorkersFrom = n, from
	return nil
}
