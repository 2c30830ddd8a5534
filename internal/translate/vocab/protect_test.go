package vocab

import (
	"context"
	"math/rand"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"

	"archivekit/internal/translate/lemmatizer"
	"archivekit/internal/translate/lemmatizer/lemmatizertest"
	"archivekit/internal/translate/transport"
)

const smallVocab = `source_lemma,target_translation
hrob,grave
jáma,pit
zlomek keramiky,pottery sherd
kostrový hrob,inhumation grave
doba bronzová,Bronze Age
`

func newProtector(t *testing.T, vocabCSV string) (*Protector, *lemmatizertest.Server, *[]string) {
	t.Helper()
	v, err := Parse(strings.NewReader(vocabCSV), "v.csv")
	if err != nil {
		t.Fatal(err)
	}
	srv := lemmatizertest.New(lemmatizertest.CzechLexicon, "czech-pdt-ud-2.15-241121")
	t.Cleanup(srv.Close)
	var mu sync.Mutex
	var warnings []string
	p := &Protector{
		Vocab:      v,
		Lemmatizer: lemmatizer.New(srv.URL, transport.New(transport.Policy{}, nil)),
		Warn:       func(m string) { mu.Lock(); warnings = append(warnings, m); mu.Unlock() },
	}
	return p, srv, &warnings
}

// echo is a backend that returns its input: what comes back is exactly the
// protected text, so restoration is tested on its own.
type echo struct{ seen []string }

func (e *echo) Name() string                                        { return "echo" }
func (e *echo) Close() error                                        { return nil }
func (e *echo) Supports(ctx context.Context, src, tgt string) error { return nil }
func (e *echo) Translate(ctx context.Context, text, src, tgt string) (string, error) {
	e.seen = append(e.seen, text)
	return text, nil
}

var anyCode = regexp.MustCompile(`(QZX|XQZ|ZXQ|QXZ)[` + codeLetters + `]{3}`)

func TestProtectAndRestore(t *testing.T) {
	p, _, warnings := newProtector(t, smallVocab)
	text := "Kostrový hrob v jámě. Zlomek keramiky a hroby,\nDalší HROB u hrobu."
	pr, err := p.Protect(context.Background(), text, "cs")
	if err != nil {
		t.Fatal(err)
	}
	if pr.Phrases != 2 || pr.Words != 3 || !pr.LemmasUsed {
		t.Errorf("phrases %d words %d lemmas %v", pr.Phrases, pr.Words, pr.LemmasUsed)
	}
	if strings.Contains(strings.ToLower(pr.Text), "hrob ") || !strings.Contains(pr.Text, "hroby") {
		t.Errorf("protected text %q: singular hrob must be hidden, plural hroby left to the model", pr.Text)
	}
	if n := len(anyCode.FindAllString(pr.Text, -1)); n != 5 {
		t.Errorf("protected text %q has %d placeholders, want 5", pr.Text, n)
	}
	for _, w := range strings.Fields(pr.Text) {
		w = strings.Trim(w, ".,")
		if anyCode.MatchString(w) && !regexp.MustCompile(`^[A-Z]+$`).MatchString(w) {
			t.Errorf("placeholder %q is not purely alphabetic capitals", w)
		}
	}
	want := "inhumation grave v pit. pottery sherd a hroby,\nDalší grave u grave."
	if got := pr.Restore(pr.Text); got != want {
		t.Errorf("Restore = %q\nwant      %q", got, want)
	}
	if len(*warnings) != 0 {
		t.Errorf("warnings: %v", *warnings)
	}
}

func TestProtectWithoutLemmaModel(t *testing.T) {
	p, srv, warnings := newProtector(t, smallVocab)
	for i := 0; i < 3; i++ {
		pr, err := p.Protect(context.Background(), "Kostrový hrob, hrob a jáma.", "hu")
		if err != nil {
			t.Fatal(err)
		}
		if pr.Phrases != 1 || pr.Words != 0 || pr.LemmasUsed {
			t.Fatalf("phrases %d words %d lemmas %v", pr.Phrases, pr.Words, pr.LemmasUsed)
		}
	}
	if len(*warnings) != 1 || !strings.Contains((*warnings)[0], `"hu"`) {
		t.Errorf("warnings = %q, want exactly one naming hu", *warnings)
	}
	if srv.Requests.Load() != 0 {
		t.Errorf("lemmatiser called %d times for a language without a model", srv.Requests.Load())
	}
}

