// Package bakeoff compares translation backends on real segments (spec
// translation 4.1 eval/bakeoff.py): the text of ALTO TextBlocks and of the
// targeted metadata fields, each sent as the translator sends it. Per segment
// and backend it records the length ratio, number preservation, terminology
// hits and, where a reference translation is given, sentence chrF and BLEU
// as sacrebleu computes them (internal/translate/mteval). A failing backend call is recorded
// and the run goes on. With source language auto each segment's language is
// detected, as the translator does (confidence 0.2 or lower falls back to
// Czech), so "auto" never reaches a backend.
package bakeoff

import (
	"archivekit/internal/dirwalk"
	"bytes"
	"context"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"archivekit/internal/atomicfile"
	"archivekit/internal/translate/alto"
	"archivekit/internal/translate/backend"
	"archivekit/internal/translate/metadata"
	"archivekit/internal/translate/mteval"
	"archivekit/internal/translate/vocab"
)

// Segment kinds.
const (
	KindALTO     = "alto"
	KindMetadata = "metadata"
)

// Segment is one unit of text to translate.
type Segment struct {
	// ID is "<file>#<block ID>" for ALTO and "<file>#<xpath>[<n>]" for
	// metadata, <file> relative to the samples argument it was found under.
	ID, File, Kind, Text string
}

// LoadSegments reads the XML files named by paths (files, or folders walked
// for *.xml in lexical order). ALTO files give their TextBlocks, other XML
// files the fields matched by fields. A file that cannot be read or parsed
// is skipped with a warning; a path that does not exist is an error.
func LoadSegments(paths []string, fields []*metadata.XPath) ([]Segment, []string, error) {
	var segs []Segment
	var warnings []string
	for _, root := range paths {
		st, err := os.Stat(root)
		if err != nil {
			return nil, nil, fmt.Errorf("samples: %w", err)
		}
		var files []string
		if st.IsDir() {
			err := dirwalk.Walk(root, func(p string, d fs.DirEntry, err error) error {
				if errors.Is(err, dirwalk.ErrWalked) {
					return nil // its files are taken once
				}
				if err != nil {
					return err
				}
				if !d.IsDir() && strings.HasSuffix(strings.ToLower(d.Name()), ".xml") {
					files = append(files, p)
				}
				return nil
			})
			if err != nil {
				return nil, nil, fmt.Errorf("samples: %w", err)
			}
		} else {
			files = []string{root}
		}
		for _, f := range files {
			name := filepath.Base(f)
			if st.IsDir() {
				if rel, err := filepath.Rel(root, f); err == nil {
					name = filepath.ToSlash(rel)
				}
			}
			got, err := fileSegments(f, name, fields)
			if err != nil {
				warnings = append(warnings, fmt.Sprintf("%s: skipped: %v", f, err))
				continue
			}
			if len(got) == 0 {
				warnings = append(warnings, fmt.Sprintf("%s: no text to translate", f))
			}
			segs = append(segs, got...)
		}
	}
	seen := map[string]bool{}
	for _, s := range segs {
		if seen[s.ID] {
			return nil, nil, fmt.Errorf("samples: segment %s appears twice (the same file given twice?)", s.ID)
		}
		seen[s.ID] = true
	}
	return segs, warnings, nil
}

func fileSegments(path, name string, fields []*metadata.XPath) ([]Segment, error) {
	src, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var segs []Segment
	if alto.IsALTO(src) {
		blocks, err := alto.BlockTexts(src)
		if err != nil {
			return nil, err
		}
		for _, b := range blocks {
			segs = append(segs, Segment{ID: name + "#" + b.ID, File: name, Kind: KindALTO, Text: b.Text})
		}
		return segs, nil
	}
	if len(fields) == 0 {
		return nil, errors.New("not ALTO, and no field list for metadata records")
	}
	ft, err := metadata.FieldTexts(src, fields, nil)
	if err != nil {
		return nil, err
	}
	for _, f := range ft {
		segs = append(segs, Segment{ID: fmt.Sprintf("%s#%s[%d]", name, f.XPath, f.N), File: name, Kind: KindMetadata, Text: f.Text})
	}
	return segs, nil
}

