package runmeta

import (
	"maps"
	"reflect"
	"slices"
)

// Withdraw takes back a document Done recorded (the same doc and files,
// it the ItemOf its output): its files were removed after it was written, because its
// translation holds a reply the service was found afterwards to give for
// everything (backend.SameReplyError). The run's statistics then count
// what the run's written outputs hold.
func (r *Run) Withdraw(doc string, it Item, files ...string) {
	r.Update(func(d *Doc) {
		st := &d.Statistics
		st.SuccessfullyProcessed--
		st.OutputCountsByType[it.Kind.OutputType()]--
		st.OutputCountsByType["csv"]--
		d.Outputs = slices.DeleteFunc(d.Outputs, func(f string) bool { return slices.Contains(files, f) })
		d.add(doc, it.negated())
		dropZeros(st.Languages, it.Languages)
		dropZeros(st.SegmentStatus, it.Statuses)
		dropZeros(st.LangSources, it.LangSources)
		if d.protected[doc] == 0 {
			delete(d.protected, doc)
		}
		if t, ok := d.terms[doc]; ok && t.Expected == 0 && t.Hit == 0 {
			delete(d.terms, doc)
		}
	})
}

// BookWithdraw takes back a text file of the run's book i that BookDone
// counted (it is the same Item).
func (r *Run) BookWithdraw(i int, it Item) {
	r.Update(func(d *Doc) {
		if i >= 0 && i < len(d.Statistics.Books) {
			b := d.Statistics.Books[i]
			b.add(it.negated(), -1)
			dropZeros(b.Languages, it.Languages)
			dropZeros(b.LangSources, it.LangSources)
			dropZeros(b.SegmentStatus, it.Statuses)
		}
	})
}

// negated is it with every count negated: adding it takes it back.
func (it Item) negated() Item {
	n := it
	n.taken = true
	s := reflect.ValueOf(&n.Stats).Elem()
	for i := range s.NumField() {
		if f := s.Field(i); f.Kind() == reflect.Int {
			f.SetInt(-f.Int())
		}
	}
	neg := func(m map[string]int) map[string]int {
		c := maps.Clone(m)
		for k := range c {
			c[k] = -c[k]
		}
		return c
	}
	n.Languages, n.LangSources, n.Statuses = neg(it.Languages), neg(it.LangSources), neg(it.Statuses)
	if it.Terms != nil {
		n.Terms = &Terms{Expected: -it.Terms.Expected, Hit: -it.Terms.Hit}
	}
	return n
}

// dropZeros deletes from m the keys of taken that it counts down to
// nothing (the other keys, zero or not, stay as they were).
func dropZeros(m, taken map[string]int) {
	for k := range taken {
		if m[k] == 0 {
			delete(m, k)
		}
	}
}
