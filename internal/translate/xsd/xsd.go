// Package xsd validates finished XML files against an XML Schema with
// libxml2's xmllint (Debian package libxml2-utils), for translate --xsd.
// Validation results are reported, never enforced: the caller logs them as
// warnings (spec translation 4.5 rule 8).
//
// The schema is a local path or an http(s) URL. A URL schema is downloaded
// once into a temporary folder that mirrors its URL path, together with the
// schemas it imports or includes by relative location (recursively), so
// they resolve beside it. xmllint runs with --nonet and an XML catalog that
// maps the published locations of the W3C schema for the xml: namespace
// (http://www.w3.org/2001/03/xml.xsd and its later versions), and the
// Library of Congress's XLink schema that ALTO and METS import, to copies
// shipped in this package, so schemas importing it (the AMCR schema does)
// validate offline. Any other remote import is not fetched: such a schema
// fails to compile, which is reported naming the location.
//
// What is validated: the finished metadata file, as written, against the
// schema and everything it imports or includes; ALTO output is not
// validated (spec translation 12).
package xsd

import (
	"archivekit/internal/regularfile"
	"bytes"
	"context"
	_ "embed"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"archivekit/internal/version"
)

// ErrNoValidator is returned when xmllint is not installed.
var ErrNoValidator = errors.New("xmllint not found (install libxml2-utils): XML Schema validation skipped")

var (
	//go:embed w3c/xml.xsd
	w3cXMLSchema []byte
	//go:embed w3c/catalog.xml
	w3cCatalog []byte
	//go:embed w3c/xlink.xsd
	xlinkSchema []byte
)

// MaxSchemaFiles bounds the schema documents downloaded for one URL schema.
const MaxSchemaFiles = 64

// Validator checks files against one schema.
type Validator struct {
	schema  string // local path
	tmp     string // temporary folder: catalog, xml.xsd, downloaded schemas
	catalog string // XML catalog given to xmllint
	tool    string
	// Fetched lists the schema documents downloaded (URL schemas).
	Fetched []string
}

// CheckPath reports a schema given as a path (not an http(s) URL) that is
// missing or not a regular file, naming it; a URL is only checked when New
// fetches it. It needs no validator installed, so a command can refuse a
// mistyped schema path as a usage error before it starts.
func CheckPath(schema string) error {
	if strings.HasPrefix(schema, "http://") || strings.HasPrefix(schema, "https://") {
		return nil
	}
	f, err := regularfile.Open(schema)
	if err != nil {
		return err
	}
	return f.Close()
}

// New prepares a validator for schema (a path or an http(s) URL).
func New(ctx context.Context, schema string) (*Validator, error) {
	tool, err := exec.LookPath("xmllint")
	if err != nil {
		return nil, ErrNoValidator
	}
	v := &Validator{schema: schema, tool: tool}
	if v.tmp, err = os.MkdirTemp("", "xsd-"); err != nil {
		return nil, err
	}
	if v.catalog, err = writeCatalog(filepath.Join(v.tmp, "w3c")); err != nil {
		v.Close()
		return nil, err
	}
	if strings.HasPrefix(schema, "http://") || strings.HasPrefix(schema, "https://") {
		if err := v.download(ctx, schema); err != nil {
			v.Close()
			return nil, fmt.Errorf("xsd %s: %w", schema, err)
		}
	} else if err := CheckPath(schema); err != nil {
		v.Close()
		return nil, fmt.Errorf("xsd: %w", err)
	}
	return v, nil
}

