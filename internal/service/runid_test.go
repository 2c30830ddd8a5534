package service

import (
	"regexp"
	"testing"
)

func TestRunID(t *testing.T) {
	v4 := regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`)
	a, b := RunID(), RunID()
	for _, id := range []string{a, b} {
		if !v4.MatchString(id) {
			t.Errorf("RunID() = %q, want a version 4 UUID", id)
		}
	}
	if a == b {
		t.Errorf("two RunIDs are equal: %q", a)
	}
}
