package translator

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"time"

	"archivekit/internal/docrecord"
	"archivekit/internal/licence"
	"archivekit/internal/translate/alto"
)

// Program is the program name in run metadata and record provenance.
const Program = "translator"

// RecordInfo is what AccreteRecord writes besides the translation itself.
type RecordInfo struct {
	// SourceLang, TargetLang, Backend and Mode fill the translations block.
	// Mode alternative is written as output_mode append (the original is
	// kept; the schema's enum is replace or append) and output_form
	// alternative.
	SourceLang, TargetLang, Backend, Mode string
	// ModeByKind, when the documents of the record got different modes
	// (a book's PAGE files appended, its ALTO files replaced), is each
	// kind's, stored as translations.output_mode_by_format; Mode is then
	// replace (not every original was kept).
	ModeByKind map[string]string
	// LanguageTag is the machine-translation tag of the translation
	// (langtag.MT of the most frequent source language,
	// "en-t-cs-t0-und"); stored as translations.language_tag when set.
	LanguageTag string
	// TranslatedXML is the reference to the translated document, stored as
	// derived_from.translated_xml (required).
	TranslatedXML string
	// Files lists every translated file when a run produced several for one
	// record (pages of one document); stored as translations.files.
	Files []string
	// Licence is the resolved licence; its derivation is stored as
	// translations.license_detail.
	Licence licence.Resolution
	// RunID, ParadataRef and At stamp assembled.blocks.translations.
	RunID, ParadataRef string
	At                 time.Time
	// HadBaseline is false when the record was started without a baseline.
	HadBaseline bool
	// Version, ContainerImage and RunnerRef describe the run in the
	// provenance block (the last two when set).
	Version, ContainerImage, RunnerRef string
}

// AccreteRecord writes the translator's block onto rec (spec 2.4):
// translations {source_lang, target_lang, backend, output_mode[,
// output_form][, language_tag], license, license_url, license_detail[,
// files]}, derived_from.translated_xml, the
// assembled.blocks entry and its contributor entry in the provenance block
// (docrecord.AddProvenance). The translated text itself is not stored. doc_id
// is never touched. The caller validates and writes the record
// (docrecord.Record.WriteFile), which refuses an invalid one.
func AccreteRecord(rec *docrecord.Record, info RecordInfo) error {
	if rec == nil {
		return errors.New("document record: no record")
	}
	if info.TranslatedXML == "" {
		return errors.New("document record: no translated document reference")
	}
	// The licence detail goes through JSON so the record holds plain JSON
	// values in the resolver's field order.
	detail, err := toJSONValue(info.Licence)
	if err != nil {
		return fmt.Errorf("document record: licence detail: %w", err)
	}
	block := docrecord.NewObject()
	block.Set("source_lang", info.SourceLang)
	block.Set("target_lang", info.TargetLang)
	block.Set("backend", info.Backend)
	if info.Mode == string(alto.Alternative) {
		// output_mode says whether the original was kept (the schema's
		// enum is replace or append); output_form names the finer form.
		block.Set("output_mode", string(alto.Append))
		block.Set("output_form", info.Mode)
	} else {
		block.Set("output_mode", info.Mode)
	}
	if len(info.ModeByKind) > 0 {
		byKind := docrecord.NewObject()
		for _, k := range slices.Sorted(maps.Keys(info.ModeByKind)) {
			byKind.Set(k, info.ModeByKind[k])
		}
		block.Set("output_mode_by_format", byKind)
	}
	if info.LanguageTag != "" {
		block.Set("language_tag", info.LanguageTag)
	}
	block.Set("license", info.Licence.EffectiveLicense)
	block.Set("license_url", info.Licence.EffectiveLicenseURL)
	block.Set("license_detail", detail)
	if len(info.Files) > 0 {
		files := make([]any, len(info.Files))
		for i, f := range info.Files {
			files[i] = f
		}
		block.Set("files", files)
	}
	if err := rec.Set(block, "translations"); err != nil {
		return fmt.Errorf("document record: %w", err)
	}
	if err := rec.Set(info.TranslatedXML, "derived_from", "translated_xml"); err != nil {
		return fmt.Errorf("document record: %w", err)
	}
	at := info.At
	if at.IsZero() {
		at = time.Now()
	}
	if err := rec.NoteBlocks(Program, info.RunID, info.ParadataRef, at, info.HadBaseline, "translations"); err != nil {
		return fmt.Errorf("document record: %w", err)
	}
	c := docrecord.NewContributor(Program, info.Version, info.RunID, at, info.Licence, "translations")
	c.ParadataRef, c.ContainerImage, c.RunnerRef = info.ParadataRef, info.ContainerImage, info.RunnerRef
	if err := rec.AddProvenance(c); err != nil {
		return fmt.Errorf("document record: %w", err)
	}
	return nil
}

func toJSONValue(v any) (*docrecord.Object, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	o := docrecord.NewObject()
	if err := json.Unmarshal(b, o); err != nil {
		return nil, err
	}
	return o, nil
}
