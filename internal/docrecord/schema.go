package docrecord

import (
	"bytes"
	_ "embed"
	"fmt"
	"os"
	"path/filepath"
	"sync"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

//go:embed document.schema.json
var projectSchema []byte

// Schema is a compiled JSON Schema for records, with the schema a record
// must pass as well (also; nil: none).
type Schema struct {
	name string
	s    *jsonschema.Schema
	also *Schema
}

// EnvSiteSchema names a JSON Schema file that every record the tools write
// must pass besides the project's own schema: the site's pipeline schema,
// which types the blocks of the other tools (the project schema keeps them
// open), so a record the pipeline would refuse is never written.
const EnvSiteSchema = "ARCHIVEKIT_DOCUMENT_SCHEMA"

// ProjectSchema is this project's own record schema (document.schema.json
// in this package, embedded in the binary): the fields the project's tools
// write, typed, and every other block open; with EnvSiteSchema set, a record
// must pass that file's schema too. It is compiled once (about a
// millisecond and 4000 allocations) and shared: the services ask for it on
// every request, and a compiled schema is safe for concurrent use.
func ProjectSchema() (*Schema, error) { return projectSchemaOnce() }

var projectSchemaOnce = sync.OnceValues(func() (*Schema, error) { return projectWith(os.Getenv(EnvSiteSchema)) })

// projectWith compiles the project schema, and the site's schema file
// (empty: none) as the one a record must pass too.
func projectWith(site string) (*Schema, error) {
	s, err := compile("archivekit:document.schema.json", projectSchema)
	if err != nil {
		return nil, err
	}
	if site != "" {
		if s.also, err = LoadSchema(site); err != nil {
			return nil, fmt.Errorf("%s: %w", EnvSiteSchema, err)
		}
	}
	return s, nil
}

// LoadSchema compiles the JSON Schema file at path (draft 2020-12 or any
// draft the schema declares). Formats such as date-time are asserted.
func LoadSchema(path string) (*Schema, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, err
	}
	return compile("file://"+filepath.ToSlash(abs), b)
}

func compile(url string, data []byte) (*Schema, error) {
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(data))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", url, err)
	}
	c := jsonschema.NewCompiler()
	c.AssertFormat()
	if err := c.AddResource(url, doc); err != nil {
		return nil, fmt.Errorf("%s: %w", url, err)
	}
	s, err := c.Compile(url)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", url, err)
	}
	return &Schema{name: url, s: s}, nil
}

// ValidationError lists what made a record invalid.
type ValidationError struct {
	Schema string
	Err    error
}

func (e *ValidationError) Error() string {
	return fmt.Sprintf("record fails schema %s: %v", e.Schema, e.Err)
}

func (e *ValidationError) Unwrap() error { return e.Err }

// CheckBaseline checks a baseline record against ProjectSchema before it is
// updated by a tool that cannot mend it (the translator's block leaves the
// rest as it is): a record that fails the schema is never written, so such a
// baseline is refused before any work (spec translation 2.4 rule 4).
func CheckBaseline(r *Record) error {
	s, err := ProjectSchema()
	if err != nil {
		return err
	}
	return s.Validate(r)
}

// Validate checks the record; the error is a *ValidationError.
func (s *Schema) Validate(r *Record) error {
	b, err := r.MarshalJSON()
	if err != nil {
		return err
	}
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(b))
	if err != nil {
		return err
	}
	for ; s != nil; s = s.also {
		if err := s.s.Validate(inst); err != nil {
			return &ValidationError{Schema: s.name, Err: err}
		}
	}
	return nil
}