func TestProtectLemmatiserDown(t *testing.T) {
	p, srv, warnings := newProtector(t, smallVocab)
	srv.Close()
	pr, err := p.Protect(context.Background(), "Kostrový hrob a jáma.", "cs")
	if err != nil {
		t.Fatal(err)
	}
	if pr.Phrases != 1 || pr.Words != 0 || pr.LemmasUsed || len(*warnings) != 1 {
		t.Errorf("phrases %d words %d lemmas %v warnings %q", pr.Phrases, pr.Words, pr.LemmasUsed, *warnings)
	}
}

func TestPhraseMatching(t *testing.T) {
	p, _, _ := newProtector(t, smallVocab)
	p.Lemmatizer = nil
	tests := []struct{ text, want string }{
		{"KOSTROVÝ HROB", "inhumation grave"},
		{"kostrový hrobka", "kostrový hrobka"},                       // not a whole word
		{"nekostrový hrob", "nekostrový hrob"},                       // not a whole word
		{"doba bronzová, doba bronzová.", "Bronze Age, Bronze Age."}, // every occurrence
		{"Doba\tbronzová", "Doba\tbronzová"},                         // only the entry's own spacing
		{"kostrový hrob kostrový hrob", "inhumation grave inhumation grave"},
	}
	for _, tc := range tests {
		pr, err := p.Protect(context.Background(), tc.text, "cs")
		if err != nil {
			t.Fatal(err)
		}
		if got := pr.Restore(pr.Text); got != tc.want {
			t.Errorf("%q -> %q, want %q (protected %q)", tc.text, got, tc.want, pr.Text)
		}
	}
}

func TestRestoreMangled(t *testing.T) {
	p, _, _ := newProtector(t, smallVocab)
	pr, err := p.Protect(context.Background(), "Kostrový hrob v jámě", "cs")
	if err != nil {
		t.Fatal(err)
	}
	codes := anyCode.FindAllString(pr.Text, -1)
	if len(codes) != 2 {
		t.Fatalf("protected %q", pr.Text)
	}
	a, b := codes[0], codes[1]
	spaced := func(s string) string { return strings.Join(strings.Split(s, ""), " ") }
	// title upper-cases the first letter of a code (ASCII, one word).
	title := func(s string) string { return strings.ToUpper(s[:1]) + s[1:] }
	tests := []struct{ name, model, want string }{
		{"exact", a + " in " + b, "inhumation grave in pit"},
		{"lower case", strings.ToLower(a) + " in " + title(strings.ToLower(b)), "inhumation grave in pit"},
		{"spaces inserted", a[:3] + " " + a[3:] + " in " + spaced(b) + ".", "inhumation grave in pit."},
		{"spaces and case", strings.ToLower(spaced(a)) + " in the " + b, "inhumation grave in the pit"},
		{"plural suffix kept", a + "s in " + b, "inhumation graves in pit"},
		{"duplicated", a + " and " + a + " in " + b, "inhumation grave and inhumation grave in pit"},
		{"dropped by the model", "Grave in " + b, "Grave in pit"},
		{"truncated code removed", a[:5] + " in " + b, "in pit"},
		{"altered code removed", a[:4] + "WW in the " + b, "in the pit"},
		{"bare prefix before a line break", "in the " + a[:3] + "\n" + b, "in the\npit"},
		{"split altered code", a[:3] + " " + "BX in " + b, "BX in pit"},
		{"debris keeps the next word", "in the " + a[:3] + " strata " + b, "in the strata pit"},
		{"debris mid-line keeps line breaks", "one\n" + a[:4] + "\n\ntwo " + b, "one\n\n\ntwo pit"},
		{"debris before punctuation", "the " + a[:5] + ", " + b, "the, pit"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := pr.Restore(tc.model); got != tc.want {
				t.Errorf("Restore(%q) = %q, want %q", tc.model, got, tc.want)
			}
		})
	}
}

