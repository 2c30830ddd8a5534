package backend

import (
	"context"
	"fmt"
	"slices"
	"strings"
)

// OffersTarget says, before any document, whether be translates into
// target at all: from source, or with source "auto" from one of sources
// (the languages detection tells). Else the error names the target and
// what be offers, which every document would otherwise fail with. A
// source equal to the target is no error here: each document then says it
// is in the target language already; nor is anything refused by a backend
// whose pairs are a guess (PairsGuessed: mtapi's built-in list when the
// service's could not be read).
func OffersTarget(ctx context.Context, be Backend, source, target string, sources []string) error {
	if g, ok := be.(interface{ PairsGuessed(context.Context) bool }); source == target || ok && g.PairsGuessed(ctx) {
		return nil
	}
	if source != "auto" {
		if err := be.Supports(ctx, source, target); err != nil {
			return fmt.Errorf("source language %s, target language %s: %w", source, target, err)
		}
		return nil
	}
	var last error
	for _, src := range sources {
		if src == target {
			continue
		}
		if last = be.Supports(ctx, src, target); last == nil {
			return nil
		}
	}
	if into := targets(ctx, be); len(into) > 0 && !slices.Contains(into, target) {
		return fmt.Errorf("target language %s: the backend does not translate into it; it translates into %s", target, strings.Join(into, ", "))
	}
	if last == nil {
		return fmt.Errorf("target language %s: the backend translates into it from none of the languages detection tells", target)
	}
	return fmt.Errorf("target language %s: the backend translates into it from none of the languages detection tells (%w)", target, last)
}

// targets are the target languages of be's pairs, sorted, when be lists
// them (mtapi's Models); nil otherwise. (With source "auto" the error
// named the last language tried, as if the document were in it.)
func targets(ctx context.Context, be Backend) []string {
	m, ok := be.(interface {
		Models(context.Context) ([]string, string)
	})
	if !ok {
		return nil
	}
	pairs, _ := m.Models(ctx)
	var out []string
	for _, p := range pairs {
		if _, tgt, ok := strings.Cut(p, "-"); ok && !slices.Contains(out, tgt) {
			out = append(out, tgt)
		}
	}
	slices.Sort(out)
	return out
}
