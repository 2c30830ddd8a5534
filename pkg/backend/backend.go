// Package backend defines the interface every translation backend implements
// (mtapi, chat_compatible, ct2), so that the ALTO and metadata pipelines do
// not depend on any one of them.
package backend

import "context"

// Backend translates plain text from one language to another.
type Backend interface {
	// Name is the backend's configuration name: "mtapi", "chat_compatible" or "ct2".
	Name() string
	// Supports reports whether the pair src->tgt (ISO 639-1 codes) is offered;
	// an unsupported pair is an error naming the pair, never a silent re-route.
	Supports(ctx context.Context, src, tgt string) error
	// Translate translates text from src to tgt. Line breaks in text are
	// significant and must be preserved by implementations that can.
	Translate(ctx context.Context, text, src, tgt string) (string, error)
}

// Glossary is an optional capability: backends that accept a list of
// terms to use verbatim (LLM families) implement it. Terms are source=target
// pairs, longest source first.
type Glossary interface {
	TranslateWithGlossary(ctx context.Context, text, src, tgt string, terms [][2]string) (string, error)
}
