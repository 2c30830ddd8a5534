package translator

import (
	"sort"
	"strings"
	"sync"

	"archivekit/internal/licence"
	"archivekit/internal/translate/vocab"
)

// Licence component names (spec 10.3). They are the section names of the
// translator's components file (setup/translate/para_config.txt); a name
// used here but not declared there resolves as UNKNOWN, the most
// restrictive licence.
const (
	// ComponentLangID is the language-identification library
	// (lingua-go, langid.LibraryLicense); it counts when detection ran.
	ComponentLangID = "langid_lingua"
	// ComponentMTAPI is the hosted translation engine; it counts when the
	// mtapi backend was asked to translate.
	ComponentMTAPI = "mtapi_engine"
	// ComponentLemmatizerEngine and ComponentLemmatizerModels count when
	// vocabulary lemma matching ran (the lemmatiser answered).
	ComponentLemmatizerEngine = "lemmatizer_engine"
	ComponentLemmatizerModels = "lemmatizer_models"
	// ComponentRecordsVocabulary and ComponentThesaurusData count when a
	// vocabulary holding their terms was loaded.
	ComponentRecordsVocabulary = "records_vocabulary"
	ComponentThesaurusData     = "thesaurus_data"
	// ComponentChatProvider counts when the chat_compatible backend is used.
	ComponentChatProvider = "chat_provider"
	// ComponentCT2Runtime counts when the ct2 backend is used, together with
	// the model of its family (CT2ModelComponent).
	ComponentCT2Runtime = "ct2_runtime"
)

// CT2ModelComponent names the licence component of a ct2 model family
// ("llm", "nmt1", "nmt2", "nmt3"): "ct2_<family>_model". An unknown
// family gives a name no components file declares, so it resolves UNKNOWN.
func CT2ModelComponent(family string) string {
	return "ct2_" + strings.ToLower(strings.TrimSpace(family)) + "_model"
}

// BackendComponents returns the components that count when the named
// backend is used; family is CT2_MODEL_FAMILY (ct2 only, "" means llm).
func BackendComponents(name, family string) []string {
	switch name {
	case "mtapi":
		return []string{ComponentMTAPI}
	case "chat_compatible":
		return []string{ComponentChatProvider}
	case "ct2":
		if family == "" {
			family = "llm"
		}
		return []string{ComponentCT2Runtime, CT2ModelComponent(family)}
	}
	// An unknown backend is its own (undeclared) component.
	return []string{name}
}

// VocabularyComponents returns the data components a loaded vocabulary
// brings in. Rows of the five-column form name their harvest in the source
// column: an origin mentioning the thesaurus ("thesaurus", "teater",
// "tezaurus") counts the thesaurus data, any other the records vocabulary.
// The two-column form does not say where its terms came from, so both
// count (the safe assumption). An empty vocabulary counts nothing.
func VocabularyComponents(v *vocab.Vocabulary) []string {
	if v == nil || v.Len() == 0 {
		return nil
	}
	records, thesaurus := false, false
	for _, e := range v.Entries {
		o := strings.ToLower(e.Origin)
		switch {
		case o == "":
			records, thesaurus = true, true
		case strings.Contains(o, "thesaur") || strings.Contains(o, "teater") || strings.Contains(o, "tezaur"):
			thesaurus = true
		default:
			records = true
		}
	}
	var out []string
	if records {
		out = append(out, ComponentRecordsVocabulary)
	}
	if thesaurus {
		out = append(out, ComponentThesaurusData)
	}
	return out
}

// Usage collects the licence components that counted in a run, at the moment
// they are used, so a run that fails part-way still reports them. It is safe
// for concurrent use; the zero value is ready.
type Usage struct {
	mu    sync.Mutex
	names []string
}

// Add records components (duplicates are kept once, first use first).
func (u *Usage) Add(names ...string) {
	if u == nil {
		return
	}
	u.mu.Lock()
	defer u.mu.Unlock()
outer:
	for _, n := range names {
		for _, have := range u.names {
			if have == n {
				continue outer
			}
		}
		u.names = append(u.names, n)
	}
}

// Components returns the recorded components in first-use order.
func (u *Usage) Components() []string {
	if u == nil {
		return nil
	}
	u.mu.Lock()
	defer u.mu.Unlock()
	return append([]string(nil), u.names...)
}

// Resolve resolves the run's licence from the components that counted,
// in the order of the components file (then undeclared ones, sorted), so
// the derivation reads the same whatever order they were used in.
func Resolve(c *licence.Components, used []string) licence.Resolution {
	set := map[string]bool{}
	for _, n := range used {
		set[n] = true
	}
	var names []string
	for _, comp := range c.All() {
		if set[comp.Name] {
			names = append(names, comp.Name)
			delete(set, comp.Name)
		}
	}
	var rest []string
	for n := range set {
		rest = append(rest, n)
	}
	sort.Strings(rest)
	return c.Resolve(append(names, rest...)...)
}
