// Package rocrate exports a finished document record, its persistent step
// outputs and the run metadata of the tools that wrote it as an RO-Crate 1.1
// (https://w3id.org/ro/crate/1.1), the exporter step of spec
// page-classification 2.7 and translation 4.1 and 12.
//
// The metadata file is deterministic: the @graph holds the metadata
// descriptor, then the root Dataset, then every other entity sorted by @id;
// datePublished is the latest stamp in the record (assembled.blocks[*].
// updated_at, provenance.contributors[*].at), never the clock; nothing reads
// the time zone, file times or map order. The same inputs give the same
// bytes.
//
// What goes into the crate:
//   - the record itself, as <doc_id>.document.json;
//   - the files named in derived_from (persistent step outputs) that can be
//     found (relative to the record's folder, then as written); one that
//     cannot is left out with a warning;
//   - the run metadata of each contributing run: the files given to Build
//     and those named by paradata_ref in the record when they can be found.
//
// The original input (source) and the regenerable derivations are described
// as contextual entities and are never in hasPart: the source is archive
// managed, and regenerable outputs are recipes, not files.
//
// Each contributing tool run becomes one CreateAction whose instrument is the
// tool as a SoftwareApplication. With ProcessRun the root also declares the
// Process Run Crate profile (https://w3id.org/ro/wfrun/process/0.5).
package rocrate

import (
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"archivekit/internal/atomicfile"
	"archivekit/internal/docrecord"
)

// Identifiers fixed by the RO-Crate specifications.
const (
	MetadataFile      = "ro-crate-metadata.json"
	Context           = "https://w3id.org/ro/crate/1.1/context"
	CrateSpec         = "https://w3id.org/ro/crate/1.1"
	ProcessRunSpec    = "https://w3id.org/ro/wfrun/process/0.5"
	RootID            = "./"
	ParadataFolder    = "paradata/"
	sourceID          = "#source"
	regenerablePrefix = "#regenerable-"
	// SHA256Term is the IRI of the sha256 property the crates give their
	// files, as the Workflow Run RO-Crate context defines it: RO-Crate
	// 1.1's context does not, and a key no context defines is not allowed
	// (rocrate-validator's REQUIRED check 3.1 refused every crate).
	SHA256Term = "https://w3id.org/ro/terms/workflow-run#sha256"
)

// crateContext is the crates' @context: RO-Crate 1.1's and the sha256 term.
func crateContext() []any {
	return []any{Context, map[string]any{"sha256": SHA256Term}}
}

// fileID is the @id of the data entity of the file at rel (a slash path
// in the crate): a URI path, its characters outside RFC 3986's path
// escaped ("page one #1.json" as "page%20one%20%231.json"), which the
// validators resolve to the file ("%20" in a name was read as a space, a
// "#" as a fragment), and its colons too: "urn:nbn:cz:1.document.json"
// read as a URN, not a file of the crate, which ro-crate-py dropped when
// it wrote the crate again.
func fileID(rel string) string {
	return strings.ReplaceAll((&url.URL{Path: rel}).EscapedPath(), ":", "%3A")
}

// idPath is the slash path in the crate of the file whose @id is id.
func idPath(id string) string {
	if p, err := url.PathUnescape(id); err == nil {
		return p
	}
	return id
}

// Input names what to export.
type Input struct {
	// Document is the path of the finished document record.
	Document string
	// Paradata lists run-metadata files of runs that wrote the record.
	Paradata []string
	// ProcessRun adds the Process Run Crate profile.
	ProcessRun bool
}

// Entity is one node of the @graph.
type Entity map[string]any

// ID returns the entity's @id.
func (e Entity) ID() string { s, _ := e["@id"].(string); return s }

// Crate is a built crate: its graph and the files it contains.
type Crate struct {
	Graph []Entity
	// Files maps each data entity's crate-relative path to the file it is
	// copied from.
	Files map[string]string
	// Warnings lists what was left out and why.
	Warnings []string
	// Removed lists the parts of an earlier crate in the same folder that
	// Write removed because this crate does not have them.
	Removed []string
}

