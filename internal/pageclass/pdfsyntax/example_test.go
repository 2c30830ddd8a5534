package pdfsyntax_test

import (
	"fmt"
	"strings"

	"archivekit/internal/pageclass/pdfsyntax"
)

// Example reads a trailer dictionary and the integer after startxref.
func Example() {
	data := []byte("trailer\n<< /Size 7 /Root 1 0 R /ID [<0A1B> (id)] % a comment\n>>\nstartxref\n441\n%%EOF\n")
	p := pdfsyntax.NewParser(data, len("trailer"))
	trailer := p.Value().(pdfsyntax.Dict)
	fmt.Println(trailer["Size"], trailer["Root"], trailer["ID"])
	p = pdfsyntax.NewParser(data, strings.Index(string(data), "startxref")+len("startxref"))
	offset, ok := p.Int()
	fmt.Println(offset, ok)
	// Output:
	// 7 {1 0} [[10 27] [105 100]]
	// 441 true
}
