package alto

import (
	"testing"
	"unicode"

	"archivekit/internal/translate/langid"
	"archivekit/internal/translate/xmlsplice"
)

func hasLetter(s string) bool {
	for _, r := range s {
		if unicode.IsLetter(r) {
			return true
		}
	}
	return false
}

// TestArchiveLanguageAccuracy measures block-level identification on the
// shared 79-page Czech ALTO (every block with a letter in it is Czech
// text, codes and captions included): per block alone, as the original
// tool does, and with the page and document priors of detect.go.
// Run: go test -v -run ArchiveLanguageAccuracy ./internal/translate/alto
func TestArchiveLanguageAccuracy(t *testing.T) {
	doc, err := xmlsplice.Parse(readSample(t))
	if err != nil {
		t.Fatal(err)
	}
	d := langid.Shared()
	pages := pagesOf(doc)
	pageLang := pageLanguages(d, pages, true, DefaultMinConfidence, "")
	type tally struct{ n, alone, prior, short, longN, longAlone, longPrior int }
	var c tally
	wrongAlone, wrongPrior := map[string]int{}, map[string]int{}
	for i, p := range pages {
		for _, b := range collectBlocks(p, true) {
			if !hasLetter(b.text) {
				continue
			}
			c.n++
			alone := DetectLang(d, b.text, DefaultMinConfidence)
			prior := DetectWithPrior(d, b.text, pageLang[i], DefaultMinConfidence)
			short := IsShort(b.text)
			if short {
				c.short++
			} else {
				c.longN++
			}
			if alone == "cs" {
				c.alone++
				if !short {
					c.longAlone++
				}
			} else {
				wrongAlone[alone]++
			}
			if prior == "cs" {
				c.prior++
				if !short {
					c.longPrior++
				}
			} else {
				wrongPrior[prior]++
				t.Logf("page %d: %q identified as %s", i+1, b.text, prior)
			}
		}
	}
	pct := func(a, b int) float64 { return 100 * float64(a) / float64(max(b, 1)) }
	t.Logf("Czech blocks with letters: %d (%d short, %d long)", c.n, c.short, c.longN)
	t.Logf("per block alone:   %d/%d = %.1f%% Czech (long blocks %d/%d = %.1f%%); others %v", c.alone, c.n, pct(c.alone, c.n), c.longAlone, c.longN, pct(c.longAlone, c.longN), wrongAlone)
	t.Logf("with page prior:   %d/%d = %.1f%% Czech (long blocks %d/%d = %.1f%%); others %v", c.prior, c.n, pct(c.prior, c.n), c.longPrior, c.longN, pct(c.longPrior, c.longN), wrongPrior)
	if pct(c.prior, c.n) < 98 {
		t.Errorf("Czech blocks identified as Czech: %.1f%%, want >= 98%%", pct(c.prior, c.n))
	}
}

// TestOtherLanguagesRecognised: on a Czech page, a German, a Norwegian
// and a Latin paragraph keep their own language (the last two are
// reported unsupported, never forced to German or Czech), and number-only
// or short blocks inherit the page's language.
func TestOtherLanguagesRecognised(t *testing.T) {
	d := langid.Shared()
	for _, c := range []struct{ text, prior, want string }{
		{"Die Grube war mit dunkler Erde verfüllt und enthielt zahlreiche Scherben der späten Bronzezeit.", "cs", "de"},
		{"Utgravningen avdekket rester av et gårdsanlegg fra vikingtiden, og funnene ble sendt til museet for videre undersøkelser.", "cs", "nb"},
		{"Anno domini millesimo quingentesimo ecclesia haec a fundamentis aedificata et consecrata est in honorem beatae virginis.", "cs", "la"},
		{"Při záchranném výzkumu byla odkryta sídlištní jáma s keramikou a zvířecími kostmi.", "cs", "cs"},
		{"628487.85 1115329.73", "cs", "cs"},
		{"PLOT DUM", "cs", "cs"},
		{"řezy 9,10,11,12, negativ S3", "cs", "cs"},
	} {
		if got := DetectWithPrior(d, c.text, c.prior, DefaultMinConfidence); got != c.want {
			t.Errorf("%q: %s, want %s", c.text, got, c.want)
		}
	}
}
