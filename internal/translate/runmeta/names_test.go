package runmeta_test

import (
	"encoding/json"
	"reflect"
	"slices"
	"strings"
	"testing"

	"archivekit/internal/paradata"
	"archivekit/internal/translate/runmeta"
	"archivekit/internal/translate/translator"
	"archivekit/internal/translate/vocab"
)

// TestViewEscapesNames: the run metadata as written gives every name that
// is not UTF-8 with \xNN for each stray byte (utf8name.Escape), so that
// two documents whose names differ only in such bytes (cp852 names from a
// Windows zip) are two entries, not one name with U+FFFD (a JSON object
// then held one key twice): outputs, warnings, the per-document protected
// terms, terminology and pages without text, a book's source and problems,
// earlier runs' files and the configuration. The run keeps the names as
// they are: a withdrawn document is found by them.
func TestViewEscapesNames(t *testing.T) {
	r := newRun(t)
	r.SetConfig("input_path", "/in/d\xe1vka")
	blank := &translator.Output{Kind: translator.KindALTO}
	terms := &vocab.TermCheck{Expected: 2, Hit: 1}
	r.Done("\x8e\xe1dost", output("cs", 2, 1, terms), "/out/\x8e\xe1dost_en.alto.xml", "/out/\x8e\xe1dost_log.csv")
	r.Done("\x8a\xe1dost", output("cs", 2, 1, terms), "/out/\x8a\xe1dost_en.alto.xml", "/out/\x8a\xe1dost_log.csv")
	r.Done("pr\xe1zdn\xe1", blank, "/out/pr\xe1zdn\xe1_en.alto.xml")
	r.Warn("\x8e\xe1dost: 2 lines got no word")
	book := runmeta.NewBook("/in/kniha\xe1.xml")
	book.SetProblems([]string{"page 3: file str\xe1nka.xml not found"})
	r.SetBooks([]*runmeta.Book{book})
	r.AddInterrupted(paradata.Interrupted{RunID: "r0", File: "/out/\xe1_translator.json"})

	b, err := json.Marshal(r.Snapshot())
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(b), "\ufffd") || strings.Contains(string(b), `\ufffd`) {
		t.Errorf("U+FFFD written:\n%s", b)
	}
	var d runmeta.Doc
	if err := json.Unmarshal(b, &d); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ what, got, want string }{
		{"outputs", strings.Join(d.Outputs, " "),
			`/out/\x8a\xe1dost_en.alto.xml /out/\x8a\xe1dost_log.csv /out/\x8e\xe1dost_en.alto.xml /out/\x8e\xe1dost_log.csv /out/pr\xe1zdn\xe1_en.alto.xml`},
		{"protected terms", keys(d.Config["vocabulary_protected_terms"].(map[string]any)), `\x8a\xe1dost \x8e\xe1dost pr\xe1zdn\xe1`},
		{"terminology", keys(d.Statistics.Terminology.Documents), `\x8a\xe1dost \x8e\xe1dost`},
		{"without text", strings.Join(d.Statistics.WithoutText, " "), `pr\xe1zdn\xe1`},
		{"warning", d.Warnings[0], `\x8e\xe1dost: 2 lines got no word`},
		{"book source", d.Statistics.Books[0].Source, `/in/kniha\xe1.xml`},
		{"book problems", strings.Join(d.Statistics.Books[0].Problems, " "), `page 3: file str\xe1nka.xml not found`},
		{"interrupted run", d.Interrupted[0].File, `/out/\xe1_translator.json`},
		{"config", d.Config["input_path"].(string), `/in/d\xe1vka`},
	} {
		if tc.got != tc.want {
			t.Errorf("%s: %s, want %s", tc.what, tc.got, tc.want)
		}
	}

	// The run's own names are kept: the withdrawn document and its files
	// are found by them.
	r.Withdraw("\x8e\xe1dost", runmeta.ItemOf(output("cs", 2, 1, terms)), "/out/\x8e\xe1dost_en.alto.xml", "/out/\x8e\xe1dost_log.csv")
	v := r.Snapshot()
	if got := strings.Join(v.Outputs, " "); got != `/out/\x8a\xe1dost_en.alto.xml /out/\x8a\xe1dost_log.csv /out/pr\xe1zdn\xe1_en.alto.xml` {
		t.Errorf("outputs after the withdrawal: %s", got)
	}
	if got := keys(v.Config["vocabulary_protected_terms"].(map[string]int)); got != `\x8a\xe1dost pr\xe1zdn\xe1` {
		t.Errorf("protected terms after the withdrawal: %s", got)
	}
}