func ref(id string) map[string]any { return map[string]any{"@id": id} }

// run is one contributing tool run gathered from the record and paradata.
type run struct {
	program, runID, version, image, runner string
	start, end                             string
	blocks                                 []string
	paradata                               string // crate path of its run metadata
	// status and errText are its run metadata's status and error
	// ("completed", "failed", "canceled", ...; "" when not read).
	status, errText string
}

// paradataDoc is the part of a run-metadata file the exporter reads.
type paradataDoc struct {
	Program     string `json:"program"`
	ToolVersion string `json:"tool_version"`
	RunID       string `json:"run_id"`
	License     string `json:"license"`
	LicenseURL  string `json:"license_url"`
	StartTime   string `json:"start_time"`
	EndTime     string `json:"end_time"`
	DockerImage string `json:"docker_image"`
	RunnerRef   string `json:"runner_ref"`
	Status      string `json:"status"`
	Error       string `json:"error"`
}

// JSON returns the metadata file: two-space indented, keys sorted, no HTML
// escaping, ending in a newline.
func (c *Crate) JSON() ([]byte, error) {
	doc := map[string]any{"@context": crateContext(), "@graph": c.Graph}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(doc); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// Write copies the data files into dir and writes the metadata file last,
// each atomically. It returns the metadata file's path.
//
// dir must be new, empty, or a crate written before: the files of a crate
// are the folder's content, so a folder holding anything else is refused
// rather than exported into. Over an earlier crate, the parts the earlier
// metadata listed that this crate does not have are removed after the new
// metadata is written, and listed in c.Removed; files the earlier crate
// did not list are left and named in c.Warnings.
func (c *Crate) Write(dir string) (string, error) {
	data, err := c.JSON()
	if err != nil {
		return "", err
	}
	oldParts, err := earlierParts(dir)
	if err != nil {
		return "", err
	}
	ids := make([]string, 0, len(c.Files))
	for id := range c.Files {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	for _, id := range ids {
		src := c.Files[id]
		dst := filepath.Join(dir, filepath.FromSlash(idPath(id)))
		if absPath(src) == absPath(dst) {
			continue
		}
		b, err := os.ReadFile(src)
		if err != nil {
			return "", err
		}
		if err := atomicfile.WriteFile(dst, b, 0o666); err != nil {
			return "", err
		}
	}
	out := filepath.Join(dir, MetadataFile)
	if err := atomicfile.WriteFile(out, data, 0o666); err != nil {
		return "", err
	}
	keptPaths := map[string]bool{}
	for id := range c.Files {
		keptPaths[idPath(id)] = true
	}
	for _, id := range oldParts {
		if keptPaths[idPath(id)] {
			continue // by its path: an earlier crate's id may be written unescaped
		}
		if err := os.Remove(filepath.Join(dir, filepath.FromSlash(idPath(id)))); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return out, fmt.Errorf("removing %s of the earlier crate: %w", id, err)
		}
		c.Removed = append(c.Removed, id)
	}
	return out, nil
}

// earlierParts returns the data files listed by the crate already in dir
// (none for a missing or empty dir); a non-empty dir without a readable
// crate metadata file is an error.
func earlierParts(dir string) ([]string, error) {
	entries, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) || (err == nil && len(entries) == 0) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	data, err := os.ReadFile(filepath.Join(dir, MetadataFile))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("--out-dir %s holds files and no %s: it is not a crate written before; give a new or empty folder", dir, MetadataFile)
	}
	if err != nil {
		return nil, err
	}
	var doc struct {
		Graph []Entity `json:"@graph"`
	}
	if err := json.Unmarshal(data, &doc); err != nil {
		return nil, fmt.Errorf("%s: the earlier crate's metadata is not JSON (%v); give a new or empty folder", filepath.Join(dir, MetadataFile), err)
	}
	var parts []string
	for _, e := range doc.Graph {
		if e.ID() != "./" {
			continue
		}
		for _, id := range refs(e["hasPart"]) {
			// Only plain relative paths inside dir are ever removed.
			if p := filepath.FromSlash(id); filepath.IsLocal(p) && !strings.Contains(id, "://") {
				parts = append(parts, id)
			}
		}
	}
	return parts, nil
}

