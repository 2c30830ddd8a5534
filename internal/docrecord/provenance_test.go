package docrecord

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"archivekit/internal/licence"
)

func TestAddProvenance(t *testing.T) {
	seed := []byte(`{"schema_version": "1.0", "doc_id": "CTX-0001 / Příliš",
 "source": {"sha256": "ABCDEF0000000000000000000000000000000000000000000000000000000000", "filename": "x.pdf"},
 "provenance": {"note": "kept", "contributors": [{"program": "alto-postprocess", "run_id": "r0", "at": "2026-01-01T00:00:00Z", "license": "CC BY 4.0"}]}}`)
	rec, err := Parse(seed)
	if err != nil {
		t.Fatal(err)
	}
	mit := licence.Resolution{EffectiveLicense: "MIT", EffectiveLicenseURL: "https://opensource.org/license/mit/"}
	at := time.Date(2026, 2, 3, 4, 5, 6, 0, time.FixedZone("CET", 3600))
	pc := NewContributor("page-classification", "0.1.0", "260203-030506", at, mit, "page_categories")
	pc.ContainerImage = "registry.example/pageclass:sha-1234567"
	if err := rec.AddProvenance(pc); err != nil {
		t.Fatal(err)
	}
	ncsa := licence.Resolution{EffectiveLicense: "CC BY-NC-SA 4.0", EffectiveLicenseURL: "https://creativecommons.org/licenses/by-nc-sa/4.0/"}
	tr := NewContributor("translator", "0.1.0", "260203-040000", at.Add(time.Hour), ncsa, "translations")
	if err := rec.AddProvenance(tr); err != nil {
		t.Fatal(err)
	}
	// The same run again replaces its entry.
	if err := rec.AddProvenance(tr); err != nil {
		t.Fatal(err)
	}
	for path, want := range map[string]any{
		"provenance/license": "CC BY-NC-SA 4.0", "provenance/license_url": "https://creativecommons.org/licenses/by-nc-sa/4.0/",
		"provenance/note": "kept", "provenance/license_detail/is_share_alike": true,
	} {
		if got, _ := rec.Get(strings.Split(path, "/")...); got != want {
			t.Errorf("%s = %v, want %v", path, got, want)
		}
	}
	list, _ := rec.Get("provenance", "contributors")
	cs := list.([]any)
	if len(cs) != 3 {
		t.Fatalf("%d contributors, want 3", len(cs))
	}
	p := cs[1].(*Object)
	if str(p, "at") != "2026-02-03T03:05:06Z" || str(p, "container_image") != "registry.example/pageclass:sha-1234567" || str(p, "version") != "0.1.0" ||
		str(p, "blocks") != "page_categories" || str(p, "license") != "MIT" {
		t.Errorf("pageclass entry %s", mustJSON(t, p))
	}
	if _, ok := p.Get("runner_ref"); ok {
		t.Error("runner_ref written though not set")
	}
	by, _ := rec.Get("provenance", "license_detail", "determined_by")
	if arr := by.([]any); len(arr) != 1 || arr[0] != "translator" {
		t.Errorf("determined_by %v", by)
	}
	out, err := rec.Bytes()
	if err != nil {
		t.Fatal(err)
	}
	// doc_id and the seeded digest keep their bytes (no case or Unicode
	// normalisation).
	for _, raw := range []string{`"CTX-0001 / Příliš"`, `"ABCDEF0000000000000000000000000000000000000000000000000000000000"`} {
		if !bytes.Contains(out, []byte(raw)) {
			t.Errorf("%s not kept byte for byte:\n%s", raw, out)
		}
	}
	// The record stays valid (with a schema-conforming digest).
	valid, _ := Parse([]byte(`{"schema_version":"1.0","doc_id":"D","source":{"sha256":"` + strings.Repeat("0", 64) + `"}}`))
	valid.AddProvenance(pc)
	valid.AddProvenance(tr)
	s, err := ProjectSchema()
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Validate(valid); err != nil {
		t.Errorf("record with provenance invalid: %v", err)
	}
}

func TestAddProvenanceErrors(t *testing.T) {
	rec, _ := Parse([]byte(`{"schema_version":"1.0","doc_id":"D","provenance":[]}`))
	c := NewContributor("p", "1", "r", time.Unix(0, 0), licence.Resolution{EffectiveLicense: "MIT"})
	if err := rec.AddProvenance(c); err == nil || !strings.Contains(err.Error(), "provenance is") {
		t.Errorf("provenance not an object: %v", err)
	}
	rec, _ = Parse([]byte(`{"schema_version":"1.0","doc_id":"D"}`))
	if err := rec.AddProvenance(Contributor{Program: "p", RunID: "r", At: "x"}); err == nil || !strings.Contains(err.Error(), "no licence") {
		t.Errorf("no licence: %v", err)
	}
	// An unrecognised licence ranks highest.
	rec.AddProvenance(c)
	rec.AddProvenance(NewContributor("chat", "1", "r2", time.Unix(0, 0), licence.Resolution{EffectiveLicense: "provider terms of service"}))
	if got, _ := rec.Get("provenance", "license"); got != "provider terms of service" {
		t.Errorf("license %v", got)
	}
}

func mustJSON(t *testing.T, o *Object) string {
	b, err := o.MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
