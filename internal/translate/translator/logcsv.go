package translator

import (
	"archivekit/internal/utf8name"
	"encoding/csv"
	"io"
	"strconv"

	"archivekit/internal/translate/alto"
	"archivekit/internal/translate/backend"
)

// WriteLog writes the translation log CSV (spec 2.2): the header
// file,page_num,line_num,text_<src>,text_<tgt>,status (src is the run's
// source language setting, so it may read "auto"), then one row per log
// entry; page_num is empty for metadata rows. The status column is added
// beyond the spec: ok, retried, untranslated, unsupported_lang, vocabulary,
// mixed_content or in_target (already in the target language, not sent;
// backend.Status); text_<tgt> is empty for untranslated, unsupported,
// mixed-content and in-target rows. So is the score column: the model's score of the
// segment's translation where the backend gives one (ct2: cumulative
// log-probability, 4 decimals), empty otherwise. The last column,
// unit_status, is the same outcome in the original translator's unit
// status vocabulary (backend.UnitStatus): ok, rerun, approx_alignment,
// untranslated, unsupported_lang or in_target. Then source_lang, the unit's source
// language, and lang_source, the rule of the source-language order that
// chose it (alto.LangSource: detected, element, document, default, or
// given for an explicit source); both empty for a row of a unit whose
// language was not chosen (mixed content).
func WriteLog(w io.Writer, rows []alto.LogRow, src, tgt string) error {
	cw := csv.NewWriter(w)
	if err := cw.Write([]string{"file", "page_num", "line_num", "text_" + src, "text_" + tgt, "status", "score", "unit_status", "source_lang", "lang_source"}); err != nil {
		return err
	}
	for _, r := range rows {
		page := ""
		if r.Page > 0 {
			page = strconv.Itoa(r.Page)
		}
		st := r.Status
		if st == "" {
			st = backend.OK
		}
		score := ""
		if r.HasScore {
			score = strconv.FormatFloat(r.Score, 'f', 4, 64)
		}
		if err := cw.Write([]string{utf8name.Escape(r.File), page, r.Line, r.Source, r.Target, string(st), score, backend.UnitStatus(st, r.Approx), r.Lang, string(r.LangSource)}); err != nil {
			return err
		}
	}
	cw.Flush()
	return cw.Error()
}
