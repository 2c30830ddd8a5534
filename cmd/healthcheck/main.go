// Command healthcheck is the container healthcheck of the archivekit HTTP
// services. It asks http://127.0.0.1:$PORT/health and exits 0 when the
// answer is 200 with {"status": "ok"}, 1 otherwise (no answer within the
// timeout, another status, another body, or a bad PORT).
//
// It always probes loopback and never reads HOST: a service started with
// HOST=127.0.0.1 is therefore healthy inside its container while unreachable
// from outside, as the specification says. PORT unset means 8000. It uses
// the standard library only.
//
// Usage:
//
//	healthcheck [-timeout 3s]
package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"strconv"
	"strings"
	"time"

	"archivekit/internal/cliflags"
)

// defaultTimeout bounds the whole probe; orchestrators allow 3 to 5 s.
const defaultTimeout = 3 * time.Second

func main() {
	os.Exit(run(os.Args[1:], os.LookupEnv, os.Stderr))
}

// run parses args, probes and returns the exit code, writing one line to
// stderr on failure.
func run(args []string, lookup func(string) (string, bool), stderr io.Writer) int {
	fs := cliflags.New("healthcheck", stderr)
	timeout := fs.Duration("timeout", defaultTimeout, "give up after this long")
	// Everything it says goes to stderr, --version too.
	if code, stop := fs.Parse(args, stderr); stop {
		return code
	}
	port, err := portFrom(lookup)
	if err != nil {
		fmt.Fprintln(stderr, "healthcheck:", err)
		return 1
	}
	url := "http://127.0.0.1:" + strconv.Itoa(port) + "/health"
	if err := probe(url, *timeout); err != nil {
		fmt.Fprintf(stderr, "healthcheck: %s: %v\n", url, err)
		return 1
	}
	return 0
}

// portFrom reads PORT: unset is 8000; empty or not a port number is an error.
func portFrom(lookup func(string) (string, bool)) (int, error) {
	v, ok := lookup("PORT")
	if !ok {
		return 8000, nil
	}
	v = strings.TrimSpace(v)
	if v == "" {
		return 0, errors.New("PORT is set but empty")
	}
	p, err := strconv.Atoi(v)
	if err != nil || p < 1 || p > 65535 {
		return 0, fmt.Errorf("PORT=%q is not a port number (1 to 65535)", v)
	}
	return p, nil
}

// probe GETs url and checks for 200 with {"status": "ok"}.
func probe(url string, timeout time.Duration) error {
	c := &http.Client{Timeout: timeout, Transport: &http.Transport{Proxy: nil, DisableKeepAlives: true}}
	resp, err := c.Get(url)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 4096))
	if err != nil {
		return err
	}
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("status %d", resp.StatusCode)
	}
	var h struct {
		Status string `json:"status"`
	}
	if err := json.Unmarshal(body, &h); err != nil || h.Status != "ok" {
		return fmt.Errorf("unexpected body %q", body)
	}
	return nil
}
