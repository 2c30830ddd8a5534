package main

import (
	"archivekit/internal/cliflags"
	"archivekit/internal/translate/alto"
	"archivekit/internal/translate/guard"
	"archivekit/internal/translate/translator"
)

// orderFlags are the flags of the source-language order and of the end
// rounds, embedded in cli.
type orderFlags struct {
	LangMinLength     string `group:"order" name:"lang-min-length" help:"Source-language order: the fewest letters (in at least 5 distinct words) a unit needs for its detected language to count; 0 detects every unit (precedence: flag, config lang_min_length, TRANSLATE_LANG_MIN_LENGTH, 20)." placeholder:"N"`
	LangMinConfidence string `group:"order" name:"lang-min-confidence" help:"Source-language order: a detection counts only above this confidence; else the unit's own LANG/xml:lang, then the document's language, then the default (precedence: flag, config lang_min_confidence, TRANSLATE_LANG_MIN_CONFIDENCE, 0.2)." placeholder:"X"`
	DefaultSourceLang string `group:"order" name:"default-source-lang" help:"Source-language order: the language of a unit no other rule chose (precedence: flag, config default_source_lang, TRANSLATE_DEFAULT_SOURCE_LANG, cs)." placeholder:"LANG"`
	ElementLang       string `group:"order" name:"element-lang" help:"Source-language order: use or ignore a unit's own LANG/xml:lang/primaryLanguage (ignore: a unit detection did not choose takes the document's language, for OCR engines that label blocks with a configured language; precedence: flag, config element_lang, TRANSLATE_ELEMENT_LANG, use)." placeholder:"use|ignore"`
	RetryRounds       string `group:"order" name:"retry-rounds" help:"End-of-document rounds for the segments the degeneracy guard rejected, 0 to 10; 0 turns them off (precedence: flag, config retry_rounds, TRANSLATE_RETRY_ROUNDS, 1)." placeholder:"N"`
}

// setLangOrder resolves the source-language order and the end rounds:
// each setting from the flag, else the configuration, else the
// environment, else the default. Bad values are usage errors.
func (s *settings) setLangOrder(c *cli, p picker, getenv func(string) string) error {
	type one struct{ flag, val, key, env string }
	pick := func(o one) translator.Setting { return p.setting(o.flag, o.val, o.key, o.env, getenv) }
	v := translator.LangOrderValues{
		MinLength:     pick(one{"lang-min-length", c.LangMinLength, "lang_min_length", translator.EnvLangMinLength}),
		MinConfidence: pick(one{"lang-min-confidence", c.LangMinConfidence, "lang_min_confidence", translator.EnvLangMinConfidence}),
		Default:       pick(one{"default-source-lang", c.DefaultSourceLang, "default_source_lang", translator.EnvDefaultSourceLang}),
		Element:       pick(one{"element-lang", c.ElementLang, "element_lang", translator.EnvElementLang}),
	}
	order, err := translator.ParseLangOrder(alto.DefaultLangOrder(), v)
	if err != nil {
		return cliflags.Usage(err)
	}
	s.Order = order
	s.OrderFrom = map[string]string{}
	for k, st := range map[string]translator.Setting{"min_length": v.MinLength, "min_confidence": v.MinConfidence, "default": v.Default, "element": v.Element} {
		s.OrderFrom[k] = st.From
		if st.Value == "" {
			s.OrderFrom[k] = "default"
		}
	}
	r := pick(one{"retry-rounds", c.RetryRounds, "retry_rounds", guard.RoundsEnv})
	s.RetryRounds, s.RetryRoundsFrom = guard.DefaultRounds, "default"
	if r.Value != "" {
		n, err := guard.ParseRounds(r.From, r.Value)
		if err != nil {
			return cliflags.Usage(err)
		}
		s.RetryRounds, s.RetryRoundsFrom = n, r.From
	}
	return nil
}

// setting resolves a setting with a flag, a configuration key and an
// environment variable (precedence: flag, config, environment; "" for
// none), and names where its value came from: "--flag", "config key" or
// the variable.
func (p picker) setting(flag, val, key, env string, getenv func(string) string) translator.Setting {
	v, from := precedence(p.set[flag], val, p.cfg[key], getenv(env), "")
	switch from {
	case "command line":
		from = "--" + flag
	case "config":
		from = "config " + key
	case "environment":
		from = env
	}
	return translator.Setting{Value: v, From: from}
}

// langOrderConfig is the run metadata's record of the source-language
// order and the end rounds (config.source_lang_order).
func langOrderConfig(s *settings) map[string]any {
	return map[string]any{
		"order":          s.Order.Rules(),
		"element":        string(s.Order.Element),
		"min_length":     s.Order.MinLength,
		"min_confidence": s.Order.MinConfidence,
		"default":        s.Order.Default,
		"from":           s.OrderFrom,
		"retry_rounds":   s.RetryRounds, "retry_rounds_from": s.RetryRoundsFrom,
	}
}
