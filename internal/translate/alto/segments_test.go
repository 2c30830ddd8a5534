package alto

import "testing"

func TestBlockTexts(t *testing.T) {
	src := []byte(`<?xml version="1.0"?><alto xmlns="http://www.loc.gov/standards/alto/ns-v4#"><Layout>
<Page ID="P1"><PrintSpace>
 <TextBlock ID="TB1"><TextLine><String CONTENT="Archeologický"/><SP/><String CONTENT="výzkum"/></TextLine><TextLine><String CONTENT="v roce 1995"/></TextLine></TextBlock>
 <TextBlock ID="TB2"><TextLine><String CONTENT="  "/></TextLine></TextBlock>
 <ComposedBlock><TextBlock><TextLine><String CONTENT="hrob"/></TextLine></TextBlock></ComposedBlock>
</PrintSpace></Page>
<Page ID="P2"><PrintSpace><TextBlock ID="TB9"><TextLine><String CONTENT="jáma"/></TextLine></TextBlock></PrintSpace></Page>
</Layout></alto>`)
	got, err := BlockTexts(src)
	if err != nil {
		t.Fatal(err)
	}
	want := []BlockText{{1, "TB1", "Archeologický výzkum v roce 1995"}, {1, "p1b3", "hrob"}, {2, "TB9", "jáma"}}
	if len(got) != len(want) {
		t.Fatalf("blocks %+v, want %+v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("block %d: %+v, want %+v", i, got[i], want[i])
		}
	}
	if _, err := BlockTexts([]byte(`<record/>`)); err == nil {
		t.Error("a non-ALTO document gave no error")
	}
}

// TestBlockTextsLatin1: an ALTO page in ISO-8859-1 is recognised and its
// text read as Translate reads it.
func TestBlockTextsLatin1(t *testing.T) {
	src := []byte("<?xml version=\"1.0\" encoding=\"ISO-8859-1\"?><alto><Layout><Page><PrintSpace><TextBlock ID=\"TB1\"><TextLine><String CONTENT=\"fen\xeatre\"/></TextLine></TextBlock></PrintSpace></Page></Layout></alto>")
	if !IsALTO(src) {
		t.Error("a Latin-1 ALTO page is not recognised as ALTO")
	}
	got, err := BlockTexts(src)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || got[0].Text != "fenêtre" {
		t.Errorf("blocks %+v, want one block \"fenêtre\"", got)
	}
}