// mangler is a fake hosted model: it copies text (standing in for a
// translation) but treats placeholders the way a real model sometimes
// does: lower-cases, capitalises, splits them with spaces, adds an English
// plural, duplicates, truncates, alters or drops them.
type mangler struct {
	rng    *rand.Rand
	benign bool // only manglings that restoration must undo
}

func (m *mangler) Name() string                                        { return "mangler" }
func (m *mangler) Close() error                                        { return nil }
func (m *mangler) Supports(ctx context.Context, src, tgt string) error { return nil }
func (m *mangler) Translate(ctx context.Context, text, src, tgt string) (string, error) {
	return anyCode.ReplaceAllStringFunc(text, func(c string) string {
		k := m.rng.Intn(8)
		if m.benign && (k == 4 || k == 5) {
			k = 6
		}
		switch k {
		case 0:
			return strings.ToLower(c)
		case 1:
			return c[:1] + strings.ToLower(c[1:])
		case 2:
			cut := 1 + m.rng.Intn(len(c)-1)
			return c[:cut] + strings.Repeat(" ", 1+m.rng.Intn(2)) + c[cut:]
		case 3:
			return strings.Join(strings.Split(c, ""), " ")
		case 4:
			return c[:1+m.rng.Intn(len(c)-1)]
		case 5:
			return c[:3] + "WQ"
		case 6:
			return c + " " + c
		default:
			return c
		}
	}), nil
}

// TestNoDebrisProperty runs the real vocabulary over the real log texts
// through the mangling model: no placeholder debris ever reaches the
// output, line breaks survive, and with the manglings restoration must
// undo, every protected term comes back as the vocabulary's English.
func TestNoDebrisProperty(t *testing.T) {
	v, err := Load(filepath.Join(sharedData(t), "vocabulary.csv"))
	if err != nil {
		t.Fatal(err)
	}
	srv := lemmatizertest.New(lemmatizertest.CzechLexicon, "czech-pdt-ud-2.15-241121")
	defer srv.Close()
	p := &Protector{Vocab: v, Lemmatizer: lemmatizer.New(srv.URL, transport.New(transport.Policy{}, nil))}
	sources := mtLogSources(t)
	// A few multi-line texts too.
	for i := 0; i+3 < len(sources) && i < 300; i += 3 {
		sources = append(sources, sources[i]+"\n"+sources[i+1]+"\n\n"+sources[i+2])
	}
	debris := regexp.MustCompile(`(?i)(q[ \t]*z[ \t]*x|x[ \t]*q[ \t]*z|z[ \t]*x[ \t]*q|q[ \t]*x[ \t]*z)`)
	protectedTotal := 0
	for _, benign := range []bool{true, false} {
		m := &mangler{rng: rand.New(rand.NewSource(7)), benign: benign}
		for _, src := range sources {
			if debris.MatchString(src) {
				continue
			}
			pr, err := p.Protect(context.Background(), src, "cs")
			if err != nil {
				t.Fatal(err)
			}
			protectedTotal += pr.Count()
			out, err := m.Translate(context.Background(), pr.Text, "cs", "en")
			if err != nil {
				t.Fatal(err)
			}
			got := pr.Restore(out)
			if debris.MatchString(got) {
				t.Fatalf("debris in output\nsource %q\nmodel  %q\noutput %q", src, out, got)
			}
			if strings.Count(got, "\n") != strings.Count(src, "\n") {
				t.Fatalf("line breaks changed\nsource %q\noutput %q", src, got)
			}
			if benign {
				for _, c := range pr.codes {
					if !strings.Contains(got, c.target) {
						t.Fatalf("term %q missing\nmodel  %q\noutput %q", c.target, out, got)
					}
				}
			}
		}
	}
	if protectedTotal < 100 {
		t.Errorf("only %d terms protected over the log texts; the property was barely exercised", protectedTotal)
	}
	t.Logf("%d protected occurrences over %d texts (twice)", protectedTotal/2, len(sources))
}

