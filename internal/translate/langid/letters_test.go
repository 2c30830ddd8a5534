package langid

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// Text in a language outside the supported set that writes letters none
// of the supported languages of its script uses is named as that
// language (and so left untranslated), not scored as the supported
// language it looks most like; text of the supported languages, with or
// without a foreign name in it, keeps its language.
func TestForeignLetters(t *testing.T) {
	d := Shared()
	for _, c := range []struct{ want, text string }{
		{"tr", "Bu kitabın sayfaları yıllar içinde sararmış ve bazıları yırtılmıştır."},
		{"az", "Bu kitab Bakıda çap olunub və milli kitabxanada saxlanılır."},
		{"is", "Þetta handrit var skrifað á sautjándu öld og það er varðveitt í safninu."},
		{"eo", "Ĉi tiu libro estis presita en Varsovio kaj troviĝas en la nacia biblioteko."},
		{"vi", "Cuốn sách này được in ở Hà Nội và được lưu giữ trong thư viện quốc gia."},
		{"sr", "Ова књига је штампана у Београду и чува се у народној библиотеци."},
		{"be", "Гэтая кніга была надрукавана ў Мінску і захоўваецца ў нацыянальнай бібліятэцы."},
		{"kk", "Бұл кітап Алматыда басылып, ұлттық кітапханада сақталады."},
		{"mr", "हे पुस्तक मुंबईत छापले गेले आणि ते शाळेजवळच्या ग्रंथालयात ठेवले आहे."},
		// Supported languages stay themselves: their own letters, and a
		// foreign name (one letter in more than 200) in a long text.
		{"uk", "У музеї щорічно експонуються десятки реліквійних виставок, які постійно оновлюються."},
		{"ru", "Эта книга была напечатана в Москве и хранится в национальной библиотеке."},
		{"bg", "Тази книга е отпечатана в София и се пази в националната библиотека."},
		{"ro", "Această carte a fost tipărită la București și este păstrată în biblioteca națională."},
		{"hr", "Ova knjiga tiskana je u Zagrebu i čuva se u nacionalnoj knjižnici, a đaci je rado čitaju."},
		{"hi", "यह पुस्तक दिल्ली में छपी थी और राष्ट्रीय पुस्तकालय में रखी गई है।"},
		{"cs", "Kniha byla vytištěna v Praze roku 1923 a dnes je uložena v národní knihovně; její první " +
			"vydání připravil nakladatel Kırklareli spolu s redaktory, kteří doplnili obrazovou přílohu, " +
			"rejstřík osob a míst, seznam zkratek a obsáhlý komentář k jednotlivým kapitolám díla."},
	} {
		got, conf := d.Detect(c.text)
		if got != c.want {
			t.Errorf("Detect(%.40q…) = %s (%.2f), want %s", c.text, got, conf, c.want)
		}
	}
	for _, c := range ForeignByLetters() {
		if slices.Contains(Languages(), c) || !slices.Contains(Unsupported(), c) {
			t.Errorf("%s: a supported language, or not listed by Unsupported", c)
		}
	}
}

func TestScriptWithForeignLetters(t *testing.T) {
	for _, c := range []struct{ text, want string }{
		{"ıiii", "Latin"},
		{"kırklareli", "Latin"},
		{"bez cizích písmen", ""},
		{"књига", "Cyrillic"},
		{"книга", ""},
		{"शाळा", "Devanagari"},
		{"", ""},
	} {
		if got := scriptWithForeignLetters(c.text); got != c.want {
			t.Errorf("scriptWithForeignLetters(%q) = %q, want %q", c.text, got, c.want)
		}
	}
	long := "ı"
	for len([]rune(long)) < 250 {
		long += "a"
	}
	if got := scriptWithForeignLetters(long); got != "" {
		t.Errorf("one foreign letter in 250: %q, want none", got)
	}
}

// TestForeignLettersMeasure measures the letter rule on lingua-rs' test
// sentences (github.com/pemistahl/lingua-rs, language-models/<code>/
// testdata/sentences.txt; not shipped here): set LINGUA_TESTDATA to that
// language-models folder. For each language it logs the share of its
// first 1,000 sentences the letter rule names as a language outside the
// supported set, and fails when it names any sentence of a supported
// language so.
func TestForeignLettersMeasure(t *testing.T) {
	root := os.Getenv("LINGUA_TESTDATA")
	if root == "" {
		t.Skip("LINGUA_TESTDATA (lingua-rs' language-models folder) not set")
	}
	d := Shared()
	for _, c := range append(Languages(), ForeignByLetters()...) {
		data, err := os.ReadFile(filepath.Join(root, c, "testdata", "sentences.txt"))
		if err != nil {
			t.Fatal(err)
		}
		n, named := 0, 0
		for _, s := range strings.Split(string(data), "\n") {
			if s = strings.TrimSpace(s); s == "" || n == 1000 {
				continue
			}
			n++
			if script := scriptWithForeignLetters(strings.ToLower(s)); script != "" {
				if sc := scores(d.foreign[script], strings.ToLower(s)); len(sc) > 0 && !supported(sc[0].Lang) {
					named++
				}
			}
		}
		t.Logf("%s: %d of %d sentences named outside the supported set (%.1f %%)", c, named, n, 100*float64(named)/float64(n))
		if supported(c) && named > 0 {
			t.Errorf("%s: %d sentences of a supported language named outside the set", c, named)
		}
	}
}
