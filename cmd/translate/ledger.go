package main

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"

	"archivekit/internal/ledger"
	"archivekit/internal/translate/alto"
	"archivekit/internal/translate/backend"
	"archivekit/internal/translate/langid"
	"archivekit/internal/translate/mtapi"
	"archivekit/internal/translate/runmeta"
	"archivekit/internal/translate/translator"
	"archivekit/internal/version"
)

// LedgerFolder is the folder of the run ledgers inside the output folder.
const LedgerFolder = ledger.Folder

// ledgerConfig is everything that decides a translation: the program, the
// languages, the ALTO output mode, the backend and what it points at (the
// API address, the chat model, the converted model folder), line-by-line or
// fast alignment, the content of the field list and the vocabulary, and
// with a vocabulary what turns it into protected terms: the lemmatiser's
// address and the glossary size (LLM_MAX_GLOSSARY_TERMS).
type ledgerConfig struct {
	Tool    string `json:"tool"`
	Version string `json:"version"`
	Source  string `json:"source_lang"`
	Target  string `json:"target_lang"`
	Mode    string `json:"output_mode"`
	// FormatMode: no mode was given, each format took its own default
	// (append for PAGE-XML).
	FormatMode  bool           `json:"output_mode_format_default,omitempty"`
	Backend     string         `json:"translation_backend"`
	BackendInfo map[string]any `json:"backend,omitempty"`
	FastAlign   bool           `json:"fast_align"`
	Fields      string         `json:"fields_sha256,omitempty"`
	Vocabulary  string         `json:"vocabulary_sha256,omitempty"`
	Lemmatizer  string         `json:"lemmatizer_url,omitempty"`
	Glossary    int            `json:"llm_max_glossary_terms,omitempty"`
	// With source auto, what chooses each unit's language: the
	// detector's model (langid.ModelID) and the source-language order.
	// A run resumed after either changed translates its inputs again.
	LangID    string         `json:"lang_id_model,omitempty"`
	LangOrder map[string]any `json:"source_lang_order,omitempty"`
	// RetryRounds: the end-of-document rounds, which change what is
	// written for rejected segments.
	RetryRounds int `json:"retry_rounds"`
}

// itemData is a ledger entry's data: the files written for the input,
// relative to the output folder, with their digests, so a resumed run knows
// they are still there as written; and the licence components and source
// languages of its translation, which a resumed run that keeps the files
// counts in its run metadata (licence, languages) as if it had translated
// them.
type itemData struct {
	// Kind is the document's kind; empty in the ledgers of runs before it
	// was recorded (their outputs are counted as xml).
	Kind       translator.Kind `json:"kind,omitempty"`
	Outputs    []outFile       `json:"outputs"`
	Components []string        `json:"components,omitempty"`
	Languages  map[string]int  `json:"languages,omitempty"`
	// HyphenNext is the next text file's first word whose whole word this
	// ALTO output holds; HyphenPrev the first word this output emptied
	// because the file before holds the whole word (bookhyphen.go).
	HyphenNext *alto.Carried `json:"hyphen_carried_next,omitempty"`
	HyphenPrev string        `json:"hyphen_emptied_first,omitempty"`
	// NoText: a page without text, written as it was
	// (translator.Output.NoText).
	NoText bool `json:"no_text,omitempty"`
}

type outFile struct {
	// Path keeps a name that is not UTF-8 whole (ledger.Text).
	Path   ledger.Text `json:"path"`
	SHA256 string      `json:"sha256"`
}

// openLedger reads the ledger folder of the run's configuration,
// <output>/ledger/translate_<key>, and starts this run's file in it, named
// by the run's stamp (and shard). lemURL is the lemmatiser's address ("" when
// none is used) and maxTerms the glossary size.
func (r *runner) openLedger(be backend.Backend, lemURL string, maxTerms int) (*ledger.Ledger, error) {
	s := r.s
	cfg := ledgerConfig{Tool: "translate", Version: version.String(), Source: s.Source, Target: s.Target,
		Mode: s.Mode, FormatMode: s.outputMode() == "", Backend: s.Backend, FastAlign: s.FastAlign, RetryRounds: s.RetryRounds}
	if s.Source == "auto" {
		cfg.LangID = langid.ModelID
		cfg.LangOrder = map[string]any{"order": s.Order.Rules(), "element": string(s.Order.Element),
			"min_length": s.Order.MinLength, "min_confidence": s.Order.MinConfidence, "default": s.Order.Default}
	}
	if m, ok := be.(*mtapi.Backend); ok {
		cfg.BackendInfo = map[string]any{"url": m.BaseURL()}
	}
	if inf, ok := be.(interface{ Info() map[string]any }); ok {
		cfg.BackendInfo = inf.Info()
	}
	if s.FieldsErr == nil {
		if b, err := s.FieldsFile.ReadFile(); err == nil {
			cfg.Fields = ledger.DigestBytes(b)
		}
	}
	if r.vocabulary != nil {
		d, err := ledger.Digest(s.Vocabulary)
		if err != nil {
			return nil, fmt.Errorf("vocabulary: %w", err)
		}
		cfg.Vocabulary = d
		cfg.Lemmatizer, cfg.Glossary = lemURL, maxTerms
	}
	name := strings.TrimSuffix(filepath.Base(r.pd.path), ".json")
	l, key, err := ledger.OpenRun(ledger.Run{Output: s.Output, Tool: "translate", Config: cfg, Name: name,
		Redo: "that input is translated again", Resume: s.Resume}, r.log)
	if err != nil {
		return nil, err
	}
	r.pd.SetConfig("ledger", l.Path())
	r.pd.SetConfig("ledger_key", key)
	return l, nil
}

