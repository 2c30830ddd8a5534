package translator_test

import (
	"context"
	"fmt"
	"log"

	"archivekit/internal/translate/mtapi"
	"archivekit/internal/translate/translator"
	"archivekit/internal/translate/translator/translatortest"
)

// Translate one small ALTO page from Czech into English through a local
// stand-in of the translation API (translatortest, which knows a few
// words and upper-cases the rest).
func ExampleTranslate() {
	api := translatortest.New(translatortest.Config{})
	defer api.Close()
	be := mtapi.New(mtapi.Config{BaseURL: api.URL})
	defer be.Close()

	page := []byte(`<?xml version="1.0" encoding="UTF-8"?>
<alto xmlns="http://www.loc.gov/standards/alto/ns-v4#"><Layout><Page ID="p1"><PrintSpace>
<TextBlock ID="b1"><TextLine ID="l1"><String CONTENT="Záchranný"/><SP/><String CONTENT="výzkum"/></TextLine>
<TextLine ID="l2"><String CONTENT="hrob"/><SP/><String CONTENT="a"/><SP/><String CONTENT="jáma"/></TextLine></TextBlock>
</PrintSpace></Page></Layout></alto>`)
	out, err := translator.Translate(context.Background(), page, "page.alto.xml", translator.Options{Backend: be, Source: "cs"})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(out.Name)
	fmt.Printf("%s\n", out.Data)
	fmt.Println(out.Summary)
	// Output:
	// page_en.alto.xml
	// <?xml version="1.0" encoding="UTF-8"?>
	// <alto xmlns="http://www.loc.gov/standards/alto/ns-v4#"><Layout><Page ID="p1"><PrintSpace>
	// <TextBlock ID="b1"><TextLine ID="l1"><String CONTENT="rescue"/><SP/><String CONTENT="research"/></TextLine>
	// <TextLine ID="l2"><String CONTENT="grave"/><SP/><String CONTENT="and"/><SP/><String CONTENT="pit"/></TextLine></TextBlock>
	// </PrintSpace></Page></Layout></alto>
	// page: batch summary: 2 clean batches, 0 line-count mismatches, 0 transport errors, 0 guard rejections (2 backend calls, 1 pages, 1 blocks, 2 lines)
}
