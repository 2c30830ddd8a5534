package main

import (
	"encoding/base64"
	"encoding/json"
	"net/http"
	"unicode/utf8"

	"archivekit/internal/service"
	"archivekit/internal/translate/translator"
	"archivekit/internal/utf8name"
)

// jsonAnswer is the body of /translate with response_format=json: the
// translated document, its statistics and each unit's status in one JSON
// object, for clients that want more than the document (the XML answer's
// count headers say the same in brief).
type jsonAnswer struct {
	// Name is the translated document's file name, a name that is not
	// UTF-8 with \xNN for each stray byte (utf8name.Escape, as the run
	// metadata writes it: JSON would give U+FFFD); Kind its format.
	Name string `json:"name"`
	Kind string `json:"kind"`
	// SourceLang is the source language (explicit, or the most frequent
	// detected one), TargetLang the target, Tag the BCP 47 tag of the
	// machine translation (RFC 6497, "en-t-cs-t0-und").
	SourceLang string         `json:"source_lang"`
	TargetLang string         `json:"target_lang"`
	Tag        string         `json:"tag,omitempty"`
	Languages  map[string]int `json:"languages,omitempty"`
	// LangSources counts the units whose source language each rule of the
	// source-language order chose (detected, element, document, default;
	// given with an explicit source).
	LangSources map[string]int `json:"lang_sources,omitempty"`
	Backend     string         `json:"backend"`
	// BackendInfo says what the backend is (session.Describe): ct2's model
	// folder and digest, a chat API's model, the MT API's URL.
	BackendInfo map[string]any `json:"backend_info,omitempty"`
	// Encoding is the document's character encoding. Document holds it as
	// text when it is UTF-8; DocumentBase64 holds its bytes otherwise
	// (windows-1252, UTF-16, ...), exactly as the XML answer would.
	Encoding       string `json:"encoding"`
	Document       string `json:"document,omitempty"`
	DocumentBase64 string `json:"document_base64,omitempty"`
	// Statistics counts pages, units and backend traffic.
	Statistics jsonStats `json:"statistics"`
	// Units is the per-unit log, in document order: what the CLI writes
	// to <stem>_log.csv.
	Units    []jsonUnit `json:"units"`
	Warnings []string   `json:"warnings"`
	// Record is the updated document record when document_json was sent.
	Record json.RawMessage `json:"document_json,omitempty"`
	// License and LicenseURL are the licence the translation carries: the
	// most restrictive of the components that produced it (answerLicence),
	// as the CLI's run metadata and the record's provenance say.
	License    string `json:"license"`
	LicenseURL string `json:"license_url,omitempty"`
}

type jsonStats struct {
	Pages                int `json:"pages"`
	Blocks               int `json:"blocks"`
	Lines                int `json:"lines"`
	Units                int `json:"units"`
	Translated           int `json:"translated"`
	Skipped              int `json:"skipped"`
	AlreadyDone          int `json:"already_done"`
	InTarget             int `json:"in_target"`
	Unsupported          int `json:"unsupported"`
	Untranslated         int `json:"untranslated"`
	Mixed                int `json:"mixed_content"`
	Calls                int `json:"calls"`
	CleanBatches         int `json:"clean_batches"`
	LineCountMismatches  int `json:"line_count_mismatches"`
	TransportErrors      int `json:"transport_errors"`
	ProtectedTerms       int `json:"protected_terms"`
	PlaceholderCalls     int `json:"placeholder_calls"`
	PlaceholderFallbacks int `json:"placeholder_fallbacks"`
}

// jsonUnit is one row of the per-unit log.
type jsonUnit struct {
	Page   int    `json:"page,omitempty"`
	Line   string `json:"line"`
	Source string `json:"source"`
	Target string `json:"target"`
	Status string `json:"status"`
	// UnitStatus is the unit status of the command line's log
	// (backend.UnitStatus): approx_alignment for a line whose words were
	// placed by proportion or that got none of its block's words.
	UnitStatus string   `json:"unit_status"`
	Score      *float64 `json:"score,omitempty"`
	// SourceLang is the unit's source language, LangSource the rule of
	// the source-language order that chose it.
	SourceLang string `json:"source_lang,omitempty"`
	LangSource string `json:"lang_source,omitempty"`
}

func statsJSON(s translator.Stats) jsonStats {
	return jsonStats{Pages: s.Pages, Blocks: s.Blocks, Lines: s.Lines, Units: s.Units, Translated: s.Translated,
		Skipped: s.Skipped, AlreadyDone: s.AlreadyDone, InTarget: s.InTarget, Unsupported: s.Unsupported,
		Untranslated: s.Untranslated, Mixed: s.Mixed, Calls: s.Calls, CleanBatches: s.CleanBatches,
		LineCountMismatches: s.LineCountMismatches, TransportErrors: s.TransportErrors, ProtectedTerms: s.ProtectedTerms,
		PlaceholderCalls: s.PlaceholderCalls, PlaceholderFallbacks: s.PlaceholderFallbacks}
}

// respondJSON writes the response_format=json answer.
func (s *server) respondJSON(w http.ResponseWriter, job *translateJob, res *translated) {
	out := res.out
	a := jsonAnswer{Name: utf8name.Escape(out.Name), Kind: string(out.Kind), SourceLang: out.SourceLang, TargetLang: job.target,
		Tag: out.Tag, Languages: out.Languages, LangSources: out.LangSources, Backend: res.backend, BackendInfo: res.backendInfo, Encoding: out.Encoding,
		Statistics: statsJSON(out.Stats), Units: make([]jsonUnit, 0, len(out.Log)), Warnings: out.Warnings}
	lic := s.answerLicence(res.usage.Components())
	a.License, a.LicenseURL = lic.EffectiveLicense, lic.EffectiveLicenseURL
	if a.Encoding == "" {
		a.Encoding = "UTF-8"
	}
	a.Warnings = make([]string, len(out.Warnings))
	for i, w := range out.Warnings {
		a.Warnings[i] = utf8name.Escape(w) // a warning names its document
	}
	if utf8.Valid(out.Data) && (a.Encoding == "UTF-8" || a.Encoding == "utf-8") {
		a.Document = string(out.Data)
	} else {
		a.DocumentBase64 = base64.StdEncoding.EncodeToString(out.Data)
	}
	for _, r := range out.Log {
		u := jsonUnit{Page: r.Page, Line: r.Line, Source: r.Source, Target: r.Target, Status: string(r.Status), UnitStatus: r.UnitStatus(),
			SourceLang: r.Lang, LangSource: string(r.LangSource)}
		if r.HasScore {
			sc := r.Score
			u.Score = &sc
		}
		a.Units = append(a.Units, u)
	}
	if job.baseline != nil {
		rec, _, err := s.record(job.baseline, out, job.q, job.target, res.backend, res.usage)
		if err != nil {
			clearAnswerHeaders(w.Header())
			service.WriteError(w, http.StatusInternalServerError, service.ReasonInternal, service.Redact(err.Error()))
			return
		}
		a.Record = rec
	}
	service.WriteJSON(w, http.StatusOK, a)
}