// dangling lists the references of graph's entities to @ids that ids
// (the graph's) lack, but for the descriptor's specification and the
// vocabulary's action statuses.
func dangling(graph []Entity, ids map[string]Entity) []string {
	var bad []string
	for _, e := range graph {
		for k, v := range e {
			for _, r := range refs(v) {
				if e.ID() == MetadataFile && k == "conformsTo" || k == "actionStatus" && strings.HasPrefix(r, "http://schema.org/") {
					continue // the specification itself; a term of the vocabulary
				}
				if _, ok := ids[r]; !ok {
					bad = append(bad, fmt.Sprintf("%s.%s refers to %s, which is not in the graph", e.ID(), k, r))
				}
			}
		}
	}
	return bad
}

// Check lists the structural problems of a metadata file: not JSON, wrong
// context, descriptor not first, root not second, the rest not sorted by @id
// or with duplicate @ids, references to entities that are not in the graph,
// missing root name, description, licence or datePublished, and the source or
// a regenerable entity in hasPart. With dir not empty every hasPart file must
// exist under dir. An empty result means the crate passed.
func Check(data []byte, dir string) []string {
	var doc struct {
		Context any      `json:"@context"`
		Graph   []Entity `json:"@graph"`
	}
	if err := json.Unmarshal(data, &doc); err != nil {
		return []string{"not JSON: " + err.Error()}
	}
	var bad []string
	want, _ := json.Marshal(crateContext())
	if got, _ := json.Marshal(doc.Context); string(got) != string(want) {
		bad = append(bad, fmt.Sprintf("@context is %s, want %s and the sha256 term", got, Context))
	}
	if len(doc.Graph) < 2 {
		return append(bad, "graph has fewer than two entities")
	}
	ids := map[string]Entity{}
	for i, e := range doc.Graph {
		id := e.ID()
		if id == "" {
			bad = append(bad, fmt.Sprintf("entity %d has no @id", i))
			continue
		}
		if _, dup := ids[id]; dup {
			bad = append(bad, "duplicate @id "+id)
		}
		ids[id] = e
		if i > 2 && doc.Graph[i-1].ID() >= id {
			bad = append(bad, fmt.Sprintf("graph not sorted by @id: %q after %q", id, doc.Graph[i-1].ID()))
		}
	}
	desc, root := doc.Graph[0], doc.Graph[1]
	if desc.ID() != MetadataFile || refID(desc["about"]) != RootID || refID(desc["conformsTo"]) != CrateSpec {
		bad = append(bad, "first entity is not the metadata descriptor about ./ conforming to "+CrateSpec)
	}
	if root.ID() != RootID || root["@type"] != "Dataset" {
		bad = append(bad, "second entity is not the root Dataset ./")
	}
	for _, k := range []string{"name", "description", "license", "datePublished"} {
		if _, ok := root[k]; !ok {
			bad = append(bad, "root Dataset has no "+k)
		}
	}
	if s, _ := root["datePublished"].(string); s != "" {
		if _, err := time.Parse(time.RFC3339, s); err != nil {
			bad = append(bad, "datePublished "+s+" is not an ISO 8601 date-time")
		}
	}
	bad = append(bad, dangling(doc.Graph, ids)...)
	for _, r := range refs(root["hasPart"]) {
		if r == sourceID || strings.HasPrefix(r, regenerablePrefix) {
			bad = append(bad, "hasPart holds "+r+" (source and regenerable outputs are never parts)")
		}
		if dir != "" {
			if _, err := os.Stat(filepath.Join(dir, filepath.FromSlash(idPath(r)))); err != nil {
				bad = append(bad, "hasPart file "+r+" is not in the crate folder")
			}
		}
	}
	return bad
}

