package vocabharvest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"archivekit/internal/translate/vocab"
)

// Tokens the stand-in hands out: '+', '/', '=' and '&' must survive the
// round trip.
var tokens = []string{"", "a+b/c==", "x&y=1+/2"}

func heslo(id, cs, en string) string {
	return `<record><header><identifier>https://api.example.org/id/` + id + `</identifier></header><metadata>
<amcr:amcr xmlns:amcr="https://api.example.org/schema/amcr/2.2/"><amcr:heslo><amcr:ident_cely>` + id + `</amcr:ident_cely>
<amcr:nazev_heslare>typ</amcr:nazev_heslare><amcr:heslo>` + cs + `</amcr:heslo><amcr:popis>x</amcr:popis><amcr:heslo_en>` + en + `</amcr:heslo_en>
</amcr:heslo></amcr:amcr></metadata></record>`
}

// oaiServer serves three ListRecords pages; failPage (1-based, 0 none)
// answers 500.
type oaiServer struct {
	*httptest.Server
	mu       sync.Mutex
	rawQuery []string
}

func newOAI(t *testing.T, failPage int) *oaiServer {
	s := &oaiServer{}
	pages := []string{
		heslo("HES-1", "hrob", "grave") + heslo("HES-2", "Sídliště", "settlement") +
			`<record><header status="deleted"><identifier>https://api.example.org/id/HES-9</identifier></header></record>`,
		heslo("HES-3", "jáma", "pit") + `<record><header><identifier>i</identifier></header><metadata><amcr:amcr xmlns:amcr="u"><amcr:heslo><amcr:heslo>bez překladu</amcr:heslo></amcr:heslo></amcr:amcr></metadata></record>`,
		heslo("HES-4", "sídliště", "habitation site") + heslo("HES-5", "kultovní  \n objekt", "cult feature"),
	}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		s.rawQuery = append(s.rawQuery, r.URL.RawQuery)
		s.mu.Unlock()
		q := r.URL.Query()
		page := -1
		if tok := q.Get("resumptionToken"); tok != "" {
			for i, t := range tokens {
				if t == tok && i > 0 {
					page = i
				}
			}
		} else if q.Get("metadataPrefix") == "oai_amcr" && q.Get("set") == "heslo" {
			page = 0
		}
		if q.Get("verb") != "ListRecords" || page < 0 {
			fmt.Fprintf(w, `<OAI-PMH xmlns="http://www.openarchives.org/OAI/2.0/"><error code="badResumptionToken">unknown %q</error></OAI-PMH>`, r.URL.RawQuery)
			return
		}
		if page+1 == failPage {
			http.Error(w, "database away", http.StatusInternalServerError)
			return
		}
		next := ""
		if page+1 < len(tokens) {
			next = tokens[page+1]
		}
		fmt.Fprintf(w, `<?xml version="1.0"?><OAI-PMH xmlns="http://www.openarchives.org/OAI/2.0/"><ListRecords>%s<resumptionToken cursor="%d">%s</resumptionToken></ListRecords></OAI-PMH>`,
			pages[page], page, xmlEscape(next))
	}))
	t.Cleanup(s.Close)
	return s
}

func xmlEscape(s string) string {
	return strings.NewReplacer("&", "&amp;", "<", "&lt;").Replace(s)
}

// gqlServer serves two pages of concepts; failPage (1-based) answers a
// GraphQL error.
func newGraphQL(t *testing.T, failPage int) *httptest.Server {
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			Query     string
			Variables struct {
				First int
				After *string
			}
		}
		body, _ := io.ReadAll(r.Body)
		if r.Method != http.MethodPost || json.Unmarshal(body, &req) != nil || !strings.Contains(req.Query, "concepts") || req.Variables.First != 500 {
			http.Error(w, "bad request "+string(body), http.StatusBadRequest)
			return
		}
		page := 1
		if req.Variables.After != nil {
			if *req.Variables.After != "cursor/1+" {
				http.Error(w, "bad cursor", http.StatusBadRequest)
				return
			}
			page = 2
		}
		if page == failPage {
			fmt.Fprint(w, `{"errors":[{"message":"timeout in resolver"}]}`)
			return
		}
		if page == 1 {
			fmt.Fprint(w, `{"data":{"concepts":{"nodes":[
 {"id":"T1","uri":"https://thes.example.org/T1","labels":[{"lang":"cs","value":"hrob"},{"lang":"en","value":"tomb"}]},
 {"id":"T2","uri":"https://thes.example.org/T2","labels":[{"lang":"en","value":"hillfort"},{"lang":"CS","value":"hradiště"}]},
 {"id":"T3","uri":"https://thes.example.org/T3","labels":[{"lang":"cs","value":"jen česky"}]}],
 "pageInfo":{"hasNextPage":true,"endCursor":"cursor/1+"}}}}`)
			return
		}
		fmt.Fprint(w, `{"data":{"concepts":{"nodes":[
 {"id":"T4","uri":"https://thes.example.org/T4","labels":[{"lang":"cs","value":"mohyla"},{"lang":"en","value":"barrow"}]}],
 "pageInfo":{"hasNextPage":false,"endCursor":null}}}}`)
	}))
	t.Cleanup(s.Close)
	return s
}

func harvester(arch, thes string) (*Harvester, *[]time.Duration) {
	h := New()
	h.ArchURL, h.ThesaurusURL = arch, thes
	h.Delay = 250 * time.Millisecond
	var slept []time.Duration
	h.Sleep = func(_ context.Context, d time.Duration) error { slept = append(slept, d); return nil }
	return h, &slept
}

