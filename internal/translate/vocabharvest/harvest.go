// Package vocabharvest builds the translator's vocabulary file (spec
// translation 2.5 and 4.1 load_vocab.py) from two sources: the records
// source's controlled vocabulary over OAI-PMH ListRecords, and a thesaurus
// over GraphQL. It writes the five-column CSV that internal/translate/vocab loads:
// source_lemma,target_translation,source,source_id,uri.
//
// Records source (OAI-PMH): the first request is
// ?verb=ListRecords&metadataPrefix=P&set=S; each next one is
// ?verb=ListRecords&resumptionToken=T with T query-escaped (so tokens holding
// '+', '/' or '=' survive), until a page has no or an empty resumptionToken.
// In each record's metadata the first element with children named Czech and
// English term (default "heslo" and "heslo_en", the records source's
// vocabulary entries) gives one term; "ident_cely" is its source_id and the
// OAI identifier its uri. Deleted records are skipped; the OAI error
// noRecordsMatch is an empty result.
//
// Thesaurus (GraphQL): POST {"query", "variables": {"first", "after"}} with
// the Relay connection convention: data.<field>.nodes[] each with id, uri and
// labels [{lang, value}], and data.<field>.pageInfo {hasNextPage,
// endCursor}. The query text and field are configurable.
//
// Merge: a source lemma (compared case-insensitively) is kept once; the
// records source wins over the thesaurus, and within one source the first
// occurrence wins. Terms without a Czech or English label are left out.
package vocabharvest

import (
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"sort"
	"strings"
	"time"
	"unicode"

	"archivekit/internal/atomicfile"
	"archivekit/internal/version"
)

// Origins written in the source column.
const (
	OriginArch      = "arch"
	OriginThesaurus = "thesaurus"
)

// Header is the header row of the written file.
var Header = []string{"source_lemma", "target_translation", "source", "source_id", "uri"}

// Term is one harvested vocabulary entry.
type Term struct {
	Source, Target string // Czech lemma, English translation
	Origin         string // OriginArch or OriginThesaurus
	SourceID, URI  string
}

// Harvester fetches terms. Its zero value is not usable; fill the endpoints.
type Harvester struct {
	Client *http.Client
	// Delay is waited between two requests (not before the first).
	Delay time.Duration
	// Sleep waits; nil means a context-aware time.Sleep.
	Sleep func(context.Context, time.Duration) error

	// OAI-PMH records source.
	ArchURL, ArchPrefix, ArchSet string
	// ArchTermCS, ArchTermEN, ArchID are the local element names of the
	// Czech term, English term and identifier inside a record.
	ArchTermCS, ArchTermEN, ArchID string

	// GraphQL thesaurus.
	ThesaurusURL, ThesaurusQuery, ThesaurusField string
	// PageSize is the "first" variable.
	PageSize int
	// SourceLang, TargetLang select the labels (default cs, en).
	SourceLang, TargetLang string

	requests int
}

// Defaults of the records source and the thesaurus query.
const (
	DefaultArchURL    = "https://api.aiscr.cz/2.2/oai"
	DefaultArchPrefix = "oai_amcr"
	DefaultArchSet    = "heslo"
	DefaultQuery      = `query Concepts($first: Int!, $after: String) {
  concepts(first: $first, after: $after) {
    nodes { id uri labels { lang value } }
    pageInfo { hasNextPage endCursor }
  }
}`
	DefaultField = "concepts"
)

// New returns a harvester with the defaults filled in.
func New() *Harvester {
	return &Harvester{Client: &http.Client{Timeout: 60 * time.Second},
		ArchURL: DefaultArchURL, ArchPrefix: DefaultArchPrefix, ArchSet: DefaultArchSet,
		ArchTermCS: "heslo", ArchTermEN: "heslo_en", ArchID: "ident_cely",
		ThesaurusQuery: DefaultQuery, ThesaurusField: DefaultField, PageSize: 500,
		SourceLang: "cs", TargetLang: "en"}
}

// Requests is the number of requests sent so far.
func (h *Harvester) Requests() int { return h.requests }

// PartialError reports a source that failed after some pages were read; the
// terms read before the failure are returned with it.
type PartialError struct {
	Source string
	Pages  int // pages read before the failure
	Err    error
}

func (e *PartialError) Error() string {
	return fmt.Sprintf("%s: failed after %d page(s): %v", e.Source, e.Pages, e.Err)
}

func (e *PartialError) Unwrap() error { return e.Err }

// wait spaces requests by Delay.
func (h *Harvester) wait(ctx context.Context) error {
	h.requests++
	if h.requests == 1 || h.Delay <= 0 {
		return ctx.Err()
	}
	if h.Sleep != nil {
		return h.Sleep(ctx, h.Delay)
	}
	t := time.NewTimer(h.Delay)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

func (h *Harvester) do(ctx context.Context, req *http.Request) ([]byte, error) {
	if err := h.wait(ctx); err != nil {
		return nil, err
	}
	version.SetUserAgent(req)
	resp, err := h.Client.Do(req.WithContext(ctx))
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 256<<20))
	if err != nil {
		return nil, fmt.Errorf("%s: reading the answer: %w", req.URL.Redacted(), err)
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("%s: HTTP %d: %s", req.URL.Redacted(), resp.StatusCode, snippet(body))
	}
	return body, nil
}

