package backend

import (
	"regexp"
	"strings"
)

var (
	thinkRE = regexp.MustCompile(`(?is)^\s*<think>.*?</think>\s*`)
	fenceRE = regexp.MustCompile("^```[\\w.+-]*$")
)

// UnwrapReply removes the wrapping that chat-tuned language models put around
// a translation although told to reply with the translation only, so that it
// is never written into a document as translated text:
//
//   - a leading <think>…</think> reasoning block;
//   - a Markdown code fence around the whole reply (```, ```text, …);
//   - a preamble line ending in a colon followed by a blank line ("Here is
//     the translation:"), when what follows has exactly the source's number
//     of lines;
//   - one pair of double quotes ("…", “…”, „…“) around the whole reply with
//     no such quote inside.
//
// Each is removed only when source itself does not have it (a source that
// begins with ``` keeps the fences of its reply, a source in quotation marks
// of any of those kinds keeps its reply's quotes, and so on), so a faithful
// translation of such a text is left as it is. The result is trimmed of
// surrounding white space.
func UnwrapReply(source, reply string) string {
	src := strings.TrimSpace(source)
	out := strings.TrimSpace(reply)
	if !strings.Contains(strings.ToLower(src), "<think>") {
		out = strings.TrimSpace(thinkRE.ReplaceAllString(out, ""))
	}
	if !strings.HasPrefix(src, "```") {
		lines := strings.Split(out, "\n")
		if n := len(lines); n >= 3 && fenceRE.MatchString(strings.TrimSpace(lines[0])) && strings.TrimSpace(lines[n-1]) == "```" {
			out = strings.TrimSpace(strings.Join(lines[1:n-1], "\n"))
		}
	}
	srcLines := strings.Split(src, "\n")
	if !strings.HasSuffix(strings.TrimSpace(srcLines[0]), ":") {
		lines := strings.Split(out, "\n")
		if len(lines) == len(srcLines)+2 && strings.HasSuffix(strings.TrimSpace(lines[0]), ":") && strings.TrimSpace(lines[1]) == "" {
			out = strings.TrimSpace(strings.Join(lines[2:], "\n"))
		}
	}
	pairs := [][2]string{{`"`, `"`}, {"“", "”"}, {"„", "“"}}
	for _, q := range pairs {
		if quoted(src, q) {
			// A quoted source may be translated into any quotation marks.
			return out
		}
	}
	for _, q := range pairs {
		if quoted(out, q) {
			inner := out[len(q[0]) : len(out)-len(q[1])]
			if !strings.Contains(inner, q[0]) && !strings.Contains(inner, q[1]) {
				out = strings.TrimSpace(inner)
			}
			break
		}
	}
	return out
}

// quoted reports s beginning with q[0] and ending with q[1], as two marks.
func quoted(s string, q [2]string) bool {
	return len(s) >= len(q[0])+len(q[1]) && strings.HasPrefix(s, q[0]) && strings.HasSuffix(s, q[1])
}
