package rocrate

import (
	"cmp"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"

	"archivekit/internal/docrecord"
	"archivekit/internal/licence"
)

// Build reads the record and run metadata and builds the crate. It fails on
// an unreadable or invalid record, an unreadable run-metadata file, a record
// without any stamp (datePublished would need the clock) and a record whose
// licence cannot be found.
func Build(in Input) (*Crate, error) {
	b, err := newBuilder(in)
	if err != nil {
		return nil, err
	}
	steps := []func() error{
		b.addRecord, b.readBlocks, b.readContributors, b.checkStamps,
		b.readParadata, b.chooseLicence, b.addDerived,
	}
	for _, step := range steps {
		if err := step(); err != nil {
			return nil, err
		}
	}
	b.root = Entity{"@id": RootID, "@type": "Dataset", "identifier": b.docID,
		"datePublished": b.latest.UTC().Format(time.RFC3339), "license": ref(b.licID)}
	b.describeSource()
	b.describeRegenerable()
	programs, err := b.addRuns()
	if err != nil {
		return nil, err
	}
	b.describeRoot(programs)
	return b.graph(), nil
}

// builder holds a crate while Build makes it, section by section.
type builder struct {
	in     Input
	rec    *docrecord.Record
	docID  string
	recDir string

	c        *Crate
	entities map[string]Entity
	byPath   map[string]string // absolute source path -> crate id
	recordID string            // the record's @id (its crate path, escaped)

	runs         map[string]*run // by runKey
	runOrder     []string        // runKeys, as first met
	stamps       []time.Time
	latest       time.Time
	paradataRefs []paradataRef

	licences   []licence.Licence
	licenceURL map[string]string // by licence ID
	licID      string            // @id of the crate's licence

	root Entity
}

// paradataRef is a run-metadata file named in the record for a run.
type paradataRef struct{ run, path string }

// newBuilder loads and validates the record of in.
func newBuilder(in Input) (*builder, error) {
	rec, err := docrecord.Load(in.Document)
	if err != nil {
		return nil, err
	}
	schema, err := docrecord.ProjectSchema()
	if err != nil {
		return nil, err
	}
	if err := schema.Validate(rec); err != nil {
		return nil, fmt.Errorf("%s: %w", in.Document, err)
	}
	docID := rec.DocID()
	if docID == "" {
		return nil, fmt.Errorf("%s: record has no doc_id", in.Document)
	}
	return &builder{
		in: in, rec: rec, docID: docID, recDir: filepath.Dir(in.Document),
		c: &Crate{Files: map[string]string{}}, entities: map[string]Entity{}, byPath: map[string]string{},
		runs: map[string]*run{}, licenceURL: map[string]string{},
	}, nil
}

// addRecord puts the record itself into the crate.
func (b *builder) addRecord() error {
	// Its @id as addFile writes it (escaped: a doc_id with a space or a
	// slash made the runs' result name an entity the graph lacked).
	rel := docrecord.FileName(b.docID)
	b.recordID = fileID(rel)
	return b.addFile(rel, b.in.Document, Entity{"@type": "File", "name": "document record " + b.docID,
		"encodingFormat": "application/json"})
}

// object is the record's object at path; nil when there is none.
func (b *builder) object(path ...string) *docrecord.Object {
	v, _ := b.rec.Get(path...)
	o, _ := v.(*docrecord.Object)
	return o
}

func runKey(program, runID string) string { return program + "\x00" + runID }

// run returns the contributing run of program and runID, new or met before.
func (b *builder) run(program, runID string) *run {
	k := runKey(program, runID)
	if r, ok := b.runs[k]; ok {
		return r
	}
	r := &run{program: program, runID: runID}
	b.runs[k] = r
	b.runOrder = append(b.runOrder, k)
	return r
}

