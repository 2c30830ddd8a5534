package ct2backend

import "testing"

// TestSpecDefaults pins the CT2_* defaults of spec translation 8
// (CT2_MODEL_FAMILY llm, CT2_DEVICE cpu, CT2_COMPUTE_TYPE int8, length guard
// 0.25 to 4.0) and the README's additions (CT2_MAX_LENGTH 512,
// CT2_MAX_INPUT_CHARS 1000), as a configuration with nothing set gets them.
func TestSpecDefaults(t *testing.T) {
	c, err := ConfigFromEnv(func(k string) string {
		if k == "CT2_MODEL_DIR" {
			return t.TempDir()
		}
		return ""
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := c.defaults(); err != nil {
		t.Fatal(err)
	}
	checks := []struct {
		name      string
		got, want any
	}{
		{"CT2_MODEL_FAMILY", c.Family, "llm"},
		{"CT2_DEVICE", c.Device, "cpu"},
		{"CT2_COMPUTE_TYPE", c.ComputeType, "int8"},
		{"CT2_GUARD_MIN_RATIO", c.GuardMin, 0.25},
		{"CT2_GUARD_MAX_RATIO", c.GuardMax, 4.0},
		{"CT2_MAX_LENGTH", c.MaxLength, 512},
		{"CT2_MAX_INPUT_CHARS", c.MaxInputChars, 1000},
		{"CT2_LANGUAGES", len(c.Languages), 0},
	}
	for _, ch := range checks {
		if ch.got != ch.want {
			t.Errorf("%s defaults to %v, want %v", ch.name, ch.got, ch.want)
		}
	}
}
