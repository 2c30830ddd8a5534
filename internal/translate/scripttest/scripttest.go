// Package scripttest checks, for the format packages' tests, what one
// translation did with units in a script no supported language is
// written in when the source language was given (alto.Given): left
// untouched as unsupported_lang with a warning naming the script, or,
// when the given language is written in that script, sent as it.
package scripttest

import (
	"os"
	"strings"
	"testing"

	"archivekit/internal/translate/alto"
	"archivekit/internal/translate/backend"
	"archivekit/internal/translate/backend/backendtest"
)

// Want describes a test file and what its translation should do.
type Want struct {
	// File is the test file; Tag the script's tag ("und-Hebr"); Other a
	// given language not written in the script ("de"), Own one written in
	// it ("he").
	File, Tag, Other, Own string
	// Script names the script ("Hebrew"); Word is one of its words in the
	// file, Kept a piece of the file that stays as it is when the units
	// are left untouched.
	Script, Word, Kept string
	// Foreign are the log lines (LogRow.Line) of the units in the
	// script; Latin those of the units in a supported language, which are
	// translated from the given source.
	Foreign, Latin []string
}

// Translate is one format's translation of src from the given source
// into English through be; output is the translated document.
type Translate func(be backend.Backend, src []byte, source string) (run Run, output []byte, err error)

// Test translates w.File once per Cases(w.Tag, w.Other, w.Own) through a
// backendtest.Backend and checks each run (Check); with the units left
// untouched, w.Kept is still in the output.
func Test(t *testing.T, w Want, translate Translate) {
	src, err := os.ReadFile(w.File)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range Cases(w.Tag, w.Other, w.Own) {
		t.Run(c.Source, func(t *testing.T) {
			be := &backendtest.Backend{}
			run, out, err := translate(be, src, c.Source)
			if err != nil {
				t.Fatal(err)
			}
			run.Inputs = be.Inputs()
			Check(t, c, run, w.Foreign, w.Latin, w.Script, w.Word)
			if !c.Sent && !strings.Contains(string(out), w.Kept) {
				t.Errorf("%q is not kept as it was", w.Kept)
			}
		})
	}
}

// Case is one given source language and what the units in the foreign
// script should get.
type Case struct {
	// Source is the given source language.
	Source string
	// Lang, From and Status are the foreign units' log values.
	Lang   string
	From   alto.LangSource
	Status backend.Status
	// Sent: the foreign units' text reaches the backend.
	Sent bool
}

// Cases are the two given sources to try: other, a language not written
// in the script (its units get tag, the script's, and are left
// untouched), and own, one written in it (its units are sent as own).
func Cases(tag, other, own string) []Case {
	return []Case{
		{Source: other, Lang: tag, From: alto.FromScript, Status: backend.UnsupportedLang},
		{Source: own, Lang: own, From: alto.FromGiven, Status: backend.OK, Sent: true},
	}
}

// Run is what one translation gave.
type Run struct {
	Log      []alto.LogRow
	Warnings []string
	// Inputs are the texts the backend was sent.
	Inputs []string
	// Unsupported counts the units left untouched as unsupported.
	Unsupported int
}

// Check checks run against c. foreign are the log lines (LogRow.Line)
// of the units in the script, named script ("Hebrew"), one of whose
// words is word; latin those of the units in a supported language, which
// are translated from c.Source.
func Check(t *testing.T, c Case, run Run, foreign, latin []string, script, word string) {
	t.Helper()
	if sent := strings.Contains(strings.Join(run.Inputs, "\n"), word); sent != c.Sent {
		t.Errorf("%s text sent to the backend: %v, want %v (inputs %q)", script, sent, c.Sent, run.Inputs)
	}
	rows := map[string]alto.LogRow{}
	for _, r := range run.Log {
		rows[r.Line] = r
	}
	for _, id := range foreign {
		if r := rows[id]; r.Status != c.Status || r.Lang != c.Lang || r.LangSource != c.From {
			t.Errorf("%s: status %q, lang %q from %q; want %q, %q from %q", id, r.Status, r.Lang, r.LangSource, c.Status, c.Lang, c.From)
		}
	}
	for _, id := range latin {
		if r := rows[id]; r.Status != backend.OK || r.Lang != c.Source || r.Target == "" {
			t.Errorf("%s: %+v; want translated from %s", id, r, c.Source)
		}
	}
	warned := strings.Contains(strings.Join(run.Warnings, "\n"), script+" script: not a supported source language")
	if warned == c.Sent {
		t.Errorf("warnings %q: script named %v, want %v", run.Warnings, warned, !c.Sent)
	}
	if want := len(foreign); !c.Sent && run.Unsupported != want {
		t.Errorf("%d units counted unsupported, want %d", run.Unsupported, want)
	}
}
