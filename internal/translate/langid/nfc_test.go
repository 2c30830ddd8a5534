package langid

import (
	"testing"

	"golang.org/x/text/unicode/norm"
)

// Text written with combining accents (NFD: "č" as c + U+030C, as some
// OCR engines and macOS file names write it) is detected as the same
// text composed (NFC): the models know only composed letters, and NFD
// Czech went to Croatian or Slovak.
func TestScoresNormalisationForm(t *testing.T) {
	d := Shared()
	for _, s := range []string{
		"Dopis řediteli školy ve Vršovicích",
		"Žádost o přidělení bytu v Dejvicích",
		"Záchranný archeologický výzkum proběhl v obci Vraní během roku 2014.",
		"Přírůstková kniha archivu, svazek čtvrtý",
		"Й. Франко, Зібрання творів, том їх",
	} {
		nfc, nfd := norm.NFC.String(s), norm.NFD.String(s)
		if nfc == nfd {
			t.Fatalf("%q: NFD form is the same text", s)
		}
		lc, cc := d.Detect(nfc)
		ld, cd := d.Detect(nfd)
		if lc != ld || cc != cd {
			t.Errorf("%q: NFC %s (%.2f), NFD %s (%.2f); want the same", s, lc, cc, ld, cd)
		}
	}
}
