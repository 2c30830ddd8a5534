package main

import (
	"encoding/json"
	"strings"
	"testing"

	"archivekit/internal/docrecord"
)

// TestSchemaErrorOfAHandledBaseline: spec page-classification 2.2 and 7. A
// baseline record that fails the schema but can still be handled is not
// refused: the answer is 200 with the updated record and a non-null
// document_json_schema_error (a list of one message naming the problem),
// and the record notes the error too. A valid baseline gives null.
func TestSchemaErrorOfAHandledBaseline(t *testing.T) {
	_, ts := startServer(t, testOptions(t), nil, nil)
	name, png := samplePage(t)
	base, _ := docrecord.New("scan")
	valid, err := base.Bytes()
	if err != nil {
		t.Fatal(err)
	}
	invalid := []byte(strings.Replace(string(valid), `"doc_id"`, `"record_type": 5, "doc_id"`, 1))
	if string(invalid) == string(valid) {
		t.Fatal("the baseline was not made invalid")
	}
	for _, tc := range []struct {
		name     string
		baseline []byte
		wantErr  bool
	}{
		{"valid baseline", valid, false},
		{"invalid but handled baseline", invalid, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			status, b := postForm(t, ts.URL+"/predict_image",
				upload{Field: "file", Name: name, CType: "image/png", Data: png},
				upload{Field: "document_json", Name: "scan.document.json", CType: "application/json", Data: tc.baseline},
				upload{Field: "document_json_out", Data: []byte("true")})
			if status != 200 {
				t.Fatalf("status %d, want 200: %.400s", status, b)
			}
			var r struct {
				Type        string          `json:"type"`
				Record      json.RawMessage `json:"document_json"`
				SchemaError json.RawMessage `json:"document_json_schema_error"`
			}
			if err := json.Unmarshal(b, &r); err != nil {
				t.Fatal(err)
			}
			rec, err := docrecord.Parse(r.Record)
			if r.Type != "image" || err != nil || rec.DocID() != "scan" {
				t.Fatalf("type %q, record %v: %s", r.Type, err, r.Record)
			}
			if !tc.wantErr {
				if string(r.SchemaError) != "null" {
					t.Errorf("document_json_schema_error = %s, want null", r.SchemaError)
				}
				return
			}
			var msgs []string
			if err := json.Unmarshal(r.SchemaError, &msgs); err != nil || len(msgs) != 1 || !strings.Contains(msgs[0], "record_type") {
				t.Errorf("document_json_schema_error = %s, want a list of one message naming record_type", r.SchemaError)
			}
			if rec.SchemaError() == "" {
				t.Errorf("the record does not note the baseline's error: %s", r.Record)
			}
		})
	}
}
