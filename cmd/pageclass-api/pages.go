package main

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"archivekit/internal/docrecord"
	"archivekit/internal/service"
)

// pageRange is one item of a pages field: first..last, 1-based, inclusive.
type pageRange struct{ first, last int }

// maxPageRanges bounds the items of a pages field.
const maxPageRanges = 1000

// parsePagesField reads a request's pages form field v, or says why it is
// malformed as its entry of the 422 list-form answer.
func parsePagesField(v string) ([]pageRange, *service.ValidationError) {
	rs, err := parsePages(v)
	if err != nil {
		return nil, &service.ValidationError{Loc: []any{"body", "pages"}, Msg: "pages " + strconv.Quote(v) + ": " + err.Error(), Type: "value_error"}
	}
	return rs, nil
}

// checkJobFields checks a job's form fields as POST /jobs takes them
// (jobs.Options.CheckFields): a malformed pages, version or topn field is
// refused with the job, as /predict_document would refuse each of its
// items (a job with version=best was accepted, every item then failed 422,
// and the job had no run metadata).
//
// A version this service cannot serve (no model of that revision, or one
// that does not load) and a document_json that cannot be parsed are refused
// too, as each item would be.
func (s *server) checkJobFields(fields map[string]string) []service.ValidationError {
	var verrs []service.ValidationError
	if v, ok := fields["pages"]; ok {
		if _, verr := parsePagesField(v); verr != nil {
			verrs = append(verrs, *verr)
		}
	}
	if v := strings.TrimSpace(fields["version"]); v != "" {
		if verr := checkVersion(v); verr != nil {
			verrs = append(verrs, *verr)
		} else if _, err := s.engine.members(context.Background(), v); err != nil {
			s.svc.Logger.Warn("a job's version cannot be served", "version", v, "error", err.Error())
			verrs = append(verrs, service.ValidationError{Loc: []any{"body", "version"}, Type: "value_error",
				Msg: "version " + v + " cannot be served: " + unservedVersion(v)})
		}
	}
	if v, ok := fields["document_json"]; ok {
		if _, err := docrecord.Parse([]byte(v)); err != nil {
			verrs = append(verrs, service.ValidationError{Loc: []any{"body", "document_json"}, Type: "value_error",
				Msg: "document_json cannot be parsed: " + err.Error()})
		}
	}
	if v, ok := fields["topn"]; ok {
		if _, verr := parseTopN(strings.TrimSpace(v)); verr != nil {
			verrs = append(verrs, *verr)
		}
	}
	return verrs
}

// parsePages reads a pages form field: page numbers and ranges separated
// by commas, such as "1,3,5-7" (spaces allowed around the items). The
// error says what is wrong in words a client can act on; the numbers are
// checked against the document's page count later (selectPages).
func parsePages(v string) ([]pageRange, error) {
	items := strings.Split(v, ",")
	if len(items) > maxPageRanges {
		return nil, fmt.Errorf("more than %d items", maxPageRanges)
	}
	rs := make([]pageRange, 0, len(items))
	for _, it := range items {
		it = strings.TrimSpace(it)
		a, b, isRange := strings.Cut(it, "-")
		first, err1 := pageNumber(a)
		last, err2 := first, error(nil)
		if isRange {
			last, err2 = pageNumber(b)
		}
		switch {
		case it == "":
			return nil, fmt.Errorf("an empty item (write page numbers and ranges separated by commas, such as 1,3,5-7)")
		case err1 != nil || err2 != nil:
			return nil, fmt.Errorf("%q is not a page number or a range such as 5-7 (pages count from 1)", it)
		case last < first:
			return nil, fmt.Errorf("the range %q runs backwards", it)
		}
		rs = append(rs, pageRange{first, last})
	}
	return rs, nil
}

func pageNumber(s string) (int, error) {
	s = strings.TrimSpace(s)
	n, err := strconv.Atoi(s)
	if err != nil || n < 1 || s[0] == '+' {
		return 0, fmt.Errorf("not a page number")
	}
	return n, nil
}

// selectPages turns the ranges into the 0-based indexes of the pages of a
// document of n pages, in ascending order, each once (nil ranges: every
// page). A page beyond n is an error naming it.
func selectPages(rs []pageRange, n int) ([]int, error) {
	if rs == nil {
		idx := make([]int, n)
		for i := range idx {
			idx[i] = i
		}
		return idx, nil
	}
	seen := make([]bool, n)
	for _, r := range rs {
		if r.last > n {
			return nil, fmt.Errorf("pages %s: the document has %d pages", r, n)
		}
		for p := r.first; p <= r.last; p++ {
			seen[p-1] = true
		}
	}
	var idx []int
	for i, ok := range seen {
		if ok {
			idx = append(idx, i)
		}
	}
	return idx, nil
}

func (r pageRange) String() string {
	if r.first == r.last {
		return strconv.Itoa(r.first)
	}
	return fmt.Sprintf("%d-%d", r.first, r.last)
}
