package translator

import (
	"context"
	"fmt"

	"archivekit/internal/translate/alto"
	"archivekit/internal/translate/batch"
	"archivekit/internal/translate/hocr"
	"archivekit/internal/translate/pagexml"
)

// page translates a PAGE-XML document into out (internal/translate/pagexml).
// In append mode a PAGE 2013 document, which has room for one TextEquiv a
// line only, gets a sidecar instead: out.Data is the document with the same
// ids holding the translation, and out.Sidecar says so.
func (d *document) page(ctx context.Context, in []byte, out *Output) error {
	opt, be := d.opt, d.be
	res, err := pagexml.Translate(ctx, in, pagexml.Options{
		Backend: be, Source: opt.Source, Target: opt.Target, Detector: d.det,
		MinConfidence: opt.MinConfidence, Order: opt.Order, DocumentLang: opt.DocumentLang, Mode: keeping(opt.Mode), File: d.stem,
		RetryRounds: opt.RetryRounds,
	})
	if err != nil {
		return err
	}
	out.Data, out.Log, out.Languages = res.Output, res.Log, res.Languages
	out.LangSources = sourceCounts(res.LangSources)
	if res.Sidecar != nil {
		out.Data, out.Sidecar = res.Sidecar, true
	}
	s := res.Stats
	d.lineStats(out, s.Counts, alto.Stats{Pages: s.Pages, Blocks: s.Regions, Lines: s.Lines, Counts: s.Counts},
		Stats{Units: s.Units, Translated: s.Translated, AlreadyDone: s.AlreadyDone, InTarget: s.InTarget,
			Unsupported: s.Unsupported, Untranslated: s.Untranslated, Rerun: s.Rerun}, res.Warnings)
	return nil
}

// hocr translates an hOCR document into a parallel one in out
// (internal/translate/hocr).
func (d *document) hocr(ctx context.Context, in []byte, out *Output) error {
	opt, be := d.opt, d.be
	res, err := hocr.Translate(ctx, in, hocr.Options{
		Backend: be, Source: opt.Source, Target: opt.Target, Detector: d.det,
		MinConfidence: opt.MinConfidence, Order: opt.Order, DocumentLang: opt.DocumentLang, File: d.stem,
		RetryRounds: opt.RetryRounds,
	})
	if err != nil {
		return err
	}
	out.Data, out.Log, out.Languages = res.Output, res.Log, res.Languages
	out.LangSources = sourceCounts(res.LangSources)
	s := res.Stats
	d.lineStats(out, s.Counts, alto.Stats{Pages: s.Pages, Lines: s.Lines, Counts: s.Counts},
		Stats{Units: s.Units, Translated: s.Translated, InTarget: s.InTarget,
			Unsupported: s.Unsupported, Untranslated: s.Untranslated, Rerun: s.Rerun}, res.Warnings)
	return nil
}

// lineStats fills out's statistics and summary line for the line-based
// formats (PAGE-XML, hOCR): units from st, traffic from c, the summary
// line as ALTO writes it (sum), and passes the warnings on.
func (d *document) lineStats(out *Output, c batch.Counts, sum alto.Stats, st Stats, warnings []string) {
	be := d.be
	st.Pages, st.Blocks, st.Lines = sum.Pages, sum.Blocks, sum.Lines
	st.Skipped = st.Units - st.Translated
	st.Calls, st.CleanBatches, st.LineCountMismatches = c.Calls, c.CleanBatches, c.LineCountMismatches
	st.TransportErrors = c.TransportErrors + int(be.transportErrors.Load())
	d.rejected = c.Rejected
	out.Stats = st
	for _, w := range warnings {
		d.warn(w)
	}
	out.Summary = sum.Summary(d.stem)
	if be.transportErrors.Load() > 0 {
		out.Summary += fmt.Sprintf("; %d backend calls failed after retries", be.transportErrors.Load())
	}
}