// stamp records an RFC 3339 time of the record found at where and returns
// it in UTC; "" stays "".
func (b *builder) stamp(where, s string) (string, error) {
	if s == "" {
		return "", nil
	}
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return "", fmt.Errorf("%s: %s: %q is not an RFC 3339 time", b.in.Document, where, s)
	}
	b.stamps = append(b.stamps, t)
	return t.UTC().Format(time.RFC3339), nil
}

// readBlocks gathers the runs that wrote the record's blocks
// (assembled.blocks).
func (b *builder) readBlocks() error {
	obj := b.object("assembled", "blocks")
	if obj == nil {
		return nil
	}
	for _, name := range obj.Keys() {
		v, _ := obj.Get(name)
		o, _ := v.(*docrecord.Object)
		if o == nil {
			continue
		}
		r := b.run(str(o, "program"), str(o, "run_id"))
		r.blocks = append(r.blocks, name)
		at, err := b.stamp("assembled.blocks."+name+".updated_at", str(o, "updated_at"))
		if err != nil {
			return err
		}
		r.end = later(r.end, at)
		b.noteParadata(r, o)
	}
	return nil
}

// readContributors gathers the runs of provenance.contributors.
func (b *builder) readContributors() error {
	cs, ok := b.rec.Get("provenance", "contributors")
	if !ok {
		return nil
	}
	list, _ := cs.([]any)
	for i, v := range list {
		o, _ := v.(*docrecord.Object)
		if o == nil {
			continue
		}
		r := b.run(str(o, "program"), str(o, "run_id"))
		at, err := b.stamp(fmt.Sprintf("provenance.contributors[%d].at", i), str(o, "at"))
		if err != nil {
			return err
		}
		r.end = later(r.end, at)
		r.version = cmp.Or(r.version, str(o, "version"))
		r.image = cmp.Or(r.image, str(o, "container_image"), str(o, "docker_image"))
		r.runner = cmp.Or(r.runner, str(o, "runner_ref"))
		b.noteParadata(r, o)
	}
	return nil
}

// noteParadata remembers the run metadata an entry o of r names.
func (b *builder) noteParadata(r *run, o *docrecord.Object) {
	if p := str(o, "paradata_ref"); p != "" {
		b.paradataRefs = append(b.paradataRefs, paradataRef{runKey(r.program, r.runID), p})
	}
}

// checkStamps takes the latest stamp as the publication date; a record
// without stamps is an error, since the clock is never read.
func (b *builder) checkStamps() error {
	if len(b.stamps) == 0 {
		return fmt.Errorf("%s: the record has no stamps (assembled.blocks[*].updated_at or provenance.contributors[*].at); datePublished is never taken from the clock", b.in.Document)
	}
	b.latest = b.stamps[0]
	for _, t := range b.stamps[1:] {
		if t.After(b.latest) {
			b.latest = t
		}
	}
	return nil
}

// readParadata adds the run metadata: given files must load; files named
// by the record are taken when found.
func (b *builder) readParadata() error {
	for _, p := range b.in.Paradata {
		if err := b.addParadata(p, true); err != nil {
			return err
		}
	}
	for _, pr := range b.paradataRefs {
		if b.runs[pr.run].paradata != "" {
			continue // given on the command line
		}
		if err := b.addParadata(locate(b.recDir, pr.path), false); err != nil {
			return err
		}
	}
	return nil
}

