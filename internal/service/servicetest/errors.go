package servicetest

import (
	"bytes"
	"encoding/json"
	"slices"
	"testing"
)

// ErrorAnswer is an error answer of the services decoded: {"status": 413,
// "reason": "too_large", "detail": "..."}; Detail is a string, or a list of
// validation errors for reason bad_field.
type ErrorAnswer struct {
	Status int             `json:"status"`
	Reason string          `json:"reason"`
	Detail json.RawMessage `json:"detail"`
}

// CheckError decodes body, an answer with HTTP status code, as an error
// answer and checks it: code and the body's status are wantStatus, its
// reason is wantReason, its detail is not empty and contains wantDetail
// (in a list detail, in any message or location). It returns the answer.
func CheckError(t testing.TB, code int, body []byte, wantStatus int, wantReason, wantDetail string) ErrorAnswer {
	t.Helper()
	var a ErrorAnswer
	if err := json.Unmarshal(body, &a); err != nil {
		t.Fatalf("answer %d is not an error body: %v: %.300s", code, err, body)
	}
	if code != wantStatus || a.Status != wantStatus || a.Reason != wantReason {
		t.Errorf("answer %d {status %d, reason %q}, want %d {status %d, reason %q}: %.500s",
			code, a.Status, a.Reason, wantStatus, wantStatus, wantReason, body)
	}
	var text string
	var list []struct {
		Loc []any  `json:"loc"`
		Msg string `json:"msg"`
	}
	switch {
	case json.Unmarshal(a.Detail, &text) == nil:
	case json.Unmarshal(a.Detail, &list) == nil && len(list) > 0:
		text = string(a.Detail)
	default:
		t.Errorf("detail is neither a string nor a list of validation errors: %s", a.Detail)
	}
	if text == "" || !bytes.Contains([]byte(text), []byte(wantDetail)) {
		t.Errorf("detail %q does not say %q", text, wantDetail)
	}
	return a
}

// ReasonEnum is the ErrorReason enum of an OpenAPI document, checked to be
// the reason of both error schemas (HTTPError, HTTPValidationError) and
// required by them.
func ReasonEnum(t testing.TB, openapi []byte) []string {
	t.Helper()
	type prop struct {
		Ref string `json:"$ref"`
	}
	type schema struct {
		Required   []string        `json:"required"`
		Properties map[string]prop `json:"properties"`
		Enum       []string        `json:"enum"`
	}
	var doc struct {
		Components struct {
			Schemas map[string]schema `json:"schemas"`
		} `json:"components"`
	}
	if err := json.Unmarshal(openapi, &doc); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"HTTPError", "HTTPValidationError"} {
		s := doc.Components.Schemas[name]
		if s.Properties["reason"].Ref != "#/components/schemas/ErrorReason" {
			t.Errorf("%s.reason is %+v, want a reference to ErrorReason", name, s.Properties["reason"])
		}
		for _, f := range []string{"status", "reason", "detail"} {
			if !slices.Contains(s.Required, f) {
				t.Errorf("%s does not require %s (required: %v)", name, f, s.Required)
			}
		}
	}
	return doc.Components.Schemas["ErrorReason"].Enum
}
