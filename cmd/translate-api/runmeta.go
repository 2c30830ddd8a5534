package main

import (
	"cmp"
	"context"
	"encoding/json"
	"path"
	"strings"

	"archivekit/internal/jobs"
	"archivekit/internal/paradata"
	"archivekit/internal/service"
	"archivekit/internal/translate/alto"
	"archivekit/internal/translate/langid"
	"archivekit/internal/translate/runmeta"
	"archivekit/internal/translate/session"
	"archivekit/internal/translate/translator"
	"archivekit/internal/version"
)

// jobRecord is a job's run metadata: the translator's run-metadata
// document (internal/translate/runmeta, as the translate command writes
// it), to which each translated item adds the statistics its request
// attached (serveTranslate, jobs.Annotate), so that a job's statistics are
// those a translate run over the same files has.
type jobRecord struct {
	*runmeta.Run
	// book: a book job, whose one statistics.books record counts its
	// translated items.
	book bool
}

// AddItem adds a translated item's statistics (jobs.ItemRecorder): its
// runmeta.Item, named as the command line names a document, its stem under
// its folder (a book's OCR-D-OCR/0001), and, in a book job, to the book's
// record. The queue hands each succeeded item once, when the job ends,
// however many runs the job took.
func (r jobRecord) AddItem(name string, summary []byte) error {
	var it runmeta.Item
	if err := json.Unmarshal(summary, &it); err != nil {
		return err
	}
	doc := path.Join(path.Dir(name), translator.Stem(name))
	r.Add(doc, it)
	for _, w := range it.Warnings {
		// A job's run metadata lists its documents' warnings as a command
		// line run's does (it listed none), each naming its document by
		// its path (a book's OCR-D-OCR/1: ...), as the command line does.
		r.Warn(translator.PlaceWarning(w, path.Dir(name), path.Base(name)))
	}
	if r.book {
		r.BookDone(0, it)
	}
	return nil
}

// jobBook is a book job's statistics.books record as the job's first run
// started it (bookRecord, kept as the job's jobs.RunJob.BookNote): its
// languages and the files they were detected over; an empty one for a
// job that kept none.
func jobBook(j jobs.RunJob) *runmeta.Book {
	b := runmeta.NewBook(j.Book)
	if j.BookNote != nil {
		_ = json.Unmarshal(j.BookNote, b) // a bad note leaves the fields it did not set as they were
	}
	return b
}

// jobRunMeta starts a job's run metadata (jobs.Options.RunMeta): the
// service's version and image, the job's languages and modes, the backend
// in use with its address or model, the licence components (resolved, as
// the answers' provenance is, from those the items used) and the service's
// settings; the job queue adds the job's form, counts and outputs, and each
// item's statistics (AddItem).
func (s *server) jobRunMeta(_ context.Context, j jobs.RunJob) (jobs.RunRecord, error) {
	b := s.svc.Config.Build
	run := runmeta.New("", j.Start, paradata.Info{ToolVersion: version.String(), ToolCommit: version.Commit(), Repository: paradata.Repository,
		RunnerRef: b.RunnerRef, DockerImage: b.ContainerImage, RunID: j.RunID}, s.components, &translator.Usage{})
	field := func(name, def string) string { return cmp.Or(strings.TrimSpace(j.Fields[name]), def) }
	isALTO := true
	if v, ok := service.ParseBool(field("is_alto", "true")); ok {
		isALTO = v
	}
	run.SetConfig("service", "translate-api")
	run.SetConfig("source_lang", translator.NormalizeLang(field("source_lang", "auto")))
	run.SetConfig("target_lang", translator.NormalizeLang(field("target_lang", "en")))
	run.SetConfig("mode", map[bool]string{true: "alto", false: "metadata"}[isALTO])
	mode := field("output_mode", s.set.OutputMode)
	run.SetConfig("output_mode", mode)
	run.SetConfig("output_mode_by_format", translator.ModeByFormat(alto.Mode(mode)))
	element := string(s.sess.Order.Element)
	if e, err := translator.ParseElementRule("element_lang", field("element_lang", element)); err == nil {
		element = string(e)
	}
	run.SetConfig("element_lang", element)
	run.SetConfig("translation_backend", s.set.Backend)
	if be := s.backend(); be != nil {
		for k, v := range session.Describe(be) { // mtapi's URL; chat_compatible's URL, model, provider; ct2's model; never a key
			run.SetConfig(k, v)
		}
	}
	run.SetConfig("xpaths_file", s.set.Fields.Path)
	run.SetConfig("vocabulary", s.set.Vocabulary)
	run.SetConfig("lang_id_model", langid.ModelID)
	run.SetConfig("book_hosts", s.svc.Config.BookHosts)
	if j.Book == "" {
		return jobRecord{Run: run}, nil
	}
	run.SetBooks([]*runmeta.Book{jobBook(j)})
	return jobRecord{Run: run, book: true}, nil
}