// SelfTest builds the crate of in twice under two different local time
// zones, checks that the bytes are identical and equal to written (the
// metadata file as written, when not nil) and runs Check on them.
func SelfTest(in Input, written []byte, dir string) []string {
	var outs [][]byte
	saved := time.Local
	defer func() { time.Local = saved }()
	for _, loc := range []*time.Location{time.FixedZone("UTC+14", 14*3600), time.FixedZone("UTC-10", -10*3600)} {
		time.Local = loc
		c, err := Build(in)
		if err != nil {
			return []string{err.Error()}
		}
		b, err := c.JSON()
		if err != nil {
			return []string{err.Error()}
		}
		outs = append(outs, b)
	}
	var bad []string
	if !bytes.Equal(outs[0], outs[1]) {
		bad = append(bad, "not deterministic: two builds under different time zones differ")
	}
	if written != nil && !bytes.Equal(outs[0], written) {
		bad = append(bad, "not deterministic: the written metadata differs from a rebuild")
	}
	return append(bad, Check(outs[0], dir)...)
}

func refID(v any) string {
	m, _ := v.(map[string]any)
	s, _ := m["@id"].(string)
	return s
}

// refs lists the @id references in a property value.
func refs(v any) []string {
	switch x := v.(type) {
	case map[string]any:
		if s, ok := x["@id"].(string); ok {
			return []string{s}
		}
	case Entity:
		return refs(map[string]any(x))
	case []any:
		var out []string
		for _, e := range x {
			out = append(out, refs(e)...)
		}
		return out
	}
	return nil
}

func sortRefs(list []any) {
	sort.Slice(list, func(i, j int) bool { return refID(list[i]) < refID(list[j]) })
}

func str(o *docrecord.Object, key string) string {
	v, _ := o.Get(key)
	s, _ := v.(string)
	return s
}

func later(a, b string) string {
	if a == "" || b > a { // both are UTC RFC 3339 with the same layout
		return cmp.Or(b, a)
	}
	return a
}

// utc rewrites an RFC 3339 time in UTC; other strings pass unchanged.
func utc(s string) string {
	if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
		return t.UTC().Format(time.RFC3339)
	}
	return s
}

func appendUnique(list []string, s string) []string {
	for _, v := range list {
		if v == s {
			return list
		}
	}
	return append(list, s)
}

// locate finds a file the record names: p when absolute; else relative to
// the record's folder dir when it exists there; else p as written (the tools
// write paths relative to the folder they ran in).
func locate(dir, p string) string {
	if filepath.IsAbs(p) {
		return p
	}
	if q := filepath.Join(dir, p); exists(q) {
		return q
	}
	return p
}

func exists(p string) bool { _, err := os.Stat(p); return err == nil }

func absPath(p string) string {
	a, err := filepath.Abs(p)
	if err != nil {
		return p
	}
	return a
}

// cratePath keeps a clean relative reference as it is and puts anything else
// (absolute, or leaving its folder) under its base name.
func cratePath(ref string) string {
	p := path.Clean(filepath.ToSlash(ref))
	if filepath.IsAbs(ref) || p == ".." || strings.HasPrefix(p, "../") || p == "." {
		return filepath.Base(ref)
	}
	return p
}

// slug keeps letters, digits, '.', '_' and '-'; other runes become '-',
// and leading and trailing '-' are dropped.
func slug(s string) string {
	return strings.Trim(strings.Map(func(r rune) rune {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '.', r == '_', r == '-':
			return r
		}
		return '-'
	}, s), "-")
}

// mediaType guesses the media type of a step output from its name.
func mediaType(p string) string {
	l := strings.ToLower(p)
	switch {
	case strings.HasSuffix(l, ".alto.xml"):
		return "application/alto+xml"
	case strings.HasSuffix(l, ".xml"):
		return "application/xml"
	case strings.HasSuffix(l, ".json"):
		return "application/json"
	case strings.HasSuffix(l, ".csv"):
		return "text/csv"
	case strings.HasSuffix(l, ".txt"):
		return "text/plain"
	case strings.HasSuffix(l, ".pdf"):
		return "application/pdf"
	}
	return "application/octet-stream"
}