// addParadata adds the run-metadata file p and what it says of its run; a
// missing file not required is a warning.
func (b *builder) addParadata(p string, required bool) error {
	data, err := os.ReadFile(p)
	if err != nil {
		if required {
			return fmt.Errorf("run metadata: %w", err)
		}
		b.c.Warnings = append(b.c.Warnings, fmt.Sprintf("run metadata %s named in the record not found; its run is described from the record only", p))
		return nil
	}
	var pd paradataDoc
	if err := json.Unmarshal(data, &pd); err != nil {
		return fmt.Errorf("run metadata %s: %v", p, err)
	}
	if pd.Program == "" || pd.RunID == "" {
		return fmt.Errorf("run metadata %s: no program or run_id", p)
	}
	id := ParadataFolder + filepath.Base(p)
	if err := b.addFile(id, p, Entity{"@type": "File", "name": "run metadata of " + pd.Program + " run " + pd.RunID,
		"encodingFormat": "application/json"}); err != nil {
		return err
	}
	r := b.run(pd.Program, pd.RunID)
	r.paradata = b.byPath[absPath(p)]
	r.version = cmp.Or(pd.ToolVersion, r.version)
	r.image = cmp.Or(r.image, pd.DockerImage)
	r.runner = cmp.Or(r.runner, pd.RunnerRef)
	r.start = cmp.Or(r.start, utc(pd.StartTime))
	r.status, r.errText = pd.Status, pd.Error
	// The run's end as its run metadata says, when later than the
	// record's stamps (a classification run stamps its record when it
	// starts: its endTime was its startTime).
	r.end = later(r.end, utc(pd.EndTime))
	if pd.License != "" {
		l, _ := licence.Lookup(pd.License)
		b.licences = append(b.licences, l)
		b.licenceURL[l.ID] = cmp.Or(pd.LicenseURL, l.URL)
	}
	return nil
}

// chooseLicence takes the licence of the crate from the record's provenance
// and translation blocks and the run metadata: the most restrictive wins
// (internal/licence ranking).
func (b *builder) chooseLicence() error {
	for _, path := range [][]string{{"provenance"}, {"translations"}} {
		l, ok := b.rec.Get(append(path, "license")...)
		s, _ := l.(string)
		if !ok || s == "" {
			continue
		}
		lic, _ := licence.Lookup(s)
		b.licences = append(b.licences, lic)
		u, _ := b.rec.Get(append(path, "license_url")...)
		us, _ := u.(string)
		b.licenceURL[lic.ID] = cmp.Or(b.licenceURL[lic.ID], us, lic.URL)
	}
	if len(b.licences) == 0 {
		return fmt.Errorf("%s: no licence found in the record (provenance.license, translations.license) nor in run metadata; pass the runs' metadata with --paradata", b.in.Document)
	}
	top := b.licences[0]
	for _, l := range b.licences[1:] {
		if l.Rank > top.Rank {
			top = l
		}
	}
	b.licID = cmp.Or(b.licenceURL[top.ID], "#license")
	b.put(Entity{"@id": b.licID, "@type": "CreativeWork", "name": top.ID, "identifier": top.ID})
	return nil
}

// addDerived adds the persistent step outputs (derived_from) that can be
// found; one that cannot is left out with a warning.
func (b *builder) addDerived() error {
	obj := b.object("derived_from")
	if obj == nil {
		return nil
	}
	for _, key := range obj.Keys() {
		v, _ := obj.Get(key)
		s, _ := v.(string)
		if s == "" {
			continue
		}
		p := locate(b.recDir, s)
		if _, err := os.Stat(p); err != nil {
			b.c.Warnings = append(b.c.Warnings, fmt.Sprintf("derived_from.%s: %s not found; left out of the crate", key, s))
			continue
		}
		if id, done := b.byPath[absPath(p)]; done {
			if e := b.entities[id]; e != nil {
				e["description"] = "derived_from." + key
			}
			continue
		}
		if filepath.IsAbs(s) {
			// A record written elsewhere may name any file this user can
			// read: said, so that what a crate holds is seen before it is
			// published.
			b.c.Warnings = append(b.c.Warnings, fmt.Sprintf("derived_from.%s: %s is an absolute path, copied into the crate as %s; check it is the record's output", key, s, cratePath(s)))
		}
		if err := b.addFile(cratePath(s), p, Entity{"@type": "File", "name": key, "description": "derived_from." + key,
			"encodingFormat": mediaType(p)}); err != nil {
			return err
		}
	}
	return nil
}