func TestHarvestMergeWrite(t *testing.T) {
	oai, gql := newOAI(t, 0), newGraphQL(t, 0)
	h, slept := harvester(oai.URL+"/2.2/oai", gql.URL)
	arch, err := h.Arch(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	// Pages 2 and 3 were asked for by their tokens, escaped.
	if len(oai.rawQuery) != 3 || !strings.Contains(oai.rawQuery[1], "resumptionToken=a%2Bb%2Fc%3D%3D") {
		t.Errorf("queries %q", oai.rawQuery)
	}
	var got []string
	for _, t := range arch {
		got = append(got, t.Source+"="+t.Target+"|"+t.SourceID+"|"+t.URI)
	}
	want := "hrob=grave|HES-1|https://api.example.org/id/HES-1,Sídliště=settlement|HES-2|https://api.example.org/id/HES-2," +
		"jáma=pit|HES-3|https://api.example.org/id/HES-3,sídliště=habitation site|HES-4|https://api.example.org/id/HES-4," +
		"kultovní objekt=cult feature|HES-5|https://api.example.org/id/HES-5"
	if strings.Join(got, ",") != want {
		t.Errorf("records source terms\n got %s\nwant %s", strings.Join(got, ","), want)
	}
	thes, err := h.Thesaurus(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(thes) != 3 || thes[1].Source != "hradiště" || thes[1].Target != "hillfort" || thes[2].SourceID != "T4" {
		t.Errorf("thesaurus terms %+v", thes)
	}
	// 5 requests: a delay before each but the first.
	if len(*slept) != 4 || (*slept)[0] != 250*time.Millisecond {
		t.Errorf("slept %v, want 4 × 250ms", *slept)
	}

	merged, dropped := Merge(arch, thes)
	if dropped != 2 { // sídliště (second records term), hrob (thesaurus)
		t.Errorf("dropped %d, want 2", dropped)
	}
	out := filepath.Join(t.TempDir(), "vocab", "vocabulary.csv")
	if err := Write(out, merged); err != nil {
		t.Fatal(err)
	}
	v, err := vocab.Load(out)
	if err != nil {
		t.Fatal(err)
	}
	if len(v.Skipped) != 0 || len(v.Entries) != 6 {
		t.Fatalf("vocab.Load: %d entries, skipped %v", len(v.Entries), v.Skipped)
	}
	byLemma := map[string]vocab.Entry{}
	for _, e := range v.Entries {
		byLemma[e.Source] = e
	}
	if e := byLemma["hrob"]; e.Target != "grave" || e.Origin != OriginArch || e.URI != "https://api.example.org/id/HES-1" {
		t.Errorf("hrob: %+v (the records source must win)", e)
	}
	if e := byLemma["mohyla"]; e.Target != "barrow" || e.Origin != OriginThesaurus || e.SourceID != "T4" {
		t.Errorf("mohyla: %+v", e)
	}
}

func TestLaterPageFailureKeepsWhatWasRead(t *testing.T) {
	oai := newOAI(t, 3)
	h, _ := harvester(oai.URL, "")
	terms, err := h.Arch(context.Background())
	var pe *PartialError
	if !errors.As(err, &pe) || pe.Pages != 2 || !strings.Contains(err.Error(), "HTTP 500") {
		t.Fatalf("error %v, want a partial error after 2 pages", err)
	}
	if len(terms) != 3 {
		t.Errorf("%d terms kept, want the 3 of pages 1-2", len(terms))
	}

	gql := newGraphQL(t, 2)
	h, _ = harvester("", gql.URL)
	terms, err = h.Thesaurus(context.Background())
	if !errors.As(err, &pe) || pe.Pages != 1 || !strings.Contains(err.Error(), "timeout in resolver") || len(terms) != 2 {
		t.Fatalf("thesaurus: %d terms, error %v", len(terms), err)
	}
}

func TestFirstPageFailures(t *testing.T) {
	bad := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/none":
			fmt.Fprint(w, `<OAI-PMH xmlns="http://www.openarchives.org/OAI/2.0/"><error code="noRecordsMatch">empty set</error></OAI-PMH>`)
		case "/badarg":
			fmt.Fprint(w, `<OAI-PMH xmlns="http://www.openarchives.org/OAI/2.0/"><error code="badArgument">no such set</error></OAI-PMH>`)
		case "/html":
			fmt.Fprint(w, `<html><body>maintenance</body>`)
		default:
			fmt.Fprint(w, `{"data":{}}`)
		}
	}))
	defer bad.Close()
	h, _ := harvester(bad.URL+"/none", bad.URL+"/gql")
	if terms, err := h.Arch(context.Background()); err != nil || len(terms) != 0 {
		t.Errorf("noRecordsMatch: %v %v", terms, err)
	}
	for path, want := range map[string]string{"/badarg": "OAI-PMH error badArgument: no such set", "/html": "not an OAI-PMH answer"} {
		h.ArchURL = bad.URL + path
		if _, err := h.Arch(context.Background()); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: error %v, want %q", path, err, want)
		}
	}
	if _, err := h.Thesaurus(context.Background()); err == nil || !strings.Contains(err.Error(), "answer has no data.concepts") {
		t.Errorf("thesaurus without the field: %v", err)
	}
	h.ThesaurusURL = "not a url"
	if _, err := h.Thesaurus(context.Background()); err == nil || !strings.Contains(err.Error(), "not an absolute URL") {
		t.Errorf("bad URL: %v", err)
	}
}
