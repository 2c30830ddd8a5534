package backend

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
)

// blockPage is n calls of different texts answered by a proxy's block page
// that carries a reference of its own each time (decimal and hexadecimal
// numbers, as Akamai's "Reference #18.5f3c1302.1732907919.2b4c8d1"), refused from call
// refusedFrom (0: none).
func blockPage(n, refusedFrom int) []sameCallCase {
	var cs []sameCallCase
	for i := 1; i <= n; i++ {
		cs = append(cs, sameCallCase{fmt.Sprintf("Zeile %c des Textes", 'A'+i),
			fmt.Sprintf("Access denied. Reference #18.%x.%d.%x", 0x5f3c1302+i*104729, 1732900000+i*7919, 0x2b4c8d1*i), refusedFrom > 0 && i >= refusedFrom})
	}
	return cs
}

// numbered is n calls of a catalogue's numbered entries, each translated
// with its number: replies that differ only in their digits, for inputs
// that do too, are never refused.
func numbered(n int) []sameCallCase {
	var cs []sameCallCase
	for i := 1; i <= n; i++ {
		cs = append(cs, sameCallCase{fmt.Sprintf("Inventární číslo %d", 1200+i), fmt.Sprintf("Inventory number %d", 1200+i), false})
	}
	return cs
}

// codes is n calls of different texts each answered with other codes of
// letters and digits alone (no word without a digit): never refused.
func codes(n int) []sameCallCase {
	var cs []sameCallCase
	for i := 1; i <= n; i++ {
		cs = append(cs, sameCallCase{fmt.Sprintf("Signatur %c des Bestandes", 'A'+i),
			fmt.Sprintf("ABC%dDEF%d GHI%dJKL%d", i, i+1, i+2, i+3), false})
	}
	return cs
}

// sameCallCase is a call of TestSameReplies: its input and reply, and
// whether the reply is refused.
type sameCallCase = struct {
	input, reply string
	refused      bool
}

// TestSameReplies: one reply for five different texts among the last ten
// calls is refused from the fifth on, and among a backend's first calls,
// while it gave no other reply, from the third, and so is one that differs
// each time only in its number (a block page's reference), but not a
// numbered catalogue's entries, translated with their numbers; a refused reply stays
// refused (an item run again on such a service) until another passes; variants of one text,
// short replies, texts copied and replies of other lines do not count, and
// the count forgets calls older than the window.
func TestSameReplies(t *testing.T) {
	const portal = "Please sign in to the network"
	type call = sameCallCase
	distinct := func(n int, reply string, refusedFrom int) []call {
		var cs []call
		for i := 1; i <= n; i++ {
			cs = append(cs, call{fmt.Sprintf("Zeile %c des Textes", 'A'+i), reply, refusedFrom > 0 && i >= refusedFrom})
		}
		return cs
	}
	again := func(n int, c call) []call { // a call made n times (an item run again)
		var cs []call
		for range n {
			cs = append(cs, c)
		}
		return cs
	}
	for _, c := range []struct {
		name  string
		calls []call
	}{
		{"a backend's first calls: three texts, one reply, refused from the third", distinct(4, portal, 3)},
		{"later: four texts, one reply", append(distinct(2, "a different translation each", 0), distinct(4, portal, 0)...)},
		{"later: five texts, one reply, refused from the fifth", append(distinct(2, "a different translation each", 0), distinct(7, portal, 5)...)},
		{"variants of one text count once", []call{
			{"neurčeno", "not determined here", false}, {"Neurčeno.", "not determined here", false},
			{"NEURČENO", "not determined here", false}, {" neurčeno ", "not determined here", false},
			{"neurčeno!", "not determined here", false}, {"(neurčeno)", "not determined here", false}}},
		{"short replies do not count", distinct(8, "Page", 0)},
		{"a text copied does not count", []call{
			{"Johann Sebastian Bach", "Johann Sebastian Bach", false}, {"Johann Sebastian Bach.", "Johann Sebastian Bach", false}}},
		{"a reply of other lines does not count", []call{
			{"a\nb", portal, false}, {"c\nd", portal, false}, {"e\nf", portal, false}, {"g\nh", portal, false}, {"i\nj", portal, false}}},
		{"a refused reply stays refused past the first calls until another passes", append(append(append(distinct(3, portal, 3),
			again(9, distinct(3, portal, 1)[2])...), distinct(1, "a different translation each", 0)...), distinct(3, portal, 0)[2])},
		{"a notice with a number of its own each time: from the third among the first calls", blockPage(4, 3)},
		{"later, from the fifth", append(distinct(2, "a different translation each", 0), blockPage(7, 5)...)},
		{"a numbered catalogue is not one reply", numbered(8)},
		{"replies of codes alone are told apart", codes(8)},
		{"older calls are forgotten", append(append(append(distinct(1, "a different translation each", 0), distinct(4, portal, 0)...),
			distinct(10, "a different translation each", 0)...), call{"Noch eine Zeile", portal, false})},
	} {
		t.Run(c.name, func(t *testing.T) {
			var s SameReplies
			for i, k := range c.calls {
				if k.reply == "a different translation each" {
					k.reply += " " + strings.Repeat("x", i+1) // replies that differ in their words
				}
				err := s.Check(context.Background(), k.input, k.reply)
				var se *SameReplyError
				if refused := errors.As(err, &se); refused != k.refused || (refused && (!errors.Is(err, ErrSameReply) || !se.Transient() || se.Reply != k.reply)) {
					t.Errorf("call %d (%q → %q): %v, want refused %v", i, k.input, k.reply, err, k.refused)
				}
			}
		})
	}
	var none *SameReplies
	if err := none.Check(context.Background(), "x", portal); err != nil {
		t.Errorf("nil: %v", err)
	}
}

// TestSameRepliesItems: a refusal names the items whose calls got the
// refused reply, in the order of their first call, each once, and not the
// items whose calls got other replies; it counts the calls of no item.
func TestSameRepliesItems(t *testing.T) {
	const portal = "Please sign in to the network"
	var s SameReplies
	calls := []struct{ item, input, reply string }{
		{"a.xml", "Erste Zeile des Textes", "First line of the text"},
		{"b.xml", "Zweite Zeile des Textes", portal},
		{"b.xml", "Dritte Zeile des Textes", portal},
		{"c.xml", "Vierte Zeile des Textes", "Fourth line of the text"},
		{"", "Fünfte Zeile des Textes", portal}, // a call of no item
		{"d.xml", "Sechste Zeile des Textes", portal},
		{"e.xml", "Siebte Zeile des Textes", portal},
	}
	var err error
	for i, c := range calls {
		if err = s.Check(ForItem(context.Background(), c.item), c.input, c.reply); err != nil && i < len(calls)-1 {
			t.Fatalf("call %d refused: %v", i, err)
		}
	}
	var se *SameReplyError
	if !errors.As(err, &se) || fmt.Sprint(se.Items) != "[b.xml d.xml e.xml]" || se.Unnamed != 1 {
		t.Fatalf("last call: %v (%+v), want refused naming [b.xml d.xml e.xml] and one call of no item", err, se)
	}
}
