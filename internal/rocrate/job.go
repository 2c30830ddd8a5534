package rocrate

import (
	"cmp"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"time"

	"archivekit/internal/licence"
)

// JobPart is a file of a service job's results archive.
type JobPart struct {
	// Path is the file's name in the archive; Name and EncodingFormat
	// describe it (EncodingFormat "": guessed from Path).
	Path, Name, EncodingFormat string
	// Size and SHA256 (hex) are the file's.
	Size   int
	SHA256 string
}

// NewJobPart is the part of data at path.
func NewJobPart(path, name, format string, data []byte) JobPart {
	sum := sha256.Sum256(data)
	return JobPart{Path: path, Name: name, EncodingFormat: format, Size: len(data), SHA256: hex.EncodeToString(sum[:])}
}

// Job describes a service job's results archive: its files and the run
// metadata of the job (a run-metadata document as a command line run
// writes it, internal/paradata), itself one of the files.
type Job struct {
	// ID is the job's id.
	ID    string
	Parts []JobPart
	// RunMetadata is the path of the run metadata among Parts, Meta its
	// content.
	RunMetadata string
	Meta        []byte
	// Sources are the job's inputs: the uploaded files' names or the
	// book's URL, described but never part of the crate.
	Sources []string
}

// BuildJob builds the crate of a job's results archive: the root Dataset
// holds every part; the job is one CreateAction (the same as a command
// line run's, with its tool as a SoftwareApplication) whose result is the
// parts other than the run metadata, whose object is the sources, and
// which the run metadata is about. datePublished is the job's end time
// from its run metadata, never the clock.
func BuildJob(j Job) (*Crate, error) {
	b := &builder{c: &Crate{Files: map[string]string{}}, entities: map[string]Entity{}}
	var results []any
	for _, p := range j.Parts {
		id := fileID(p.Path)
		b.put(Entity{"@id": id, "@type": "File", "name": cmp.Or(p.Name, p.Path), "encodingFormat": cmp.Or(p.EncodingFormat, mediaType(p.Path)),
			"contentSize": fmt.Sprint(p.Size), "sha256": p.SHA256})
		b.c.Files[id] = p.Path
		if p.Path != j.RunMetadata {
			results = append(results, ref(id))
		}
	}
	metaID := fileID(j.RunMetadata)
	if _, ok := b.c.Files[metaID]; !ok {
		return nil, fmt.Errorf("job %s: run metadata %q is not among the parts", j.ID, j.RunMetadata)
	}
	var pd paradataDoc
	if err := json.Unmarshal(j.Meta, &pd); err != nil || pd.Program == "" || pd.RunID == "" {
		return nil, fmt.Errorf("job %s: run metadata %q missing, not JSON or without program and run_id", j.ID, j.RunMetadata)
	}
	end, err := time.Parse(time.RFC3339Nano, pd.EndTime)
	if err != nil {
		return nil, fmt.Errorf("job %s: run metadata end_time %q: %v", j.ID, pd.EndTime, err)
	}
	lic, _ := licence.Lookup(pd.License)
	licID := cmp.Or(pd.LicenseURL, lic.URL, "#license")
	b.put(Entity{"@id": licID, "@type": "CreativeWork", "name": lic.ID, "identifier": lic.ID})

	var objects []any
	for i, s := range j.Sources {
		id := fmt.Sprintf("#input-%04d", i)
		b.put(Entity{"@id": id, "@type": "CreativeWork", "name": s, "description": "an input of the job; not part of this crate"})
		objects = append(objects, ref(id))
	}
	r := &run{program: pd.Program, runID: pd.RunID, version: pd.ToolVersion, image: pd.DockerImage, runner: pd.RunnerRef,
		start: utc(pd.StartTime), end: utc(pd.EndTime), paradata: metaID, status: pd.Status, errText: pd.Error}
	sortRefs(results)
	act, sw := r.action(results, objects)
	b.put(sw)
	b.put(act)
	b.entities[metaID]["about"] = ref(act.ID())

	var parts []any
	for id := range b.c.Files {
		parts = append(parts, ref(id))
	}
	sortRefs(parts)
	b.root = Entity{"@id": RootID, "@type": "Dataset", "identifier": "job-" + j.ID, "name": "Job " + j.ID + " (" + pd.Program + ")",
		"description":   fmt.Sprintf("The results of job %s of %s: %s and the run metadata of the job, one CreateAction. The inputs are described but not included.", j.ID, pd.Program, resultFiles(results)),
		"datePublished": end.UTC().Format(time.RFC3339), "license": ref(licID), "hasPart": parts}
	return b.graph(), nil
}

// resultFiles says what a job crate's result files are: its answers, and
// results.json when among them ("3 answer file(s) and results.json": the
// answers were counted with results.json).
func resultFiles(results []any) string {
	answers, listed := 0, false
	for _, r := range results {
		if refID(r) == "results.json" {
			listed = true
			continue
		}
		answers++
	}
	s := fmt.Sprintf("%d answer file(s)", answers)
	if listed {
		s += ", results.json"
	}
	return s
}