// itemName is an input's name in the ledger and the failures table: its
// path relative to the input folder with "/", the URL of a downloaded
// input, the file name of a single file.
func (r *runner) itemName(in input) string {
	switch {
	case in.Origin != in.Path:
		return in.Origin // a URL
	case in.Dir != "" || filepath.Clean(r.s.Input) != filepath.Clean(in.Path):
		return filepath.ToSlash(filepath.Join(in.Dir, filepath.Base(in.Path)))
	default:
		return filepath.Base(in.Path)
	}
}

// recordDone writes the ledger entry of a translated input: its output
// files (relative to the output folder) with their digests, and out's
// licence components and languages.
func (r *runner) recordDone(l *ledger.Ledger, name, digest string, out *translator.Output, files ...string) error {
	d := itemData{Kind: out.Kind, Components: out.Components, Languages: out.Languages, HyphenNext: out.Carried, HyphenPrev: out.FromPrev, NoText: out.NoText}
	for _, f := range files {
		sum, err := ledger.Digest(f)
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(r.s.Output, f)
		if err != nil {
			return err
		}
		d.Outputs = append(d.Outputs, outFile{Path: ledger.Text(filepath.ToSlash(rel)), SHA256: sum})
	}
	b, err := json.Marshal(d)
	if err != nil {
		return err
	}
	return l.Record(ledger.Entry{Item: name, Digest: digest, State: ledger.Done, Data: b})
}

// kept returns the output files of a done entry that are still there, with
// the entry's data, and those missing since. ok is true when every one is
// there as it was written, or when one of them changed since (changed lists
// those: edited by hand, say) and none is missing, so that a resumed run
// never overwrites such work; ok is false when one is missing (with none
// changed, the input is then translated again; with one changed too, the
// caller records the input as failed rather than overwrite the edit or
// leave an output missing without a word).
func (r *runner) kept(e ledger.Entry) (files, changed, missing []string, d itemData, ok bool) {
	if json.Unmarshal(e.Data, &d) != nil || len(d.Outputs) == 0 {
		return nil, nil, nil, d, false
	}
	for _, o := range d.Outputs {
		p := filepath.Join(r.s.Output, filepath.FromSlash(string(o.Path)))
		sum, err := ledger.Digest(p)
		switch {
		case err != nil:
			missing = append(missing, p)
			continue
		case sum != o.SHA256:
			changed = append(changed, p)
		}
		files = append(files, p)
	}
	return files, changed, missing, d, len(missing) == 0
}

// writer is a run the ledgers record writing an output: the digest it
// recorded for the file, its ledger folder (which names its configuration)
// and the input it was written from (its ledger name and content digest).
type writer struct {
	sha, folder, item, digest string
}

// sameInput reports whether w wrote the output from the input of entry e
// (its name and content).
func (w writer) sameInput(e ledger.Entry) bool { return w.item == e.Item && w.digest == e.Digest }

// writtenBy reports, for a changed output of own (an entry of this run's
// configuration that --resume found done), which other run wrote it
// since: every file of changed holds what a run recorded writing there
// (the same path and digest, in any translate ledger of this output
// folder), with other settings (another translate_<key> folder) or from
// another input (another file of that name: other content under the same
// output name), no earlier than own was recorded (own.At). why says which
// ("a run with other settings", "a run of another input of that name");
// "" when a file is none of these: an edit to keep. A file restored by
// hand to what an earlier run wrote stays an edit; with changed empty, why
// is "".
func (r *runner) writtenBy(p *pass, changed []string, own ledger.Entry) (why string) {
	for _, f := range changed {
		sum, err := ledger.Digest(f)
		if err != nil {
			return ""
		}
		found := ""
		for w, at := range r.writers(p, f) {
			if w.sha != sum || at < own.At { // RFC 3339 in UTC, to the second: ordered as text
				continue
			}
			switch {
			case !w.sameInput(own):
				found = "a run of another input of that name"
			case w.folder != p.led.Dir() && found == "":
				found = "a run with other settings"
			}
		}
		if found == "" {
			return ""
		}
		if why == "" {
			why = found
		}
	}
	return why
}

