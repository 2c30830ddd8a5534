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
	v := p.setting("fetch-workers", c.FetchWorkers, "fetch_workers", EnvFetchWorkers, getenv)
	s.FetchWorkers, s.FetchWorkersFrom = defaultFetchWorkers, "default"
	if v.Value == "" {
		return nil
	}
	n, err := strconv.Atoi(v.Value)
	if err != nil || n < 1 || n > 32 {
		return cliflags.Usage(fmt.Errorf("%s: %q is not a whole number from 1 to 32", v.From, v.Value))
	}
	s.FetchWorkers, s.FetchWorkersFrom = n, v.From
	return nil
}
