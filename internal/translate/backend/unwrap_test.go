package backend

import "testing"

// TestUnwrapReply: the wrappings chat models add around a translation are
// removed; a reply without them, and wrappings the source itself has, are
// kept as they are.
func TestUnwrapReply(t *testing.T) {
	cases := []struct{ name, src, reply, want string }{
		{"plain", "Hrad Kámen.", "Castle Stone.", "Castle Stone."},
		{"fence", "Hrad Kámen.", "```\nCastle Stone.\n```", "Castle Stone."},
		{"fence with language", "Hrad\nKámen", "```text\nCastle\nStone\n```\n", "Castle\nStone"},
		{"fence in the source kept", "```\nkód\n```", "```\ncode\n```", "```\ncode\n```"},
		{"think block", "Hrad", "<think>The user wants English.</think>\n\nCastle", "Castle"},
		{"preamble", "Hrad Kámen.", "Here is the translation:\n\nCastle Stone.", "Castle Stone."},
		{"preamble, two lines", "Hrad\nKámen", "Translation:\n\nCastle\nStone", "Castle\nStone"},
		{"colon line of the text kept", "Poznámka:\n\nhrad", "Note:\n\ncastle", "Note:\n\ncastle"},
		{"preamble only when the lines then match", "Hrad", "Note:\n\nCastle\nStone", "Note:\n\nCastle\nStone"},
		{"quotes", "Hrad Kámen.", `"Castle Stone."`, "Castle Stone."},
		{"typographic quotes", "Hrad", "“Castle”", "Castle"},
		{"quoted source kept", `"Hrad"`, `"Castle"`, `"Castle"`},
		{"Czech-quoted source keeps English quotes", "„Hrad“", "“Castle”", "“Castle”"},
		{"two quotations kept", "A a B", `"A" and "B"`, `"A" and "B"`},
		{"all at once", "Hrad", "<think>x</think>```\n\"Castle\"\n```", "Castle"},
	}
	for _, c := range cases {
		if got := UnwrapReply(c.src, c.reply); got != c.want {
			t.Errorf("%s: UnwrapReply(%q, %q) = %q, want %q", c.name, c.src, c.reply, got, c.want)
		}
	}
}
