// Package docrecord reads, updates, validates and writes document records
// ("<doc_id>.document.json"), the per-document aggregate that every tool of
// the pipeline accretes its own block onto.
//
// A Record keeps every member of the baseline, known or not, in its original
// order and with numbers in their original text; a tool changes only the
// paths it owns (Set) and passes everything else through untouched. Records
// are validated against a JSON Schema before they are written, and an
// invalid record is never written (WriteFile).
//
// The generic part (Parse, Load, New, Get, Set, NoteBlocks, Schema.Validate,
// WriteFile) serves every tool; AccretePageCategories is the page
// classifier's block.
package docrecord

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"archivekit/internal/atomicfile"
)

// SchemaVersion is the record schema version this package writes; it reads
// every version of the same major and older ones.
const SchemaVersion = "1.0"

// SupportedMajor is the newest schema major version this package reads.
const SupportedMajor = 1

// FileSuffix ends every record file name.
const FileSuffix = ".document.json"

// ErrNewerSchema is returned for a record written by a newer schema major
// version than SupportedMajor (the HTTP services answer it with 422).
var ErrNewerSchema = errors.New("record written by a newer schema version")

// Record is one document record.
type Record struct {
	root *Object
	// Warnings collects problems that did not stop the update (ownership,
	// migration); with strict handling the caller turns them into errors.
	Warnings []string
	// baselineInvalid is set by ApplyPages when the baseline itself failed
	// the schema: the record is then written with the error noted in it.
	baselineInvalid bool
}

// Ref is how a record written in the folder recordDir refers to the file
// target (a run metadata file, a translated document): its path relative
// to that folder, with forward slashes, so that the references hold when
// the outputs are moved or read on another machine together (as a METS
// file's links do); target as given when no relative path leads there.
func Ref(recordDir, target string) string {
	dir, err := filepath.Abs(recordDir)
	if err != nil {
		return target
	}
	abs, err := filepath.Abs(target)
	if err != nil {
		return target
	}
	rel, err := filepath.Rel(dir, abs)
	if err != nil {
		return target
	}
	return filepath.ToSlash(rel)
}

// FileName is "<doc_id>.document.json", a single file name for any doc_id:
// doc_id is data (any string), so the bytes that could leave the folder or
// break the name, a path separator ('/', '\\'), a control character, and '%'
// itself, are written as %XX (upper-case hex). An ordinary doc_id is kept as
// it is; ".." cannot escape either, since the suffix follows it.
func FileName(docID string) string {
	var b strings.Builder
	for i := 0; i < len(docID); i++ {
		c := docID[i]
		if c == '/' || c == '\\' || c == '%' || c < 0x20 || c == 0x7f {
			fmt.Fprintf(&b, "%%%02X", c)
			continue
		}
		b.WriteByte(c)
	}
	return b.String() + FileSuffix
}

// New starts a record without a baseline.
func New(docID string) (*Record, error) {
	if strings.TrimSpace(docID) == "" {
		return nil, errors.New("document record: empty doc_id")
	}
	o := NewObject()
	o.Set("schema_version", SchemaVersion)
	o.Set("doc_id", docID)
	return &Record{root: o}, nil
}

// Parse reads a baseline record: a JSON object with a string doc_id and a
// schema_version "MAJOR.MINOR" no newer than SupportedMajor. An older major
// version is migrated by stamping the current version, with a warning.
func Parse(data []byte) (*Record, error) {
	v, err := decodeValue(data)
	if err != nil {
		return nil, fmt.Errorf("not valid JSON: %w", err)
	}
	o, ok := v.(*Object)
	if !ok {
		return nil, fmt.Errorf("a document record is a JSON object, got %s", kind(v))
	}
	r := &Record{root: o}
	if id := r.DocID(); id == "" {
		if v, ok := o.Get("doc_id"); ok {
			// A number or null said "no doc_id" of a record that has one.
			return nil, fmt.Errorf("doc_id must be a non-empty string, got %s", kind(v))
		}
		return nil, errors.New("record has no doc_id")
	}
	major, _, err := r.SchemaVersion()
	if err != nil {
		return nil, err
	}
	switch {
	case major > SupportedMajor:
		return nil, fmt.Errorf("schema_version %s: %w (this build reads up to %d.x)", r.rawVersion(), ErrNewerSchema, SupportedMajor)
	case major < SupportedMajor:
		r.Warnings = append(r.Warnings, fmt.Sprintf("schema_version %s migrated to %s", r.rawVersion(), SchemaVersion))
		o.Set("schema_version", SchemaVersion)
	}
	return r, nil
}

