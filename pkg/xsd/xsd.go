// Package xsd validates finished XML files against an XML Schema with
// libxml2's xmllint (Debian package libxml2-utils), for translate --xsd.
// Validation results are reported, never enforced: the caller logs them as
// warnings (spec translation 4.5 rule 8).
//
// The schema is a local path or an http(s) URL, downloaded once to a
// temporary file; xmllint runs with --nonet, so nothing else is fetched
// (a schema importing other remote schemas must be given as a local copy).
package xsd

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"archivekit/pkg/version"
)

// ErrNoValidator is returned when xmllint is not installed.
var ErrNoValidator = errors.New("xmllint not found (install libxml2-utils): XML Schema validation skipped")

// Validator checks files against one schema.
type Validator struct {
	schema string // local path
	tmp    string // temporary folder of a downloaded schema
	tool   string
}

// New prepares a validator for schema (a path or an http(s) URL).
func New(ctx context.Context, schema string) (*Validator, error) {
	tool, err := exec.LookPath("xmllint")
	if err != nil {
		return nil, ErrNoValidator
	}
	v := &Validator{schema: schema, tool: tool}
	if strings.HasPrefix(schema, "http://") || strings.HasPrefix(schema, "https://") {
		if err := v.download(ctx, schema); err != nil {
			return nil, fmt.Errorf("xsd %s: %w", schema, err)
		}
	} else if _, err := os.Stat(schema); err != nil {
		return nil, fmt.Errorf("xsd: %w", err)
	}
	return v, nil
}

func (v *Validator) download(ctx context.Context, url string) error {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	version.SetUserAgent(req)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("download answered %s", resp.Status)
	}
	if v.tmp, err = os.MkdirTemp("", "xsd-"); err != nil {
		return err
	}
	v.schema = filepath.Join(v.tmp, "schema.xsd")
	f, err := os.Create(v.schema)
	if err != nil {
		return err
	}
	if _, err := io.Copy(f, io.LimitReader(resp.Body, 64<<20)); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// Close removes a downloaded schema.
func (v *Validator) Close() error {
	if v.tmp != "" {
		return os.RemoveAll(v.tmp)
	}
	return nil
}

// Validate checks file and returns its problems (nil when it is valid). An
// error means the validation itself could not run (unreadable schema, ...).
func (v *Validator) Validate(ctx context.Context, file string) ([]string, error) {
	cmd := exec.CommandContext(ctx, v.tool, "--noout", "--nonet", "--schema", v.schema, file)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	err := cmd.Run()
	if err == nil {
		return nil, nil
	}
	var exit *exec.ExitError
	if !errors.As(err, &exit) {
		return nil, err
	}
	lines := strings.Split(strings.TrimSpace(stderr.String()), "\n")
	switch exit.ExitCode() {
	case 3, 4: // the document does not validate / is not well formed
		var out []string
		for _, l := range lines {
			if l != "" && !strings.HasSuffix(l, " fails to validate") {
				out = append(out, l)
			}
		}
		if len(out) == 0 {
			out = []string{file + " fails to validate"}
		}
		return out, nil
	case 5:
		return nil, fmt.Errorf("xsd %s: the schema could not be parsed: %s", v.schema, strings.Join(lines, "; "))
	}
	return nil, fmt.Errorf("xmllint exited %d: %s", exit.ExitCode(), strings.Join(lines, "; "))
}
