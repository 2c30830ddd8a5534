package main

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestWeightVariablesNamingNothing: ARCHIVEKIT_ROTATION_MODEL or
// ARCHIVEKIT_DEMO_WEIGHTS set to a folder that is not there stops the
// service at start, naming the variable and the path (it started with the
// rotation check off without a word, while pageclass refuses it); with
// the flag given, the flag is used.
func TestWeightVariablesNamingNothing(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "nonexist")
	for _, env := range []string{"ARCHIVEKIT_ROTATION_MODEL", "ARCHIVEKIT_DEMO_WEIGHTS"} {
		lookup := func(k string) (string, bool) {
			if k == env {
				return missing, true
			}
			return "", false
		}
		_, err := newServer(testOptions(t), lookup, nil)
		if err == nil || !strings.Contains(err.Error(), env+"=") || !strings.Contains(err.Error(), missing) {
			t.Errorf("%s=%s: %v, want a refusal naming both", env, missing, err)
		}
		o := testOptions(t)
		o.RotationGiven, o.DemoGiven = true, true
		if err := checkWeightVariables(o, lookup); err != nil {
			t.Errorf("%s with its flag given: %v", env, err)
		}
	}
}
