package alto

import (
	"testing"

	"golang.org/x/text/unicode/norm"

	"archivekit/internal/translate/langid"
)

// A unit's source language does not depend on the normalisation form of
// its text: Czech written with combining accents (NFD) is chosen as the
// same text composed (NFC) is, by the length rule (IsShort, Long) and by
// detection, in a Czech, a Slovak or no document.
func TestChooseNormalisationForm(t *testing.T) {
	d := langid.Shared()
	texts := []string{
		"Dopis řediteli školy ve Vršovicích",
		"Přírůstková kniha archivu, svazek čtvrtý",
		"Žádost o přidělení bytu v Dejvicích",
		"Úřad řídí věc",
		"Záchranný archeologický výzkum proběhl v obci Vraní během roku 2014.",
	}
	for _, s := range texts {
		nfc, nfd := norm.NFC.String(s), norm.NFD.String(s)
		if IsShort(nfc) != IsShort(nfd) || DefaultLangOrder().Long(nfc) != DefaultLangOrder().Long(nfd) {
			t.Errorf("%q: short %v, long %v in NFC; short %v, long %v in NFD", s,
				IsShort(nfc), DefaultLangOrder().Long(nfc), IsShort(nfd), DefaultLangOrder().Long(nfd))
		}
		for _, doc := range []string{"", "cs", "sk"} {
			lc, fc := DefaultLangOrder().Choose(d, nfc, "", doc)
			ld, fd := DefaultLangOrder().Choose(d, nfd, "", doc)
			if lc != ld || fc != fd {
				t.Errorf("%q, document %q: NFC %s (%s), NFD %s (%s); want the same", s, doc, lc, fc, ld, fd)
			}
		}
	}
}