func snippet(b []byte) string {
	s := strings.TrimSpace(string(b))
	if len(s) > 200 {
		s = s[:200] + "..."
	}
	return s
}

// oaiPage is the part of a ListRecords answer read here.
type oaiPage struct {
	Error []struct {
		Code string `xml:"code,attr"`
		Msg  string `xml:",chardata"`
	} `xml:"error"`
	Records []struct {
		Header struct {
			Status     string `xml:"status,attr"`
			Identifier string `xml:"identifier"`
		} `xml:"header"`
		Metadata struct {
			Inner []byte `xml:",innerxml"`
		} `xml:"metadata"`
	} `xml:"ListRecords>record"`
	Token string `xml:"ListRecords>resumptionToken"`
}

// Arch harvests the records source. On a failure after the first page it
// returns the terms read with a *PartialError.
func (h *Harvester) Arch(ctx context.Context) ([]Term, error) {
	base, err := url.Parse(h.ArchURL)
	if err != nil || base.Host == "" {
		return nil, fmt.Errorf("records source URL %q: not an absolute URL", h.ArchURL)
	}
	var terms []Term
	q := url.Values{"verb": {"ListRecords"}, "metadataPrefix": {h.ArchPrefix}}
	if h.ArchSet != "" {
		q.Set("set", h.ArchSet)
	}
	for page := 0; ; page++ {
		u := *base
		u.RawQuery = q.Encode()
		terms0 := len(terms)
		next, err := h.archPage(ctx, &u, &terms)
		if err != nil {
			terms = terms[:terms0]
			if page == 0 {
				return nil, fmt.Errorf("records source: %w", err)
			}
			return terms, &PartialError{Source: "records source", Pages: page, Err: err}
		}
		if next == "" {
			return terms, nil
		}
		q = url.Values{"verb": {"ListRecords"}, "resumptionToken": {next}}
	}
}

func (h *Harvester) archPage(ctx context.Context, u *url.URL, terms *[]Term) (string, error) {
	req, err := http.NewRequest(http.MethodGet, u.String(), nil)
	if err != nil {
		return "", err
	}
	body, err := h.do(ctx, req)
	if err != nil {
		return "", err
	}
	var p oaiPage
	if err := xml.Unmarshal(body, &p); err != nil {
		return "", fmt.Errorf("%s: not an OAI-PMH answer: %v", u.Redacted(), err)
	}
	if len(p.Error) > 0 {
		// The first error decides (an answer carries one as a rule).
		e := p.Error[0]
		if e.Code == "noRecordsMatch" {
			return "", nil
		}
		return "", fmt.Errorf("%s: OAI-PMH error %s: %s", u.Redacted(), e.Code, strings.TrimSpace(e.Msg))
	}
	for _, r := range p.Records {
		if r.Header.Status == "deleted" {
			continue
		}
		t, ok := h.archTerm(r.Metadata.Inner)
		if !ok {
			continue
		}
		t.URI = strings.TrimSpace(r.Header.Identifier)
		*terms = append(*terms, t)
	}
	return strings.TrimSpace(p.Token), nil
}

// archTerm finds the first element with both term children in a record's
// metadata.
func (h *Harvester) archTerm(inner []byte) (Term, bool) {
	dec := xml.NewDecoder(bytes.NewReader(inner))
	dec.Strict = false
	// Collect, per open element, its direct children's text by local name.
	type frame struct {
		name     string
		children map[string]string
		text     strings.Builder
	}
	var stack []*frame
	for {
		tok, err := dec.Token()
		if err != nil {
			return Term{}, false
		}
		switch x := tok.(type) {
		case xml.StartElement:
			stack = append(stack, &frame{name: x.Name.Local, children: map[string]string{}})
		case xml.CharData:
			if len(stack) > 0 {
				stack[len(stack)-1].text.Write(x)
			}
		case xml.EndElement:
			f := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			if len(stack) > 0 {
				parent := stack[len(stack)-1]
				if _, seen := parent.children[f.name]; !seen {
					parent.children[f.name] = clean(f.text.String())
				}
			}
			cs, en := f.children[h.ArchTermCS], f.children[h.ArchTermEN]
			if cs != "" && en != "" {
				return Term{Source: cs, Target: en, Origin: OriginArch, SourceID: f.children[h.ArchID]}, true
			}
		}
	}
}

// clean trims and collapses white space.
func clean(s string) string { return strings.Join(strings.Fields(s), " ") }

type gqlAnswer struct {
	Data   map[string]json.RawMessage `json:"data"`
	Errors []struct {
		Message string `json:"message"`
	} `json:"errors"`
}

