package backend

import (
	"errors"
	"fmt"
	"testing"
)

// TestSameReplies: one reply for five different texts among the last ten
// calls is refused from the fifth on, and among a backend's first calls,
// while it gave no other reply, from the third; variants of one text,
// short replies, texts copied and replies of other lines do not count, and
// the count forgets calls older than the window.
func TestSameReplies(t *testing.T) {
	const portal = "Please sign in to the network"
	type call struct {
		input, reply string
		refused      bool
	}
	distinct := func(n int, reply string, refusedFrom int) []call {
		var cs []call
		for i := 1; i <= n; i++ {
			cs = append(cs, call{fmt.Sprintf("Zeile %c des Textes", 'A'+i), reply, refusedFrom > 0 && i >= refusedFrom})
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
		{"older calls are forgotten", append(append(append(distinct(1, "a different translation each", 0), distinct(4, portal, 0)...),
			distinct(10, "a different translation each", 0)...), call{"Noch eine Zeile", portal, false})},
	} {
		t.Run(c.name, func(t *testing.T) {
			var s SameReplies
			for i, k := range c.calls {
				if k.reply == "a different translation each" {
					k.reply += fmt.Sprint(i)
				}
				err := s.Check(k.input, k.reply)
				var se *SameReplyError
				if refused := errors.As(err, &se); refused != k.refused || (refused && (!errors.Is(err, ErrSameReply) || !se.Transient() || se.Reply != k.reply)) {
					t.Errorf("call %d (%q → %q): %v, want refused %v", i, k.input, k.reply, err, k.refused)
				}
			}
		})
	}
	var none *SameReplies
	if err := none.Check("x", portal); err != nil {
		t.Errorf("nil: %v", err)
	}
}
