package main

import (
	"reflect"
	"testing"

	"archivekit/internal/translate/runmeta"
)

// TestAddStatisticsEveryCount: a merge adds every count of a shard's
// statistics, those added since too (documents_without_text was missed
// once).
func TestAddStatisticsEveryCount(t *testing.T) {
	var xs runmeta.Statistics
	v := reflect.ValueOf(&xs).Elem()
	var counts []string
	for i := 0; i < v.NumField(); i++ {
		if f := v.Field(i); f.Kind() == reflect.Int {
			f.SetInt(1)
			counts = append(counts, v.Type().Field(i).Name)
		}
	}
	if len(counts) < 5 {
		t.Fatalf("only %d counts found: %v", len(counts), counts)
	}
	st := runmeta.Statistics{}
	st.OutputCountsByType, st.Languages, st.SegmentStatus, st.LangSources = map[string]int{}, map[string]int{}, map[string]int{}, map[string]int{}
	addStatistics(&st, xs)
	addStatistics(&st, xs)
	got := reflect.ValueOf(st)
	for _, name := range counts {
		if n := got.FieldByName(name).Int(); n != 2 {
			t.Errorf("%s: %d after two shards of 1, want 2", name, n)
		}
	}
}
