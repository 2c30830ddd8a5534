// Package backendtest holds what the local stand-ins of the translation
// backends share (translatortest for the mtapi protocol, chattest for
// chat_compatible): one deterministic fake translation, so that a test
// knows the answer of every stand-in.
package backendtest

import (
	"context"
	"strings"
	"sync"
	"sync/atomic"
	"unicode"
)

// Dict is the stand-in's vocabulary: these lower-case Czech words get an
// English translation; every other word with a lower-case letter is
// upper-cased, and words without one (numbers, abbreviations, placeholders)
// are copied, as the hosted models do.
var Dict = map[string]string{
	"hrob": "grave", "jáma": "pit", "sonda": "trench", "a": "and", "v": "in",
	"výzkum": "research", "archeologický": "archaeological", "záchranný": "rescue",
}

// Translate is the stand-in's translation of text, line by line (line
// breaks and the number of lines are kept).
func Translate(text string) string {
	lines := strings.Split(text, "\n")
	for i, line := range lines {
		words := strings.Fields(line)
		for j, wd := range words {
			if t, ok := Dict[strings.ToLower(wd)]; ok {
				words[j] = t
			} else if strings.IndexFunc(wd, unicode.IsLower) >= 0 {
				words[j] = strings.ToUpper(wd)
			}
		}
		lines[i] = strings.Join(words, " ")
	}
	return strings.Join(lines, "\n")
}

// Suffixed returns a rewriting of translations (Backend.Then,
// translatortest.Config.Garbage) that appends suffix to each line: a
// service whose replies carry characters that do not belong there.
func Suffixed(suffix string) func(translation string) string {
	return func(translation string) string {
		lines := strings.Split(translation, "\n")
		for i := range lines {
			lines[i] += suffix
		}
		return strings.Join(lines, "\n")
	}
}

// Backend is the stand-in as an in-process backend.Backend: Translate
// answers with the package's Translate (rewritten by Then), every pair is
// supported, and it counts its calls and keeps the texts it was sent
// (Inputs). The format pipelines' tests use it.
type Backend struct {
	// Then, when not nil, rewrites each translation before it is
	// returned: a test's service that answers what it should not.
	Then func(translation string) string

	calls  atomic.Int64
	mu     sync.Mutex
	inputs []string
}

// Name is "backendtest".
func (b *Backend) Name() string { return "backendtest" }

// Supports accepts every pair.
func (b *Backend) Supports(context.Context, string, string) error { return nil }

// Translate answers with the package's Translate, rewritten by Then.
func (b *Backend) Translate(_ context.Context, text, _, _ string) (string, error) {
	b.calls.Add(1)
	b.mu.Lock()
	b.inputs = append(b.inputs, text)
	b.mu.Unlock()
	if b.Then != nil {
		return b.Then(Translate(text)), nil
	}
	return Translate(text), nil
}

// Close does nothing.
func (b *Backend) Close() error { return nil }

// Calls is the number of Translate calls made.
func (b *Backend) Calls() int { return int(b.calls.Load()) }

// Inputs are the texts Translate was sent, in order.
func (b *Backend) Inputs() []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]string(nil), b.inputs...)
}
