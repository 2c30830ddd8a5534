package glossary

import (
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"

	"archivekit/internal/pageclass/modelmeta"
)

// The glossary names every category once, in canonical order, and
// docs/glossary.md's table says the same words.
func TestEntriesMatchCategoriesAndDocument(t *testing.T) {
	var names []string
	for _, e := range Entries {
		names = append(names, e.Category)
		if e.Description == "" || e.Example == "" || !strings.HasPrefix(e.Example, e.Category+"/") {
			t.Errorf("entry %+v: want a description and an example page in its category's folder", e)
		}
	}
	if !slices.Equal(names, modelmeta.Categories) {
		t.Fatalf("glossary categories %v, want %v", names, modelmeta.Categories)
	}
	doc, err := os.ReadFile("../../../" + Document)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range Entries {
		row := fmt.Sprintf("| %s | %s | `%s` (%s) |", e.Category, e.Description, e.Example, e.ExampleNote)
		if !strings.Contains(string(doc), row+"\n") {
			t.Errorf("%s has no row %q", Document, row)
		}
	}
	if Describe("TEXT_P") != "printed running text only" || Describe("NOPE") != "" {
		t.Errorf("Describe: %q, %q", Describe("TEXT_P"), Describe("NOPE"))
	}
}
