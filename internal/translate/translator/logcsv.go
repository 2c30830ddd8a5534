package translator

import (
	"encoding/csv"
	"fmt"
	"io"
	"strconv"
	"strings"

	"archivekit/internal/utf8name"

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
		if err := cw.Write([]string{utf8name.Escape(r.File), page, r.Line, r.Source, r.Target, string(st), score, r.UnitStatus(), r.Lang, string(r.LangSource)}); err != nil {
			return err
		}
	}
	cw.Flush()
	return cw.Error()
}

// ReadLog reads back a log WriteLog wrote: its rows, in order. Columns are
// found by their names in the header (text_<src> and text_<tgt> are the
// fourth and fifth), so a log of an earlier version with fewer columns is
// read too, leaving what it lacks zero. A row of another length than the
// header is an error naming its line. File is the name as the log writes
// it (utf8name.Escape).
func ReadLog(r io.Reader) ([]alto.LogRow, error) {
	cr := csv.NewReader(r)
	cr.FieldsPerRecord = -1
	header, err := cr.Read()
	if err != nil {
		return nil, fmt.Errorf("translation log: %w", err)
	}
	col := map[string]int{}
	for i, h := range header {
		col[h] = i
	}
	if len(header) < 5 || header[0] != "file" || !strings.HasPrefix(header[3], "text_") || !strings.HasPrefix(header[4], "text_") {
		return nil, fmt.Errorf("translation log: header %q is not a translation log's", strings.Join(header, ","))
	}
	cell := func(row []string, name string) string {
		if i, ok := col[name]; ok {
			return row[i]
		}
		return ""
	}
	var rows []alto.LogRow
	for {
		row, err := cr.Read()
		if err == io.EOF {
			return rows, nil
		}
		if err != nil {
			return rows, fmt.Errorf("translation log: %w", err)
		}
		if len(row) != len(header) {
			line, _ := cr.FieldPos(0)
			return rows, fmt.Errorf("translation log: line %d has %d columns, the header %d", line, len(row), len(header))
		}
		lr := alto.LogRow{File: row[0], Line: cell(row, "line_num"), Source: row[3], Target: row[4],
			Status: backend.Status(cell(row, "status")), Approx: cell(row, "unit_status") == backend.UnitApproxAlignment,
			Lang: cell(row, "source_lang"), LangSource: alto.LangSource(cell(row, "lang_source"))}
		if p := cell(row, "page_num"); p != "" {
			if lr.Page, err = strconv.Atoi(p); err != nil {
				line, _ := cr.FieldPos(0)
				return rows, fmt.Errorf("translation log: line %d: page_num %q is not a number", line, p)
			}
		}
		if s := cell(row, "score"); s != "" {
			if lr.Score, err = strconv.ParseFloat(s, 64); err != nil {
				line, _ := cr.FieldPos(0)
				return rows, fmt.Errorf("translation log: line %d: score %q is not a number", line, s)
			}
			lr.HasScore = true
		}
		rows = append(rows, lr)
	}
}