// replacesOther returns those of the output and log files of in, about to
// be written, that hold what an earlier run recorded writing there from
// another input: other content under the same name (another input folder
// into this output folder), or another file with that output name. name
// and digest are the input's, as the ledger names them; none for an unread
// input, whose digest is "".
func (r *runner) replacesOther(p *pass, in input, name, digest string) []string {
	if digest == "" {
		return nil
	}
	own := ledger.Entry{Item: name, Digest: digest}
	outPath, logPath := r.outPaths(in)
	var out []string
	for _, f := range []string{outPath, logPath} {
		ws := r.writers(p, f)
		other := false
		for w := range ws {
			other = other || !w.sameInput(own)
		}
		if !other {
			continue // the usual case: no digest to take
		}
		sum, err := ledger.Digest(f)
		if err != nil {
			continue // not there: nothing replaced
		}
		mine, theirs := false, false
		for w := range ws {
			if w.sha == sum {
				mine, theirs = mine || w.sameInput(own), theirs || !w.sameInput(own)
			}
		}
		if theirs && !mine {
			out = append(out, f)
		}
	}
	return out
}

// writers returns the runs the translate ledgers of the output folder
// record writing the output file f, each with the latest time it was
// recorded. The ledgers are read once, at the first call; this run's own
// file is left out (two inputs of one run never write one output: see
// runner.claimed).
func (r *runner) writers(p *pass, f string) map[writer]string {
	if r.recordedOutputs == nil {
		r.recordedOutputs = recordedOutputs(filepath.Dir(p.led.Dir()), p.led.Path())
	}
	rel, err := filepath.Rel(r.s.Output, f)
	if err != nil {
		return nil
	}
	return r.recordedOutputs[filepath.ToSlash(rel)]
}

// recordedOutputs returns, by output path (relative to the output folder,
// with "/"), the runs recorded done in the translate ledgers of dir (the
// output folder's ledger folder) writing it, other than in the run file
// own, each with the latest time recorded. Unreadable files and entries
// are passed over.
func recordedOutputs(dir, own string) map[string]map[writer]string {
	out := map[string]map[writer]string{}
	ledger.EachDone(dir, "translate", func(file string, e ledger.Entry) {
		var d itemData
		if file == own || json.Unmarshal(e.Data, &d) != nil {
			return
		}
		for _, o := range d.Outputs {
			path := string(o.Path)
			if out[path] == nil {
				out[path] = map[writer]string{}
			}
			if w := (writer{o.SHA256, filepath.Dir(file), e.Item, e.Digest}); e.At > out[path][w] {
				out[path][w] = e.At
			}
		}
	})
	return out
}

// failuresPath is the run's failures table beside its run metadata:
// <stamp>_translator_failures.csv (…_shard-<i>-of-<n>_failures.csv).
func (p *runRecord) failuresPath() string {
	return strings.TrimSuffix(p.path, ".json") + "_failures.csv"
}

// restored records an input whose outputs a resumed run keeps from an
// earlier run: its files, the licence components and the source languages
// of its translation. name is the document as the run metadata names it
// (folder/stem).
func (p *runRecord) restored(name string, d itemData, files ...string) {
	p.usage.Add(d.Components...)
	p.Update(func(doc *runmeta.Doc) {
		st := &doc.Statistics
		runmeta.AddCounts(st.Languages, d.Languages)
		st.SuccessfullyProcessed++
		st.OutputCountsByType[d.Kind.OutputType()]++
		st.OutputCountsByType["csv"]++
		st.CountKind(d.Kind)
		if d.NoText {
			st.NoText(name, false)
		}
		doc.Outputs = append(doc.Outputs, files...)
	})
}

// logFile names an input's log file (translator.LogName) in its output
// folder.
func (r *runner) outPaths(in input) (out, log string) {
	dir := filepath.Join(r.s.Output, in.Dir)
	return filepath.Join(dir, translator.OutputName(in.Path, r.s.Target)), filepath.Join(dir, translator.LogName(in.Path))
}