// Load reads and parses a baseline record file; errors name the file.
func Load(path string) (*Record, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	r, err := Parse(b)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return r, nil
}

// DocID returns the record's doc_id ("" when missing or not a string).
func (r *Record) DocID() string {
	v, _ := r.root.Get("doc_id")
	s, _ := v.(string)
	return s
}

func (r *Record) rawVersion() string {
	v, _ := r.root.Get("schema_version")
	s, _ := v.(string)
	return s
}

// SchemaVersion parses schema_version "MAJOR.MINOR".
func (r *Record) SchemaVersion() (major, minor int, err error) {
	s := r.rawVersion()
	a, b, ok := strings.Cut(s, ".")
	if ok {
		major, err = strconv.Atoi(a)
		if err == nil {
			minor, err = strconv.Atoi(b)
		}
	}
	if !ok || err != nil || major < 0 || minor < 0 {
		return 0, 0, fmt.Errorf("schema_version %q: want MAJOR.MINOR", s)
	}
	return major, minor, nil
}

// Get returns the value at a path of object member names, e.g.
// Get("assembled", "blocks"). Objects are *Object, arrays []any.
func (r *Record) Get(path ...string) (any, bool) {
	var cur any = r.root
	for _, k := range path {
		o, ok := cur.(*Object)
		if !ok {
			return nil, false
		}
		if cur, ok = o.Get(k); !ok {
			return nil, false
		}
	}
	return cur, true
}

// Set stores value (any JSON-encodable Go value) at a path of object member
// names, creating missing objects on the way and keeping every sibling. It
// refuses to replace doc_id, and fails when a path element is not an object.
func (r *Record) Set(value any, path ...string) error {
	if len(path) == 0 {
		return errors.New("Set: empty path")
	}
	if len(path) == 1 && path[0] == "doc_id" && r.DocID() != "" {
		if s, _ := value.(string); s != r.DocID() {
			return fmt.Errorf("doc_id is inherited from the baseline (%q) and cannot change", r.DocID())
		}
	}
	v, err := toOrdered(value)
	if err != nil {
		return fmt.Errorf("Set %s: %w", strings.Join(path, "."), err)
	}
	cur := r.root
	for i, k := range path[:len(path)-1] {
		next, ok := cur.Get(k)
		if !ok {
			n := NewObject()
			cur.Set(k, n)
			cur = n
			continue
		}
		o, ok := next.(*Object)
		if !ok {
			return fmt.Errorf("Set %s: %s is %s, not an object", strings.Join(path, "."), strings.Join(path[:i+1], "."), kind(next))
		}
		cur = o
	}
	cur.Set(path[len(path)-1], v)
	return nil
}

// MarshalJSON writes the record compactly, members in order.
func (r *Record) MarshalJSON() ([]byte, error) { return r.root.MarshalJSON() }

// Bytes is the record as indented JSON with a final newline.
func (r *Record) Bytes() ([]byte, error) {
	b, err := r.root.MarshalJSON()
	if err != nil {
		return nil, err
	}
	return indent(b)
}

// WriteFile validates the record against s and, only when it is valid,
// writes it atomically to path. A nil schema is an error: records are never
// written unvalidated. The one exception is a record made by ApplyPages
// from a baseline that already failed the schema: it is written with the
// baseline's error noted in it (SchemaErrorKey).
func (r *Record) WriteFile(path string, s *Schema) error {
	b, err := r.ValidBytes(s)
	if err != nil {
		return fmt.Errorf("%s: not written: %w", path, err)
	}
	return atomicfile.WriteFile(path, b, 0o666)
}

// ValidBytes is Bytes of a record that passes s, with WriteFile's rules (a
// nil schema is an error; a record made from an invalid baseline passes
// with the baseline's error noted in it), for a caller that answers with
// the record instead of writing it.
func (r *Record) ValidBytes(s *Schema) ([]byte, error) {
	if s == nil {
		return nil, errors.New("no schema to validate the record against")
	}
	if err := s.Validate(r); err != nil && !(r.baselineInvalid && r.SchemaError() != "") {
		return nil, err
	}
	return r.Bytes()
}

// WriteToDir writes the validated record to dir/<doc_id>.document.json and
// returns the path.
func (r *Record) WriteToDir(dir string, s *Schema) (string, error) {
	p := filepath.Join(dir, FileName(r.DocID()))
	return p, r.WriteFile(p, s)
}
