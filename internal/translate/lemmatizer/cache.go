package lemmatizer

import (
	"context"
	"strings"
	"sync"
)

// DefaultCacheLines is how many distinct lines a Cache keeps by default.
const DefaultCacheLines = 100000

// Cache is a run's memory of the lemmatiser: each distinct line (per
// language) is lemmatised once, and the lines not known yet of one call go
// to the inner lemmatiser together (LemmatizeLines: one request per page
// or batch instead of one per line). Archives repeat headers, captions and
// boilerplate, which then cost nothing. It is safe for concurrent use.
//
// A line is lemmatised on its own, without the lines around it, so text
// given to Lemmatize gets the same tokens whatever it is batched with.
type Cache struct {
	// Inner lemmatises the lines not known yet (a *Breaker in front of a
	// *Client).
	Inner LineLemmatizer
	// MaxLines bounds the lines kept; when it is reached the cache starts
	// afresh (a long-running service). < 1 means DefaultCacheLines.
	MaxLines int

	mu    sync.Mutex
	lines map[cacheKey][]Token
}

type cacheKey struct{ lang, line string }

// NewCache returns an empty cache in front of inner.
func NewCache(inner LineLemmatizer) *Cache { return &Cache{Inner: inner} }

// Len returns the number of lines kept.
func (c *Cache) Len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.lines)
}

// LemmatizeLines returns each line's tokens (offsets into the line), from
// memory where it can; the other distinct lines go to Inner in one call.
// On error nothing is kept. The tokens returned are the caller's.
func (c *Cache) LemmatizeLines(ctx context.Context, lines []string, lang string) ([][]Token, error) {
	out := make([][]Token, len(lines))
	var missing []string
	at := map[string][]int{} // missing line -> its positions in lines
	c.mu.Lock()
	for i, l := range lines {
		if strings.TrimSpace(l) == "" {
			continue
		}
		if toks, ok := c.lines[cacheKey{lang, l}]; ok {
			out[i] = append([]Token(nil), toks...)
			continue
		}
		if _, dup := at[l]; !dup {
			missing = append(missing, l)
		}
		at[l] = append(at[l], i)
	}
	c.mu.Unlock()
	if len(missing) == 0 {
		return out, nil
	}
	got, err := c.Inner.LemmatizeLines(ctx, missing, lang)
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	limit := c.MaxLines
	if limit < 1 {
		limit = DefaultCacheLines
	}
	for k, l := range missing {
		if c.lines == nil || len(c.lines) >= limit {
			c.lines = map[cacheKey][]Token{}
		}
		c.lines[cacheKey{lang, l}] = got[k]
		for _, i := range at[l] {
			out[i] = append([]Token(nil), got[k]...)
		}
	}
	return out, nil
}

// Prefetch lemmatises the lines not known yet, so that later calls about
// them are answered from memory.
func (c *Cache) Prefetch(ctx context.Context, lines []string, lang string) error {
	_, err := c.LemmatizeLines(ctx, lines, lang)
	return err
}

// Lemmatize returns the tokens of text, line by line (LemmatizeLines),
// with byte offsets into text.
func (c *Cache) Lemmatize(ctx context.Context, text, lang string) ([]Token, error) {
	lines := strings.Split(text, "\n")
	per, err := c.LemmatizeLines(ctx, lines, lang)
	if err != nil {
		return nil, err
	}
	var all []Token
	offset := 0
	for i, toks := range per {
		for _, t := range toks {
			if t.Start >= 0 {
				t.Start += offset
				t.End += offset
			}
			all = append(all, t)
		}
		offset += len(lines[i]) + 1
	}
	return all, nil
}
