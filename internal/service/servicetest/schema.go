package servicetest

import (
	"bytes"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// MatchesSchema fails t when answer does not match the schema the service's
// own OpenAPI document (openapi, OpenAPI 3.1, whose schemas are JSON Schema
// 2020-12) declares under components/schemas/name: what a client generated
// from the document expects of the answer.
func MatchesSchema(t testing.TB, openapi []byte, name string, answer []byte) {
	t.Helper()
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(openapi))
	if err != nil {
		t.Fatalf("openapi.json: %v", err)
	}
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	if err := c.AddResource("openapi.json", doc); err != nil {
		t.Fatalf("openapi.json: %v", err)
	}
	s, err := c.Compile("openapi.json#/components/schemas/" + name)
	if err != nil {
		t.Fatalf("openapi.json schema %s: %v", name, err)
	}
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(answer))
	if err != nil {
		t.Fatalf("the answer is not JSON: %v: %.300s", err, answer)
	}
	if err := s.Validate(inst); err != nil {
		t.Errorf("the answer does not match the OpenAPI schema %s: %v\n%.500s", name, err, answer)
	}
}
