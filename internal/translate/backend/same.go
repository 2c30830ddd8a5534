package backend

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"unicode"
)

// A service that answers every request with one text passes every check of
// a single reply: a network's sign-in page or a proxy's notice served as
// text, the service's own message in place of a translation, a language
// model's refusal. Its text would be written into every document as the
// translation. SameReplies tells such a service by its replies across
// calls: one text given for many different inputs. A notice that carries a
// number of its own each time (a block page's request reference, decimal
// or hexadecimal, a time) is the same text: replies that differ only in
// their numbers (wordKey) are counted together, for inputs that differ in
// more than their numbers (a numbered catalogue's "Inventory number 1234",
// "... 1235" are not one reply).

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

// SameItems is the most items a SameReplyError names: the items of the
// calls SameReplies looks back over.
const SameItems = sameWindow

// ErrSameReply is what a reply SameReplies refuses is (errors.Is).
var ErrSameReply = errors.New("the translation service answers the same text whatever it is sent")

// SameReplyError is a reply SameReplies refused: Reply was given for
// Inputs different inputs among the last calls. It is a passing failure
// (Transient): the document is not recorded as failed, and a run stops
// once its circuit breaker has seen enough of them.
type SameReplyError struct {
	Reply  string
	Inputs int
	// Items names the items (ForItem) whose calls among the last ones got
	// this reply, the refused call's own included, in the order of their
	// first such call: those before it passed, so their translations may
	// hold the reply.
	Items []string
	// Unnamed counts the calls before it among the last ones that got
	// this reply for no item: a service's synchronous requests, whose
	// answers went out.
	Unnamed int
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
	first  string     // the first counted reply (wordKey)
	// refused is the reply refused last (wordKey): it stays refused,
	// whatever the calls looked back over, until another counted reply
	// passes (an item run again on a service that still answers it).
	refused string
}

// sameCall is a call looked back over: its input (sameKey, and wordKey:
// without its digits), its reply (trimmed, and wordKey) and its item.
type sameCall struct{ input, inputWords, reply, replyWords, item string }

type itemKey struct{}

// ForItem returns ctx naming the item (a document of a run, a job's item)
// whose text the calls made with it translate, for SameReplyError.Items.
func ForItem(ctx context.Context, name string) context.Context {
	return context.WithValue(ctx, itemKey{}, name)
}

// itemOf is the item ctx names (ForItem), or "".
func itemOf(ctx context.Context) string {
	s, _ := ctx.Value(itemKey{}).(string)
	return s
}

// Check records a call's input and reply and refuses the reply
// (*SameReplyError) when, with it, sameMost or more different inputs among
// the last sameWindow calls got this very reply (told apart by their
// letters and digits) or a reply that differs from it only in its digits
// (told apart by their letters), or, among the backend's first sameWindow
// calls, sameFirst did while no counted reply differed beyond its digits,
// or when it is the reply refused last and no other counted reply passed
// since. Case is set aside (variants of one text count once);
// a reply of fewer than sameLetters letters, equal to its input (a name
// copied), or of another number of lines than its input, is not counted.
// Backends check every reply, before their guard: one the guard rejects
// (a sign-in page is too short for a long text) still tells the service.
// ctx names the call's item (ForItem), if any.
func (s *SameReplies) Check(ctx context.Context, input, reply string) error {
	if s == nil {
		return nil
	}
	in, out := sameKey(input), strings.TrimSpace(reply)
	outWords := replyWords(out)
	s.mu.Lock()
	defer s.mu.Unlock()
	s.recent = append(s.recent, sameCall{in, wordKey(input), out, outWords, itemOf(ctx)})
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
		s.first = outWords
	case outWords != s.first:
		s.other = true
	}
	// inputs: those given this very reply; worded: those, told apart
	// without their digits, given a reply that differs from it at most in
	// its digits.
	inputs, worded := map[string]bool{}, map[string]bool{}
	var items []string
	unnamed := 0
	for i, c := range s.recent {
		if c.replyWords != outWords {
			continue
		}
		worded[c.inputWords] = true
		if c.reply == out {
			inputs[c.input] = true
		}
		switch {
		case c.item != "" && !slices.Contains(items, c.item):
			items = append(items, c.item)
		case c.item == "" && i < len(s.recent)-1:
			unnamed++
		}
	}
	n := max(len(inputs), len(worded))
	if outWords == s.refused || n >= sameMost || (!s.other && s.calls <= sameWindow && n >= sameFirst) {
		s.refused = outWords
		return &SameReplyError{Reply: out, Inputs: n, Items: items, Unnamed: unnamed}
	}
	s.refused = ""
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

// wordKey is s's words without a digit, their letters in lower case: s
// told apart from other texts without its numbers, a number being any run
// of letters and digits with a digit in it ("1732907919", and the
// hexadecimal "5f3c1302" or "c80f7" of a request reference).
func wordKey(s string) string {
	var b strings.Builder
	for _, w := range strings.FieldsFunc(s, func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) }) {
		if strings.IndexFunc(w, unicode.IsDigit) < 0 {
			b.WriteString(strings.ToLower(w))
		}
	}
	return b.String()
}

// replyWords is the key replies are compared by: their words without a
// digit (wordKey), or the whole reply when it has none, so that replies
// made of codes alone ("AB12 CD34") are not all taken for one.
func replyWords(reply string) string {
	if k := wordKey(reply); k != "" {
		return k
	}
	return "\x00" + reply
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
