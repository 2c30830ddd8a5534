package pagexml_test

import (
	"context"
	"fmt"
	"log"

	"archivekit/internal/translate/backend/backendtest"
	"archivekit/internal/translate/pagexml"
)

// Translate a PAGE line from Czech into English in append mode (the
// stand-in backend knows a few words), then take the translation out again.
func ExampleTranslate() {
	page := []byte(`<PcGts xmlns="http://schema.primaresearch.org/PAGE/gts/pagecontent/2019-07-15">
  <Page imageFilename="p.png" imageWidth="9" imageHeight="9">
    <TextRegion id="r1">
      <TextLine id="l1">
        <TextEquiv conf="0.9"><Unicode>hrob a jáma</Unicode></TextEquiv>
      </TextLine>
    </TextRegion>
  </Page>
</PcGts>`)
	res, err := pagexml.Translate(context.Background(), page, pagexml.Options{Backend: &backendtest.Backend{}, Source: "cs", Target: "en"})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("%s\n", res.Output)
	back, err := pagexml.Remove(res.Output)
	fmt.Println(string(back) == string(page), err)
	// Output:
	// <PcGts xmlns="http://schema.primaresearch.org/PAGE/gts/pagecontent/2019-07-15">
	//   <Page imageFilename="p.png" imageWidth="9" imageHeight="9">
	//     <TextRegion id="r1">
	//       <TextLine id="l1">
	//         <TextEquiv conf="0.9"><Unicode>hrob a jáma</Unicode></TextEquiv>
	//         <TextEquiv index="1" comments="en-t-cs-t0-und"><Unicode>grave and pit</Unicode></TextEquiv>
	//       </TextLine>
	//     </TextRegion>
	//   </Page>
	// </PcGts>
	// true <nil>
}
