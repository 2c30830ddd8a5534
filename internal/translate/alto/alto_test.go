package alto

import (
	"bytes"
	"context"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"archivekit/internal/translate/xmlsplice"
)

var contentRE = regexp.MustCompile(`\b(CONTENT|LANG)="[^"]*"`)

// blankContent empties the CONTENT and LANG values of b: what a Replace-mode
// translation that keeps the source's hyphenation may change.
func blankContent(b []byte) []byte { return contentRE.ReplaceAll(b, []byte(`$1=""`)) }

// pageBlocks parses doc and returns its pages' text blocks.
func pageBlocks(t *testing.T, src []byte) [][]*block {
	t.Helper()
	doc, err := xmlsplice.Parse(src)
	if err != nil {
		t.Fatal(err)
	}
	var pages [][]*block
	doc.Root.Walk(func(n *xmlsplice.Node) bool {
		if n.Name.Local == "Page" {
			pages = append(pages, collectBlocks(n, false))
			return false
		}
		return true
	})
	return pages
}

// writtenTokens returns the words written in a block's holder lines, in order.
func writtenTokens(b *block) []string {
	var out []string
	for _, l := range b.lines {
		for _, a := range l.strings {
			out = append(out, Fields(a.Value)...)
		}
	}
	return out
}

// checkTokens asserts that every pass-1 token of every block lands, in
// order, in exactly one String of the block's lines.
func checkTokens(t *testing.T, in, out []byte, f *fake) {
	t.Helper()
	pin, pout := pageBlocks(t, in), pageBlocks(t, out)
	if len(pin) != len(pout) {
		t.Fatalf("page count %d -> %d", len(pin), len(pout))
	}
	n := 0
	for p := range pin {
		if len(pin[p]) != len(pout[p]) {
			t.Fatalf("page %d: block count %d -> %d", p+1, len(pin[p]), len(pout[p]))
		}
		for i, b := range pin[p] {
			want := Fields(f.answer(b.text))
			got := writtenTokens(pout[p][i])
			if strings.Join(got, "\x00") != strings.Join(want, "\x00") {
				t.Fatalf("page %d block %d: written tokens\n%q\nwant pass-1 tokens\n%q", p+1, i, got, want)
			}
			n += len(want)
		}
	}
	if n == 0 {
		t.Fatal("no tokens checked")
	}
}

func pagesWithText(t *testing.T, src []byte) int {
	n := 0
	for _, p := range pageBlocks(t, src) {
		for _, b := range p {
			if b.text != "" {
				n++
				break
			}
		}
	}
	return n
}

func TestRealSampleReplace(t *testing.T) {
	src := readSample(t)
	textPages := pagesWithText(t, src)
	if textPages != 65 {
		t.Fatalf("sample has %d pages with text, want 65", textPages)
	}
	cases := []struct {
		name      string
		be        *fake
		fast      bool
		calls     int // -1: not fixed
		clean     int
		mismatch  bool
		transport bool
	}{
		{"mt-log answers", mtLogBackend(t), false, 2 * 65, 2 * 65, false, false},
		{"mt-log answers fast-align", mtLogBackend(t), true, 65, 65, false, false},
		{"upper", upper(), false, 2 * 65, 2 * 65, false, false},
		{"word-count changer", wordChanger(), false, 2 * 65, 2 * 65, false, false},
		{"word-count changer fast-align", wordChanger(), true, 65, 65, false, false},
		{"drops a line", dropper(), false, -1, -1, true, false},
		{"transport errors", flaky(), false, -1, -1, false, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			res, err := Translate(context.Background(), src, Options{
				Backend: c.be, Source: "cs", Target: "en", FastAlign: c.fast, File: "MTX201501307_anon", KeepHyphens: true,
			})
			if err != nil {
				t.Fatal(err)
			}
			out := res.Output
			if !bytes.Equal(blankContent(out), blankContent(src)) {
				t.Fatal("output differs from input outside CONTENT values")
			}
			if bytes.Equal(out, src) {
				t.Fatal("nothing translated")
			}
			if !bytes.HasPrefix(out, []byte("\ufeff<?xml version=\"1.0\" encoding=\"UTF-8\" standalone=\"yes\"?>\n")) {
				t.Fatal("BOM or declaration lost")
			}
			checkTokens(t, src, out, c.be)
			st := res.Stats
			if st.Calls != c.be.nCalls() {
				t.Errorf("Stats.Calls %d, backend saw %d", st.Calls, c.be.nCalls())
			}
			if c.calls >= 0 && c.be.nCalls() != c.calls {
				t.Errorf("backend calls = %d, want %d", c.be.nCalls(), c.calls)
			}
			if c.clean >= 0 && st.CleanBatches != c.clean {
				t.Errorf("clean batches = %d, want %d", st.CleanBatches, c.clean)
			}
			if (st.LineCountMismatches > 0) != c.mismatch || (st.TransportErrors > 0) != c.transport {
				t.Errorf("stats %+v", st)
			}
			if c.mismatch || c.transport {
				// Every failed batch was redone item by item.
				if c.be.nCalls() <= 2*65 {
					t.Errorf("no per-item fallback: %d calls", c.be.nCalls())
				}
			}
			if len(res.Log) != 2095 {
				t.Errorf("log rows = %d, want 2095 (one per line)", len(res.Log))
			}
			if !strings.HasPrefix(st.Summary("x"), "x: batch summary: ") {
				t.Errorf("summary %q", st.Summary("x"))
			}
		})
	}
}

// TestGatheringMatchesRealLog checks the gathered line texts, page numbers
// and line numbers against the hosted tool's real log, row by row, and how
// often the alignment reproduces its line targets.
func TestGatheringMatchesRealLog(t *testing.T) {
	src := readSample(t)
	rows := readLog(t)
	be := mtLogBackend(t)
	res, err := Translate(context.Background(), src, Options{Backend: be, Source: "cs", Target: "en", File: "MTX201501307_anon", KeepHyphens: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Log) != len(rows) {
		t.Fatalf("%d log rows, real log has %d", len(res.Log), len(rows))
	}
	same := 0
	for i, r := range rows {
		g := res.Log[i]
		if g.Source != r.src || g.Line != r.line || strconv.Itoa(g.Page) != r.page {
			t.Fatalf("row %d: got (%d, %s, %q), real log (%s, %s, %q)", i+2, g.Page, g.Line, g.Source, r.page, r.line, r.src)
		}
		if g.Target == strings.Join(Fields(r.tgt), " ") {
			same++
		}
	}
	share := float64(same) / float64(len(rows))
	t.Logf("alignment reproduced %d of %d logged line targets (%.1f%%)", same, len(rows), 100*share)
	if share < 0.95 {
		t.Errorf("alignment reproduced only %.1f%% of the logged line targets", 100*share)
	}
}