// writeCatalog writes the shipped W3C xml: schema, the XLink schema of
// ALTO and METS and the XML catalog that maps them into the folder dir, made if needed, and returns the catalog's
// path. A folder or file that cannot be written is the error: without the
// catalog, xmllint would fetch the xml: schema from the network.
func writeCatalog(dir string) (string, error) {
	catalog := filepath.Join(dir, "catalog.xml")
	err := os.MkdirAll(dir, 0o777)
	if err == nil {
		err = os.WriteFile(filepath.Join(dir, "xml.xsd"), w3cXMLSchema, 0o666)
	}
	if err == nil {
		err = os.WriteFile(filepath.Join(dir, "xlink.xsd"), xlinkSchema, 0o666)
	}
	if err == nil {
		err = os.WriteFile(catalog, w3cCatalog, 0o666)
	}
	if err != nil {
		return "", fmt.Errorf("xsd: the XML catalog cannot be written: %w", err)
	}
	return catalog, nil
}

// schemaLocRE finds the schemaLocation of import, include, redefine and
// override elements.
var schemaLocRE = regexp.MustCompile(`<(?:[\w.-]+:)?(?:import|include|redefine|override)\b[^>]*?\bschemaLocation\s*=\s*(?:"([^"]*)"|'([^']*)')`)

// localPath is where the schema at u is stored: the temporary folder,
// then the host and the URL path, so relative locations resolve on disk
// as they do on the server.
func (v *Validator) localPath(u *url.URL) string {
	p := path.Clean("/" + u.Path)
	if strings.HasSuffix(p, "/") || path.Ext(p) == "" {
		p += "/schema.xsd"
	}
	return filepath.Join(v.tmp, "net", u.Scheme, u.Host, filepath.FromSlash(p))
}

// download fetches the schema at raw and, recursively, the schemas it
// names by relative location.
func (v *Validator) download(ctx context.Context, raw string) error {
	ctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	root, err := url.Parse(raw)
	if err != nil {
		return err
	}
	queue, seen := []*url.URL{root}, map[string]bool{root.String(): true}
	for len(queue) > 0 {
		u := queue[0]
		queue = queue[1:]
		if len(v.Fetched) >= MaxSchemaFiles {
			return fmt.Errorf("more than %d schema documents", MaxSchemaFiles)
		}
		data, err := fetch(ctx, u.String())
		if err != nil {
			if u == root {
				return err
			}
			return fmt.Errorf("%s (imported or included by a downloaded schema): %w", u, err)
		}
		dst := v.localPath(u)
		if err := os.MkdirAll(filepath.Dir(dst), 0o777); err != nil {
			return err
		}
		if err := os.WriteFile(dst, data, 0o666); err != nil {
			return err
		}
		v.Fetched = append(v.Fetched, u.String())
		if u == root {
			v.schema = dst
		}
		for _, m := range schemaLocRE.FindAllSubmatch(data, -1) {
			loc := string(m[1]) + string(m[2])
			ref, err := url.Parse(strings.TrimSpace(loc))
			if err != nil || ref.IsAbs() || loc == "" {
				continue // absolute: the catalog, or not fetched
			}
			next := u.ResolveReference(ref)
			if !seen[next.String()] {
				seen[next.String()] = true
				queue = append(queue, next)
			}
		}
	}
	return nil
}

func fetch(ctx context.Context, u string) ([]byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, err
	}
	version.SetUserAgent(req)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("download answered %s", resp.Status)
	}
	return io.ReadAll(io.LimitReader(resp.Body, 64<<20))
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
	cmd.Env = append(os.Environ(), "XML_CATALOG_FILES="+v.catalog)
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

// Problems writes src to dir/name, validates it and counts the messages,
// each without its "file:line: " prefix, so the problems of two files can
// be compared (an output must have none its input did not have).
func (v *Validator) Problems(ctx context.Context, dir, name string, src []byte) (map[string]int, error) {
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, src, 0o666); err != nil {
		return nil, err
	}
	msgs, err := v.Validate(ctx, path)
	if err != nil {
		return nil, err
	}
	out := map[string]int{}
	for _, m := range msgs {
		out[fileLineRE.ReplaceAllString(m, "")]++
	}
	return out, nil
}

// fileLineRE is the "file:line: " prefix of an xmllint message.
var fileLineRE = regexp.MustCompile(`^[^:]*:\d+: `)
