package translator

import (
	"bytes"
	"reflect"
	"strings"
	"testing"

	"archivekit/internal/translate/alto"
	"archivekit/internal/translate/backend"
)

// ReadLog gives back the rows WriteLog wrote.
func TestReadLogRoundTrip(t *testing.T) {
	rows := []alto.LogRow{
		{File: "box/d.xml", Page: 2, Line: "l1", Source: "a, \"b\"", Target: "A\nB", Status: backend.OK, Lang: "de", LangSource: "detected"},
		{File: "d", Page: 1, Line: "l2", Source: "b", Target: "B", Status: backend.OK, Approx: true, Score: -1.25, HasScore: true, Lang: "cs", LangSource: "element"},
		{File: "d", Line: "//amcr:nazev", Source: "c", Status: backend.InTarget, Lang: "en", LangSource: "given"},
		{File: "d", Line: "//g", Source: "g", Status: backend.MixedContent},
	}
	var buf bytes.Buffer
	if err := WriteLog(&buf, rows, "auto", "en"); err != nil {
		t.Fatal(err)
	}
	got, err := ReadLog(&buf)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, rows) {
		t.Errorf("read back\n%+v\nwant\n%+v", got, rows)
	}
}

// A log of an earlier version (the specification's six columns) is read;
// what is not a translation log, or a row cut short, is an error naming it.
func TestReadLogShapes(t *testing.T) {
	old := "file,page_num,line_num,text_cs,text_en,status\nd,1,l1,a,A,ok\n"
	got, err := ReadLog(strings.NewReader(old))
	if err != nil || len(got) != 1 || got[0].Line != "l1" || got[0].Target != "A" || got[0].Lang != "" {
		t.Errorf("six-column log: %+v, %v", got, err)
	}
	for _, tc := range []struct{ in, want string }{
		{"", "EOF"},
		{"a,b,c\n", "is not a translation log's"},
		{"file,page_num,line_num,text_cs,text_en,status\nd,1,l1,a,A\n", "line 2 has 5 columns"},
		{"file,page_num,line_num,text_cs,text_en,status\nd,x,l1,a,A,ok\n", `page_num "x"`},
	} {
		if _, err := ReadLog(strings.NewReader(tc.in)); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("ReadLog(%q) = %v, want an error with %q", tc.in, err, tc.want)
		}
	}
}
