package testenv

import (
	"os"
	"testing"
)

// EnvFixtures names the folder of `make fixtures` (tiny models, reference outputs).
const EnvFixtures = "ARCHIVEKIT_FIXTURES"

// Fixtures returns the fixture folder ($ARCHIVEKIT_FIXTURES); the test is
// skipped when it is unset, since the models come from `make fixtures`.
func Fixtures(t testing.TB) string {
	t.Helper()
	d := os.Getenv(EnvFixtures)
	if d == "" {
		t.Skip(EnvFixtures + " is not set: run the native tests through `make test` (or with the environment of `make -s env`)")
	}
	return d
}