type gqlConnection struct {
	Nodes []struct {
		ID     string `json:"id"`
		URI    string `json:"uri"`
		Labels []struct {
			Lang  string `json:"lang"`
			Value string `json:"value"`
		} `json:"labels"`
	} `json:"nodes"`
	PageInfo struct {
		HasNextPage bool    `json:"hasNextPage"`
		EndCursor   *string `json:"endCursor"`
	} `json:"pageInfo"`
}

// Thesaurus harvests the GraphQL thesaurus. On a failure after the first
// page it returns the terms read with a *PartialError.
func (h *Harvester) Thesaurus(ctx context.Context) ([]Term, error) {
	if u, err := url.Parse(h.ThesaurusURL); err != nil || u.Host == "" {
		return nil, fmt.Errorf("thesaurus URL %q: not an absolute URL (set it, or skip the thesaurus)", h.ThesaurusURL)
	}
	var terms []Term
	var after *string
	for page := 0; ; page++ {
		conn, err := h.thesaurusPage(ctx, after)
		if err != nil {
			if page == 0 {
				return nil, fmt.Errorf("thesaurus: %w", err)
			}
			return terms, &PartialError{Source: "thesaurus", Pages: page, Err: err}
		}
		for _, n := range conn.Nodes {
			var cs, en string
			for _, l := range n.Labels {
				switch {
				case cs == "" && strings.EqualFold(l.Lang, h.SourceLang):
					cs = clean(l.Value)
				case en == "" && strings.EqualFold(l.Lang, h.TargetLang):
					en = clean(l.Value)
				}
			}
			if cs != "" && en != "" {
				terms = append(terms, Term{Source: cs, Target: en, Origin: OriginThesaurus, SourceID: n.ID, URI: n.URI})
			}
		}
		if !conn.PageInfo.HasNextPage {
			return terms, nil
		}
		if conn.PageInfo.EndCursor == nil || (after != nil && *after == *conn.PageInfo.EndCursor) {
			err := errors.New("hasNextPage without a new endCursor")
			return terms, &PartialError{Source: "thesaurus", Pages: page + 1, Err: err}
		}
		after = conn.PageInfo.EndCursor
	}
}

func (h *Harvester) thesaurusPage(ctx context.Context, after *string) (*gqlConnection, error) {
	vars := map[string]any{"first": h.PageSize, "after": after}
	body, err := json.Marshal(map[string]any{"query": h.ThesaurusQuery, "variables": vars})
	if err != nil {
		return nil, err
	}
	req, err := http.NewRequest(http.MethodPost, h.ThesaurusURL, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	data, err := h.do(ctx, req)
	if err != nil {
		return nil, err
	}
	var a gqlAnswer
	if err := json.Unmarshal(data, &a); err != nil {
		return nil, fmt.Errorf("%s: not a GraphQL answer: %v", h.ThesaurusURL, err)
	}
	if len(a.Errors) > 0 {
		msgs := make([]string, len(a.Errors))
		for i, e := range a.Errors {
			msgs[i] = e.Message
		}
		return nil, fmt.Errorf("%s: GraphQL errors: %s", h.ThesaurusURL, strings.Join(msgs, "; "))
	}
	raw, ok := a.Data[h.ThesaurusField]
	if !ok {
		return nil, fmt.Errorf("%s: answer has no data.%s", h.ThesaurusURL, h.ThesaurusField)
	}
	var conn gqlConnection
	if err := json.Unmarshal(raw, &conn); err != nil {
		return nil, fmt.Errorf("%s: data.%s: %v", h.ThesaurusURL, h.ThesaurusField, err)
	}
	return &conn, nil
}

// fold is the case folding internal/translate/vocab compares lemmas with.
func fold(s string) string { return strings.Map(unicode.ToLower, s) }

// Merge keeps each source lemma once: earlier lists win over later ones
// (pass the records source first), and within a list the first occurrence.
// The result is sorted by folded lemma, then lemma. It also returns how many
// terms were dropped as duplicates.
func Merge(lists ...[]Term) ([]Term, int) {
	seen := map[string]bool{}
	var out []Term
	dropped := 0
	for _, l := range lists {
		for _, t := range l {
			if t.Source == "" || t.Target == "" {
				continue
			}
			k := fold(t.Source)
			if seen[k] {
				dropped++
				continue
			}
			seen[k] = true
			out = append(out, t)
		}
	}
	sort.SliceStable(out, func(i, j int) bool {
		a, b := fold(out[i].Source), fold(out[j].Source)
		if a != b {
			return a < b
		}
		return out[i].Source < out[j].Source
	})
	return out, dropped
}

// Write writes terms as the five-column CSV, atomically.
func Write(path string, terms []Term) error {
	return atomicfile.Write(path, 0o666, func(w io.Writer) error {
		cw := csv.NewWriter(w)
		if err := cw.Write(Header); err != nil {
			return err
		}
		for _, t := range terms {
			if err := cw.Write([]string{t.Source, t.Target, t.Origin, t.SourceID, t.URI}); err != nil {
				return err
			}
		}
		cw.Flush()
		return cw.Error()
	})
}