func FuzzRestoreNoDebris(f *testing.F) {
	f.Add("Kostrový hrob v jámě.", "QZXBCD in QZXBCF", 3)
	f.Add("kostrový hrob\nhrob", "q z x b\n", 1)
	v, _ := Parse(strings.NewReader(smallVocab), "v.csv")
	p := &Protector{Vocab: v}
	debris := regexp.MustCompile(`(?i)q[ \t]*z[ \t]*x`)
	f.Fuzz(func(t *testing.T, src, model string, cut int) {
		if debris.MatchString(src) {
			t.Skip()
		}
		pr, err := p.Protect(context.Background(), src, "cs")
		if err != nil || pr.prefix != "QZX" || pr.Count() == 0 {
			t.Skip()
		}
		got := pr.Restore(model + pr.Text[:max(0, min(cut, len(pr.Text)))])
		if debris.MatchString(got) {
			t.Fatalf("debris in %q", got)
		}
	})
}

func TestProtectorTranslate(t *testing.T) {
	p, _, _ := newProtector(t, smallVocab)
	e := &echo{}
	out, n, err := p.Translate(context.Background(), e, "Hrob v jámě.", "cs", "en")
	if err != nil || out != "grave v pit." || n != 2 {
		t.Fatalf("Translate = %q, %d, %v", out, n, err)
	}
	if strings.Contains(e.seen[0], "jámě") || !anyCode.MatchString(e.seen[0]) {
		t.Errorf("backend saw %q", e.seen[0])
	}
}

func TestPrefixAvoidsTextContent(t *testing.T) {
	p, _, _ := newProtector(t, smallVocab)
	p.Lemmatizer = nil
	pr, err := p.Protect(context.Background(), "Kód QZX-12 a kostrový hrob", "cs")
	if err != nil {
		t.Fatal(err)
	}
	if pr.prefix == "QZX" {
		t.Fatal("prefix QZX chosen although the text contains it")
	}
	if got := pr.Restore(pr.Text); got != "Kód QZX-12 a inhumation grave" {
		t.Errorf("Restore = %q", got)
	}
}

func TestLost(t *testing.T) {
	p, _, _ := newProtector(t, smallVocab)
	pr, err := p.Protect(context.Background(), "zlomek keramiky a kostrový hrob", "cs")
	if err != nil || pr.Count() != 2 {
		t.Fatalf("%+v %v", pr, err)
	}
	codes := regexp.MustCompile(`QZX[A-Z]+|[A-Z]{3}[A-Z]{3}`).FindAllString(pr.Text, -1)
	if len(codes) != 2 {
		t.Fatalf("protected text %q", pr.Text)
	}
	for _, tt := range []struct {
		out  string
		lost int
	}{
		{codes[0] + " and " + codes[1], 0},
		{strings.ToLower(codes[0]) + " and " + codes[1][:3] + " " + codes[1][3:], 0},
		{codes[0] + " and something", 1},
		{"nothing at all", 2},
	} {
		if got := pr.Lost(tt.out); got != tt.lost {
			t.Errorf("Lost(%q) = %d, want %d", tt.out, got, tt.lost)
		}
	}
}

// BenchmarkRestore times putting terms back into one translated segment,
// which the ct2 and hosted backends do once per segment.
func BenchmarkRestore(b *testing.B) {
	v, err := Parse(strings.NewReader(smallVocab), "v.csv")
	if err != nil {
		b.Fatal(err)
	}
	p := &Protector{Vocab: v}
	pr, err := p.Protect(context.Background(), "Kostrový hrob, jáma a zlomek keramiky z doby bronzové.", "cs")
	if err != nil {
		b.Fatal(err)
	}
	translated := "An " + strings.ToLower(pr.Text) + " was found."
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		pr.Restore(translated)
	}
}
