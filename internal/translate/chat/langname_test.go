package chat

import (
	"strings"
	"testing"
)

// The prompt names every language in English, those outside the twenty
// of spec 10.2 too; a code nobody names is written as it is.
func TestSystemPromptLanguageNames(t *testing.T) {
	for _, c := range []struct{ src, tgt, want string }{
		{"cs", "en", "from Czech into English"},
		{"uk", "en", "from Ukrainian into English"},
		{"el", "en", "from Greek into English"},
		{"he", "de", "from Hebrew into German"},
		{"ka", "en", "from Georgian into English"},
		{"hy", "en", "from Armenian into English"},
		{"ar", "en", "from Arabic into English"},
		{"la", "en", "from Latin into English"},
		{"yue", "en", "from Cantonese into English"},
		{"en", "el", "from English into Greek"},
		{"qqx", "en", "from qqx into English"},
	} {
		if p := SystemPrompt(c.src, c.tgt, nil); !strings.Contains(p, c.want) {
			t.Errorf("SystemPrompt(%s, %s) does not say %q:\n%s", c.src, c.tgt, c.want, strings.SplitN(p, "\n", 2)[0])
		}
	}
}
