package main

import (
	"bytes"
	"encoding/xml"
	"io"
	"os"
	"strings"
	"testing"

	"archivekit/internal/testenv"
)

// TestSplitALTO: the jobs step's pages are the sample's 65 pages with
// text (14 of its 79 have none), each a well-formed ALTO document with one
// Page in its Layout and the file's head, and together they hold every
// String of the sample once.
func TestSplitALTO(t *testing.T) {
	data, err := os.ReadFile(testenv.Data(t, "translator/alto/MTX201501307_anon.alto.xml"))
	if err != nil {
		t.Fatal(err)
	}
	pages, err := splitALTO(data, "MTX201501307")
	if err != nil {
		t.Fatal(err)
	}
	if len(pages) != 65 {
		t.Fatalf("%d pages, want 65", len(pages))
	}
	total := 0
	for i, p := range pages {
		counts := elements(t, p.name, p.data)
		if counts["alto"] != 1 || counts["Layout"] != 1 || counts["Page"] != 1 || counts["Description"] != 1 || counts["TextBlock"] == 0 {
			t.Errorf("%s: %v, want one alto, Description, Layout and Page, and text", p.name, counts)
		}
		if i == 0 && p.name != "MTX201501307_p01.alto.xml" {
			t.Errorf("first page named %s", p.name)
		}
		total += counts["String"]
	}
	if want := elements(t, "sample", data)["String"]; total != want || want == 0 {
		t.Errorf("the pages hold %d String elements, the sample %d", total, want)
	}
	if pages[20].name != "MTX201501307_p22.alto.xml" {
		t.Errorf("page 21 has no text; the 21st document is %s, want page 22", pages[20].name)
	}
	if _, err := splitALTO([]byte("<alto><Layout><Page ID=\"P1\"></Page></Layout></alto>"), "x"); err == nil || !strings.Contains(err.Error(), "no Page") {
		t.Errorf("a Layout without pages with text: %v", err)
	}
}

// elements counts the elements of an XML document by local name; it fails
// the test when the document is not well-formed.
func elements(t *testing.T, name string, data []byte) map[string]int {
	t.Helper()
	counts := map[string]int{}
	dec := xml.NewDecoder(bytes.NewReader(data))
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			return counts
		}
		if err != nil {
			t.Fatalf("%s: not well-formed: %v", name, err)
		}
		if se, ok := tok.(xml.StartElement); ok {
			counts[se.Name.Local]++
		}
	}
}
