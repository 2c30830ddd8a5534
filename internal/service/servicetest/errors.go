package servicetest

import (
	"bytes"
	"encoding/json"
	"net/http"
	"regexp"
	"slices"
	"strings"
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

// What ReasonsNamed reads: "(reason x" anywhere, and the items of
// "Reasons: x, y (a note), z and w." once notes in parentheses are left out.
var (
	reasonOne  = regexp.MustCompile(`\(reason ([a-z_]+)`)
	parenNote  = regexp.MustCompile(`\s*\([^()]*\)`)
	reasonList = regexp.MustCompile(`Reasons: ([^.]*)\.`)
)

// ReasonsNamed is every reason code the descriptions of an OpenAPI
// document name ("(reason too_large)", "Reasons: starting, draining."),
// for a test to check them against the ErrorReason enum; an item of a
// list that is not one word comes back whole, so that it fails the check.
func ReasonsNamed(openapi []byte) []string {
	var out []string
	s := string(openapi)
	for _, m := range reasonOne.FindAllStringSubmatch(s, -1) {
		out = append(out, m[1])
	}
	for _, m := range reasonList.FindAllStringSubmatch(parenNote.ReplaceAllString(s, ""), -1) {
		for _, item := range strings.Split(strings.ReplaceAll(m[1], " and ", ", "), ",") {
			out = append(out, strings.TrimSpace(item))
		}
	}
	return out
}

// CheckOpenAPIReasons checks the /openapi.json a service at base serves:
// its ErrorReason enum is want, in order (ReasonEnum), and every reason
// its descriptions name is one of them (ReasonsNamed), which they do at
// least once.
func CheckOpenAPIReasons[R ~string](t testing.TB, base string, want []R) {
	t.Helper()
	resp, err := http.Get(base + "/openapi.json")
	if err != nil {
		t.Fatal(err)
	}
	doc := ReadBody(t, resp)
	var codes []string
	for _, r := range want {
		codes = append(codes, string(r))
	}
	if got := ReasonEnum(t, doc); !slices.Equal(got, codes) {
		t.Errorf("/openapi.json ErrorReason enum\n %v\nwant the Go list\n %v", got, codes)
	}
	named := ReasonsNamed(doc)
	if len(named) == 0 {
		t.Error("/openapi.json names no reason in its descriptions")
	}
	for _, r := range named {
		if !slices.Contains(codes, r) {
			t.Errorf("/openapi.json names the reason %q, which is not in the list", r)
		}
	}
}