// keys are the keys of m, sorted, joined by spaces.
func keys[V any](m map[string]V) string {
	var ks []string
	for k := range m {
		ks = append(ks, k)
	}
	slices.Sort(ks)
	return strings.Join(ks, " ")
}

// entry is a struct a configuration value may hold (a tool's book record).
type entry struct {
	Source   string
	Problems []string
	Pages    int
	hidden   string
}

// TestEscapeConfig: every string of the configuration, in whatever value
// holds it (slices, maps and their keys, structs, pointers), is escaped in
// a copy; cfg is left as it was, and values without such a name are
// shared, not copied.
func TestEscapeConfig(t *testing.T) {
	unchanged := []string{"a", "b"}
	for _, tc := range []struct {
		name     string
		in, want any
	}{
		{"string", "/in/d\xe1vka", `/in/d\xe1vka`},
		{"UTF-8 string", "/in/dávka", "/in/dávka"},
		{"number", 3, 3},
		{"nil", nil, nil},
		{"strings", []string{"ok", "\x8e"}, []string{"ok", `\x8e`}},
		{"any list", []any{"\x8e", 1.5}, []any{`\x8e`, 1.5}},
		{"not collected", []map[string]string{{"file": "/in/pozn\xe1mka.xml", "reason": "not ALTO"}},
			[]map[string]string{{"file": `/in/pozn\xe1mka.xml`, "reason": "not ALTO"}}},
		{"map keys", map[string]int{"\x8e\xe1dost": 1, "\x8a\xe1dost": 2}, map[string]int{`\x8e\xe1dost`: 1, `\x8a\xe1dost`: 2}},
		{"nested", map[string]any{"list": []any{map[string]any{"file": "\xff"}}}, map[string]any{"list": []any{map[string]any{"file": `\xff`}}}},
		{"struct pointer", &entry{Source: "kniha\xe1.xml", Problems: []string{"\xe1"}, Pages: 2, hidden: "\xe1"},
			&entry{Source: `kniha\xe1.xml`, Problems: []string{`\xe1`}, Pages: 2, hidden: "\xe1"}},
		{"struct pointers", []*entry{{Source: "ok"}, {Source: "\xe1"}}, []*entry{{Source: "ok"}, {Source: `\xe1`}}},
		{"array", [2]string{"\xe1", "b"}, [2]string{`\xe1`, "b"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in := map[string]any{"key": tc.in, "same": unchanged}
			before, _ := json.Marshal(in)
			got := runmeta.EscapeConfig(in)
			if !reflect.DeepEqual(got["key"], tc.want) {
				t.Errorf("%#v, want %#v", got["key"], tc.want)
			}
			if after, _ := json.Marshal(in); string(after) != string(before) {
				t.Errorf("cfg changed: %s, was %s", after, before)
			}
			if s := got["same"].([]string); &s[0] != &unchanged[0] {
				t.Error("a value without names to escape was copied")
			}
		})
	}
	if got := runmeta.EscapeConfig(map[string]any{"f\xe1": 1}); got[`f\xe1`] != 1 {
		t.Errorf("key not escaped: %v", got)
	}
	if got := runmeta.EscapeConfig(nil); got == nil {
		t.Error("nil configuration: nil, want an empty map")
	}
}