// derivedID is the crate @id of the file derived_from.key names, "" when
// the crate holds none (addDerived left it out).
func (b *builder) derivedID(key string) string {
	o := b.object("derived_from")
	if o == nil {
		return ""
	}
	v, _ := o.Get(key)
	s, _ := v.(string)
	if s == "" {
		return ""
	}
	return b.byPath[absPath(locate(b.recDir, s))]
}

// describeSource describes the original input, never part of the crate,
// and makes the root based on it.
func (b *builder) describeSource() {
	o := b.object("source")
	if o == nil {
		return
	}
	e := Entity{"@id": sourceID, "@type": "CreativeWork", "name": cmp.Or(str(o, "filename"), "original input of "+b.docID),
		"description": "the original input; archive-managed, not part of this crate"}
	if s := str(o, "media_type"); s != "" {
		e["encodingFormat"] = s
	}
	if s := str(o, "sha256"); s != "" {
		e["identifier"] = "sha256:" + s
	}
	b.put(e)
	b.root["isBasedOn"] = ref(sourceID)
}

// describeRegenerable describes the regenerable derivations: recipes,
// mentioned by the root but not parts.
func (b *builder) describeRegenerable() {
	o := b.object("regenerable")
	if o == nil {
		return
	}
	var mentions []any
	for _, key := range o.Keys() {
		v, _ := o.Get(key)
		ro, _ := v.(*docrecord.Object)
		desc := "regenerable on demand, not stored"
		if ro != nil {
			if f := str(ro, "from"); f != "" {
				desc += "; regenerated from " + f
			}
			if cv := str(ro, "converter"); cv != "" {
				desc += " by " + cv
			}
		}
		id := regenerablePrefix + key
		b.put(Entity{"@id": id, "@type": "CreativeWork", "name": key, "description": desc})
		mentions = append(mentions, ref(id))
	}
	if len(mentions) > 0 {
		sortRefs(mentions)
		b.root["mentions"] = mentions
	}
}

// addRuns adds one CreateAction per contributing run, its tool a
// SoftwareApplication, and returns the programs, sorted.
func (b *builder) addRuns() ([]string, error) {
	sort.Strings(b.runOrder)
	var programs []string
	for _, k := range b.runOrder {
		r := b.runs[k]
		if r.program == "" {
			return nil, fmt.Errorf("%s: a contributing run (run_id %q) names no program", b.in.Document, r.runID)
		}
		b.addRun(r)
		programs = appendUnique(programs, r.program)
	}
	sort.Strings(programs)
	return programs, nil
}

// addRun adds the CreateAction of r and its SoftwareApplication.
func (b *builder) addRun(r *run) {
	var objects []any
	if _, ok := b.root["isBasedOn"]; ok {
		objects = []any{ref(sourceID)}
	}
	results := []any{ref(b.recordID)}
	if slices.Contains(r.blocks, "translations") {
		// The translator made the translated document beside the record
		// (derived_from.translated_xml): it was in hasPart, no action's
		// result.
		if id := b.derivedID("translated_xml"); id != "" {
			results = append(results, ref(id))
		}
	}
	act, sw := r.action(results, objects)
	b.put(sw)
	if r.paradata != "" {
		if e := b.entities[r.paradata]; e != nil {
			e["about"] = ref(act.ID())
		}
	}
	b.put(act)
}