// LoadRefs reads a references CSV with the header segment_id,reference.
// Duplicate ids and empty references are errors naming the line.
func LoadRefs(path string) (map[string]string, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("references: %w", err)
	}
	r := csv.NewReader(bytes.NewReader(bytes.TrimPrefix(data, []byte("\xef\xbb\xbf"))))
	head, err := r.Read()
	if err != nil || len(head) != 2 || strings.TrimSpace(head[0]) != "segment_id" || strings.TrimSpace(head[1]) != "reference" {
		return nil, fmt.Errorf("%s:1: want the header segment_id,reference", path)
	}
	refs := map[string]string{}
	for {
		rec, err := r.Read()
		if err == io.EOF {
			return refs, nil
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		line, _ := r.FieldPos(0)
		switch {
		case strings.TrimSpace(rec[1]) == "":
			return nil, fmt.Errorf("%s:%d: empty reference for %s", path, line, rec[0])
		case refs[rec[0]] != "":
			return nil, fmt.Errorf("%s:%d: %s has a second reference", path, line, rec[0])
		}
		refs[rec[0]] = rec[1]
	}
}

// Statuses of a result row.
const (
	StatusOK          = "ok"
	StatusError       = "error"                  // the backend call failed
	StatusUnsupported = "unsupported"            // the backend does not offer the pair
	StatusInTarget    = string(backend.InTarget) // already in the target language: not sent
)

// Config is one bake-off run.
type Config struct {
	Backends []backend.Backend
	// Source is an ISO 639-1 code or "auto"; Target a code.
	Source, Target string
	// Detector is required with Source auto.
	Detector alto.Detector
	// Vocabulary, when not nil, gives the expected terms.
	Vocabulary *vocab.Vocabulary
	// Refs maps segment ids to reference translations.
	Refs map[string]string
	// Now times the calls; nil means time.Now.
	Now func() time.Time
	// Progress, when not nil, is called after each segment.
	Progress func(done, total int)
}

// Row is the result of one segment on one backend.
type Row struct {
	Segment
	Lang, Backend, Status, Error string
	Hypothesis, Reference        string
	Seconds                      float64
	// LengthRatio is characters out over characters in.
	LengthRatio          float64
	NumTotal, NumKept    int
	TermTotal, TermHit   int
	HasRef               bool
	ChrF, BLEU           float64
	translated, measured bool
}

// Run translates every segment with every backend and scores the results.
// It stops early only when ctx ends; the rows done so far are returned with
// ctx's error.
func Run(ctx context.Context, segs []Segment, cfg Config) ([]Row, error) {
	if cfg.Target == "" || cfg.Target == "auto" {
		return nil, errors.New("bakeoff: the target language must be a language code")
	}
	auto := cfg.Source == "" || cfg.Source == "auto"
	if auto && cfg.Detector == nil {
		return nil, errors.New("bakeoff: source language auto needs a detector")
	}
	now := cfg.Now
	if now == nil {
		now = time.Now
	}
	supported := map[string]error{}
	var rows []Row
	for i, s := range segs {
		if err := ctx.Err(); err != nil {
			return rows, err
		}
		lang := cfg.Source
		if auto {
			lang = alto.DetectLang(cfg.Detector, s.Text, alto.DefaultMinConfidence)
		}
		ref, hasRef := cfg.Refs[s.ID]
		var terms [][2]string
		if cfg.Vocabulary != nil && lang == cfg.Vocabulary.Lang {
			terms = cfg.Vocabulary.Glossary(s.Text, len(cfg.Vocabulary.Entries))
		}
		for _, b := range cfg.Backends {
			row := Row{Segment: s, Lang: lang, Backend: b.Name(), Reference: ref, HasRef: hasRef}
			switch {
			case lang == cfg.Target:
				row.Status = StatusInTarget
			default:
				key := b.Name() + "\x00" + lang
				err, seen := supported[key]
				if !seen {
					err = b.Supports(ctx, lang, cfg.Target)
					supported[key] = err
				}
				if err != nil {
					row.Status, row.Error = StatusUnsupported, err.Error()
					break
				}
				start := now()
				hyp, err := b.Translate(ctx, s.Text, lang, cfg.Target)
				row.Seconds = now().Sub(start).Seconds()
				if err != nil {
					row.Status, row.Error = StatusError, err.Error()
					break
				}
				row.Status, row.Hypothesis, row.translated = StatusOK, hyp, true
				row.LengthRatio = mteval.LengthRatio(s.Text, hyp)
				row.NumTotal, row.NumKept = mteval.Numbers(s.Text, hyp)
				row.TermTotal, row.TermHit = mteval.TermHits(terms, hyp)
				if hasRef {
					row.ChrF, row.BLEU, row.measured = mteval.ChrF(hyp, ref), mteval.BLEU(hyp, ref), true
				}
			}
			rows = append(rows, row)
		}
		if cfg.Progress != nil {
			cfg.Progress(i+1, len(segs))
		}
	}
	return rows, nil
}

