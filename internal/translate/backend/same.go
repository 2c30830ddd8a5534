package backend

import (
	"errors"
	"fmt"
	"strings"
	"sync"
	"unicode"
)

// A service that answers every request with one text passes every check of
// a single reply: a network's sign-in page or a proxy's notice served as
// text, the service's own message in place of a translation, a language
// model's refusal. Its text would be written into every document as the
// translation. SameReplies tells such a service by its replies across
// calls: one text given for many different inputs.

// Bounds of SameReplies: a reply given for sameMost or more different
// inputs among the last sameWindow calls is refused; a reply of fewer than
// sameLetters letters is not counted (many texts honestly share "Page",
// "no note" or "yes").
const (
	sameWindow  = 10
	sameMost    = 5
	sameLetters = 10
	// sameFirst: among a backend's first sameWindow calls, a reply given
	// for sameFirst different inputs while every counted reply so far
	// was that one is refused already: fewer replies of a service that
	// never translated pass.
	sameFirst = 3
)

// ErrSameReply is what a reply SameReplies refuses is (errors.Is).
var ErrSameReply = errors.New("the translation service answers the same text whatever it is sent")

// SameReplyError is a reply SameReplies refused: Reply was given for
// Inputs different inputs among the last calls. It is a passing failure
// (Transient): the document is not recorded as failed, and a run stops
// once its circuit breaker has seen enough of them.
type SameReplyError struct {
	Reply  string
	Inputs int
}

func (e *SameReplyError) Error() string {
	r := e.Reply
	if rs := []rune(r); len(rs) > 80 {
		r = string(rs[:80]) + "…"
	}
	return fmt.Sprintf("%v: %q for %d different texts among its last %d answers (a network's sign-in page, a proxy's or the service's own message, a model's refusal?): check the service and its address",
		ErrSameReply, r, e.Inputs, sameWindow)
}

func (e *SameReplyError) Unwrap() error { return ErrSameReply }

// Transient says the failure is the service's, and may pass.
func (e *SameReplyError) Transient() bool { return true }

// SameReplies watches a backend's calls (one per request sent to its
// service). Its zero value is ready; it is safe for concurrent use, and a
// nil *SameReplies refuses nothing.
type SameReplies struct {
	mu     sync.Mutex
	recent []sameCall // the last sameWindow calls, oldest first
	calls  int        // calls seen
	other  bool       // a counted reply differed from the first one
	first  string     // the first counted reply
}

type sameCall struct{ input, reply string }

// Check records a call's input and reply and refuses the reply
// (*SameReplyError) when, with it, sameMost or more different inputs among
// the last sameWindow calls got this very reply, or, among the backend's
// first sameWindow calls, sameFirst did while no counted reply differed. Inputs are told apart by
// their letters and digits, case aside (variants of one text count once);
// a reply of fewer than sameLetters letters, equal to its input (a name
// copied), or of another number of lines than its input, is not counted.
// Backends check the replies that passed their guard: those that would be
// written.
func (s *SameReplies) Check(input, reply string) error {
	if s == nil {
		return nil
	}
	in, out := sameKey(input), strings.TrimSpace(reply)
	s.mu.Lock()
	defer s.mu.Unlock()
	s.recent = append(s.recent, sameCall{in, out})
	if len(s.recent) > sameWindow {
		s.recent = s.recent[len(s.recent)-sameWindow:]
	}
	s.calls++
	if letters(out) < sameLetters || in == sameKey(out) || strings.Count(strings.TrimSpace(input), "\n") != strings.Count(out, "\n") {
		// Too short to tell, a text copied, or a reply of other lines,
		// which is not taken line by line anyway.
		return nil
	}
	switch {
	case s.first == "":
		s.first = out
	case out != s.first:
		s.other = true
	}
	inputs := map[string]bool{}
	for _, c := range s.recent {
		if c.reply == out {
			inputs[c.input] = true
		}
	}
	if len(inputs) >= sameMost || (!s.other && s.calls <= sameWindow && len(inputs) >= sameFirst) {
		return &SameReplyError{Reply: out, Inputs: len(inputs)}
	}
	return nil
}

// sameKey is s's letters and digits, in lower case.
func sameKey(s string) string {
	return strings.Map(func(r rune) rune {
		if unicode.IsLetter(r) || unicode.IsDigit(r) {
			return unicode.ToLower(r)
		}
		return -1
	}, s)
}

// letters counts s's letters.
func letters(s string) int {
	n := 0
	for _, r := range s {
		if unicode.IsLetter(r) {
			n++
		}
	}
	return n
}
