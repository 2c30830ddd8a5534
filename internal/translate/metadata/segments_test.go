package metadata

import "testing"

func TestFieldTexts(t *testing.T) {
	src := []byte(`<amcr:amcr xmlns:amcr="https://api.aiscr.cz/schema/amcr/2.2/"><amcr:dokument>
<amcr:popis>První popis</amcr:popis><amcr:popis>  </amcr:popis><amcr:popis>Druhý <b>smíšený</b></amcr:popis><amcr:popis>Třetí</amcr:popis>
<amcr:poznamka>Poznámka</amcr:poznamka></amcr:dokument></amcr:amcr>`)
	fields, err := ParseFields("fields.txt", []byte("//arch:amcr/arch:dokument/arch:popis\n//arch:amcr/arch:dokument/arch:poznamka\n//arch:popis\n"))
	if err != nil {
		t.Fatal(err)
	}
	got, err := FieldTexts(src, fields, nil)
	if err != nil {
		t.Fatal(err)
	}
	want := []FieldText{{"//arch:amcr/arch:dokument/arch:popis", 1, "První popis"}, {"//arch:amcr/arch:dokument/arch:popis", 2, "Třetí"},
		{"//arch:amcr/arch:dokument/arch:poznamka", 1, "Poznámka"}}
	if len(got) != len(want) {
		t.Fatalf("fields %+v, want %+v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("field %d: %+v, want %+v", i, got[i], want[i])
		}
	}
}

// TestFieldTextsLatin1: a record in ISO-8859-1 gives its fields as UTF-8
// text, as Translate reads them.
func TestFieldTextsLatin1(t *testing.T) {
	src := []byte("<?xml version=\"1.0\" encoding=\"ISO-8859-1\"?><amcr:amcr xmlns:amcr=\"https://api.aiscr.cz/schema/amcr/2.2/\"><amcr:popis>fen\xeatre</amcr:popis></amcr:amcr>")
	fields, err := ParseFields("fields.txt", []byte("//arch:popis\n"))
	if err != nil {
		t.Fatal(err)
	}
	got, err := FieldTexts(src, fields, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || got[0].Text != "fenêtre" {
		t.Errorf("fields %+v, want one \"fenêtre\"", got)
	}
}
