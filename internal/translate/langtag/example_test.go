package langtag_test

import (
	"fmt"

	"archivekit/internal/translate/langtag"
)

// The tag of English machine-translated from Czech, and what it says.
func ExampleMT() {
	tag, err := langtag.MT("en", "cs")
	fmt.Println(tag, err)
	t, _ := langtag.Parse(tag)
	fmt.Println(t.Lang, t.Source, t.MachineTranslated())
	// Output:
	// en-t-cs-t0-und <nil>
	// en cs true
}
