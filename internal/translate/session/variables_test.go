package session

import (
	"bytes"
	"log/slog"
	"slices"
	"strings"
	"testing"

	"archivekit/internal/translate/chat"
	"archivekit/internal/translate/ct2backend"
	"archivekit/internal/translate/mtapi"
	"archivekit/internal/translate/vocab"
)

// TestWarnUnknownVariables: each backend names the variables of its prefix
// it does not read (a misspelt MTAPI_MAXRETRIES or CT2_MAXLENGTH was
// ignored without a word), and not those it reads, nor other backends'.
func TestWarnUnknownVariables(t *testing.T) {
	environ := []string{"MTAPI_MAX_RETRIES=2", "MTAPI_MAXRETRIES=2", "LLM_MODEL=x", "LLM_MODLE=x", "CT2_MODEL_DIR=/m",
		"CT2_MAXLENGTH=8", "CT2_MAX_LENGTH=8", "PATH=/bin"}
	for _, c := range []struct {
		backend string
		want    []string
	}{
		{mtapi.Name, []string{"MTAPI_MAXRETRIES"}},
		{chat.Name, []string{"LLM_MODLE"}},
		{ct2backend.Name, []string{"CT2_MAXLENGTH"}},
	} {
		var buf bytes.Buffer
		WarnUnknownVariables(slog.New(slog.NewTextHandler(&buf, nil)), c.backend, environ)
		var named []string
		for _, line := range strings.Split(strings.TrimSpace(buf.String()), "\n") {
			if _, v, ok := strings.Cut(line, " variable="); ok {
				named = append(named, strings.Fields(v)[0])
			}
		}
		if !slices.Equal(named, c.want) || !strings.Contains(buf.String(), "not read by the "+c.backend+" backend: misspelt?") {
			t.Errorf("%s: warned of %q, want %q:\n%s", c.backend, named, c.want, buf.String())
		}
	}
}

// TestVariablesKnown: every variable with its backend's prefix that a
// backend's configuration reads is among those WarnUnknownVariables knows
// (else setting it rightly would be called misspelt).
func TestVariablesKnown(t *testing.T) {
	for _, c := range []struct {
		prefix string
		known  []string
		read   func(getenv func(string) string)
	}{
		{"MTAPI_", mtapi.Variables, func(g func(string) string) { mtapi.ConfigFromEnv(g) }},
		{"LLM_", chat.Variables, func(g func(string) string) {
			chat.ConfigFromEnv(g)
			vocab.MaxGlossaryTermsFromEnv(g)
		}},
	} {
		var read []string
		c.read(func(k string) string {
			read = append(read, k)
			switch k {
			case "LLM_BASE_URL":
				return "http://127.0.0.1:1/v1"
			case "LLM_MODEL":
				return "m"
			}
			return ""
		})
		for _, k := range read {
			if strings.HasPrefix(k, c.prefix) && !slices.Contains(c.known, k) {
				t.Errorf("%s is read but not among the known %s variables", k, c.prefix)
			}
		}
	}
}