// Columns of the CSV file.
var Columns = []string{"segment_id", "file", "kind", "source_lang", "backend", "status", "error", "seconds",
	"source_chars", "target_chars", "length_ratio", "numbers_total", "numbers_kept", "terms_total", "terms_hit",
	"chrf", "bleu", "source", "hypothesis", "reference"}

func f4(x float64) string { return strconv.FormatFloat(x, 'f', 4, 64) }

// WriteCSV writes one row per segment and backend, atomically. Metric cells
// of rows that were not translated are empty, as are chrF and BLEU without a
// reference and the term columns without a vocabulary.
func WriteCSV(path string, rows []Row, withVocab bool) error {
	return atomicfile.Write(path, 0o666, func(w io.Writer) error {
		cw := csv.NewWriter(w)
		cw.Write(Columns)
		for _, r := range rows {
			rec := []string{r.ID, r.File, r.Kind, r.Lang, r.Backend, r.Status, r.Error, "", strconv.Itoa(len([]rune(r.Text))),
				"", "", "", "", "", "", "", "", r.Text, r.Hypothesis, r.Reference}
			if r.translated {
				rec[7] = strconv.FormatFloat(r.Seconds, 'f', 3, 64)
				rec[9] = strconv.Itoa(len([]rune(r.Hypothesis)))
				rec[10] = f4(r.LengthRatio)
				rec[11], rec[12] = strconv.Itoa(r.NumTotal), strconv.Itoa(r.NumKept)
				if withVocab {
					rec[13], rec[14] = strconv.Itoa(r.TermTotal), strconv.Itoa(r.TermHit)
				}
				if r.measured {
					rec[15], rec[16] = f4(r.ChrF), f4(r.BLEU)
				}
			}
			if err := cw.Write(rec); err != nil {
				return err
			}
		}
		cw.Flush()
		return cw.Error()
	})
}

// Summary is the per-backend aggregate.
type Summary struct {
	Backend                                  string
	Segments, OK, Failed, Unsupported, InTgt int
	MeanLengthRatio                          float64
	NumTotal, NumKept, TermTotal, TermHit    int
	Scored                                   int // OK rows with a reference
	MeanChrF, MeanBLEU                       float64
}

// Summarise aggregates rows per backend, in the order the backends first
// appear.
func Summarise(rows []Row) []Summary {
	idx := map[string]int{}
	var out []Summary
	for _, r := range rows {
		i, ok := idx[r.Backend]
		if !ok {
			i = len(out)
			idx[r.Backend] = i
			out = append(out, Summary{Backend: r.Backend})
		}
		s := &out[i]
		s.Segments++
		switch r.Status {
		case StatusOK:
			s.OK++
			s.MeanLengthRatio += r.LengthRatio
			s.NumTotal += r.NumTotal
			s.NumKept += r.NumKept
			s.TermTotal += r.TermTotal
			s.TermHit += r.TermHit
			if r.measured {
				s.Scored++
				s.MeanChrF += r.ChrF
				s.MeanBLEU += r.BLEU
			}
		case StatusError:
			s.Failed++
		case StatusUnsupported:
			s.Unsupported++
		case StatusInTarget:
			s.InTgt++
		}
	}
	for i := range out {
		s := &out[i]
		if s.OK > 0 {
			s.MeanLengthRatio /= float64(s.OK)
		}
		if s.Scored > 0 {
			s.MeanChrF /= float64(s.Scored)
			s.MeanBLEU /= float64(s.Scored)
		}
	}
	return out
}

func ratio(a, b int) string {
	if b == 0 {
		return "-"
	}
	return fmt.Sprintf("%.1f%% (%d/%d)", 100*float64(a)/float64(b), a, b)
}

// WriteTable prints the summaries as an aligned table.
func WriteTable(w io.Writer, sums []Summary) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "backend\tsegments\tok\tfailed\tunsupported\tin target\tlength ratio\tnumbers kept\tterms hit\tchrF\tBLEU\tscored")
	for _, s := range sums {
		lr, chrf, bleu := "-", "-", "-"
		if s.OK > 0 {
			lr = fmt.Sprintf("%.3f", s.MeanLengthRatio)
		}
		if s.Scored > 0 {
			chrf, bleu = fmt.Sprintf("%.2f", s.MeanChrF), fmt.Sprintf("%.2f", s.MeanBLEU)
		}
		fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t%d\t%d\t%s\t%s\t%s\t%s\t%s\t%d\n", s.Backend, s.Segments, s.OK, s.Failed, s.Unsupported, s.InTgt,
			lr, ratio(s.NumKept, s.NumTotal), ratio(s.TermHit, s.TermTotal), chrf, bleu, s.Scored)
	}
	return tw.Flush()
}
