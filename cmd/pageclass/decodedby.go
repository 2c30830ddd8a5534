package main

import (
	"cmp"
	"sort"
)

// Decoding modes as recorded per file in the ledger (itemData.Decoding)
// and counted in the run metadata (config.decoding).
const (
	decodedInProcesses = "decoder_processes" // the default: each file in a decoder process
	decodedInProcess   = "in_process"        // --decode-in-process
	// decodedUnrecorded counts files kept from ledger entries written
	// before the mode was recorded (2026-11-28).
	decodedUnrecorded = "unrecorded"
)

// decodingMode is the run's decoding mode as the ledger records it.
func (r *classifier) decodingMode() string {
	if r.cli.DecodeInProcess {
		return decodedInProcess
	}
	return decodedInProcesses
}

// tally counts the files and the classified pages of one way of decoding.
type tally struct {
	Files int `json:"files"`
	Pages int `json:"pages"`
}

// decodedBy counts what decoded the classified rows in the run's tables,
// those classified now and those kept from the ledger alike: a resumed run
// (--retry-failed --pdf-renderer pdfium after a poppler run, say) can hold
// rows of two renderers or two decoding modes, and its metadata says how
// many of each rather than only the renderer of its own flags.
type decodedBy struct {
	renderers map[string]tally // PDF files, by the renderer that drew their pages
	modes     map[string]tally // every file, by decoding mode
}

// add counts one file's classified pages (none: nothing counted).
func (d *decodedBy) add(data itemData) {
	n := len(data.Pages)
	if n == 0 {
		return
	}
	if d.modes == nil {
		d.renderers, d.modes = map[string]tally{}, map[string]tally{}
	}
	mode := cmp.Or(data.Decoding, decodedUnrecorded)
	d.modes[mode] = tally{Files: d.modes[mode].Files + 1, Pages: d.modes[mode].Pages + n}
	if r := data.Renderer; r != "" {
		d.renderers[r] = tally{Files: d.renderers[r].Files + 1, Pages: d.renderers[r].Pages + n}
	}
}

// others lists the keys of m other than want, sorted (for a log line).
func others(m map[string]tally, want string) []string {
	var out []string
	for k := range m {
		if k != want {
			out = append(out, k)
		}
	}
	sort.Strings(out)
	return out
}

// record writes the counts into the run metadata (config.pdf_renderers,
// config.decoding; empty objects when nothing was classified) and says on
// the log when the tables mix rows of this run's renderer or mode with
// rows an earlier run decoded otherwise.
func (d *decodedBy) record(r *classifier) {
	if d.modes == nil {
		d.renderers, d.modes = map[string]tally{}, map[string]tally{}
	}
	r.para.SetConfig("pdf_renderers", d.renderers)
	r.para.SetConfig("decoding", d.modes)
	if o := others(d.renderers, r.cli.PDFRenderer); len(o) > 0 {
		r.log.Info("the tables hold PDF pages drawn by another renderer in an earlier run, kept from the ledger (config.pdf_renderers in the run metadata counts them)",
			"pdf_renderer", r.cli.PDFRenderer, "others", o)
	}
	if o := others(d.modes, r.decodingMode()); len(o) > 0 {
		r.log.Info("the tables hold pages decoded in another mode in an earlier run, kept from the ledger (config.decoding in the run metadata counts them)",
			"decoding", r.decodingMode(), "others", o)
	}
}