// action is the CreateAction of r, which made results from objects (none:
// no object), and its instrument, the tool as a SoftwareApplication.
func (r *run) action(results, objects []any) (act, sw Entity) {
	swID := "#software-" + slug(r.program)
	if r.version != "" {
		swID += "-" + slug(r.version)
	}
	sw = Entity{"@id": swID, "@type": "SoftwareApplication", "name": r.program}
	if r.version != "" {
		sw["softwareVersion"] = r.version
	}
	act = Entity{"@id": "#run-" + slug(r.program) + "-" + slug(r.runID), "@type": "CreateAction",
		"name": r.program + " run " + r.runID, "instrument": ref(swID), "result": results}
	var desc []string
	if len(r.blocks) > 0 {
		sort.Strings(r.blocks)
		desc = append(desc, "wrote record blocks: "+strings.Join(r.blocks, ", "))
	}
	if r.runner != "" {
		desc = append(desc, "runner "+r.runner)
	}
	if len(desc) > 0 {
		act["description"] = strings.Join(desc, "; ")
	}
	if len(objects) > 0 {
		act["object"] = objects
	}
	for k, v := range map[string]string{"identifier": r.runID, "startTime": r.start, "endTime": r.end,
		"containerImage": r.image, "runnerRef": r.runner} {
		if v != "" {
			act[k] = v
		}
	}
	if r.paradata != "" {
		act["subjectOf"] = ref(r.paradata)
	}
	// How the run ended, as its run metadata says: a failed or canceled
	// job read like a completed one.
	switch r.status {
	case "completed":
		act["actionStatus"] = ref("http://schema.org/CompletedActionStatus")
	case "failed", "canceled", "interrupted":
		act["actionStatus"] = ref("http://schema.org/FailedActionStatus")
		act["error"] = cmp.Or(r.errText, r.status)
	}
	return act, sw
}

// describeRoot names and describes the root Dataset and lists its parts.
func (b *builder) describeRoot(programs []string) {
	name := "Document " + b.docID
	if s, ok := b.rec.Get("source", "filename"); ok {
		if fn, _ := s.(string); fn != "" {
			name += " (" + fn + ")"
		}
	}
	b.root["name"] = name
	b.root["description"] = fmt.Sprintf("Document record %s with its persistent step outputs and the run metadata of %d contributing tool run(s) (%s). The original input and regenerable derivations are described but not included.",
		b.docID, len(b.runOrder), strings.Join(programs, ", "))
	var parts []any
	for id := range b.c.Files {
		parts = append(parts, ref(id))
	}
	sortRefs(parts)
	b.root["hasPart"] = parts
	if b.in.ProcessRun {
		b.root["conformsTo"] = ref(ProcessRunSpec)
		b.put(Entity{"@id": ProcessRunSpec, "@type": "CreativeWork", "name": "Process Run Crate", "version": "0.5"})
	}
}

// graph orders the crate's graph: the metadata descriptor, the root, then
// every other entity by @id.
func (b *builder) graph() *Crate {
	ids := make([]string, 0, len(b.entities))
	for id := range b.entities {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	b.c.Graph = append(b.c.Graph,
		Entity{"@id": MetadataFile, "@type": "CreativeWork", "conformsTo": ref(CrateSpec), "about": ref(RootID)},
		b.root)
	for _, id := range ids {
		b.c.Graph = append(b.c.Graph, b.entities[id])
	}
	return b.c
}

func (b *builder) put(e Entity) { b.entities[e.ID()] = e }

// addFile adds a data entity copied from src to the crate path id, with its
// size and SHA-256.
func (b *builder) addFile(id, src string, e Entity) error {
	id = fileID(id)
	if id == MetadataFile {
		return fmt.Errorf("%s: would overwrite the crate's %s", src, MetadataFile)
	}
	if prev, ok := b.c.Files[id]; ok {
		if absPath(prev) == absPath(src) {
			return nil
		}
		return fmt.Errorf("%s and %s both map to %s in the crate", prev, src, id)
	}
	data, err := os.ReadFile(src)
	if err != nil {
		return err
	}
	sum := sha256.Sum256(data)
	e["@id"] = id
	e["contentSize"] = fmt.Sprint(len(data))
	e["sha256"] = hex.EncodeToString(sum[:])
	b.c.Files[id] = src
	b.byPath[absPath(src)] = id
	b.put(e)
	return nil
}
