// Package licence resolves the licence of a run's outputs from the licences
// of the components that took part in it. It is shared by every tool of the
// family (pageclass, translate).
//
// Components are declared in an INI file (setup/para_config.txt), one section
// per component:
//
//	[vit_models]
//	license     = MIT
//	license_url = https://opensource.org/license/mit/   ; optional, defaults from the table
//	counts_when = always                                 ; comma list of conditions, or "always"
//	description = fine-tuned classifier weights          ; optional, free text
//
// A tool names the conditions that held in a run (for example "training" or
// "fastcls"); Components.Counting returns the components that counted, and
// Components.Resolve returns the most restrictive licence among them with the
// full derivation.
//
// Ranking (higher is more restrictive; the highest-ranked counted component
// determines the effective licence):
//
//	rank  class                        licences
//	1     permissive                   MIT, BSD-2/3-Clause, ISC, Zlib, CC0-1.0, Unlicense
//	2     permissive with patent terms Apache-2.0
//	3     attribution (data)           CC BY 4.0
//	4     weak copyleft                MPL-2.0, LGPL-2.1, LGPL-3.0, EPL-2.0
//	5     strong copyleft              GPL-2.0, GPL-3.0
//	6     share-alike (data)           CC BY-SA 4.0
//	7     network copyleft             AGPL-3.0
//	8     non-commercial               CC BY-NC 4.0
//	9     non-commercial share-alike   CC BY-NC-SA 4.0
//	10    unknown                      any unrecognised licence string, and any
//	                                   component not declared in the file (UNKNOWN)
//
// Non-commercial terms rank above every copyleft licence: a copyleft licence
// still allows commercial use, a non-commercial one does not. So a
// fast-classifier run (AGPL-3.0) that also trains on CC BY-NC 4.0 data
// resolves to CC BY-NC 4.0. An unknown licence ranks highest and carries both
// the non-commercial and the share-alike flag, the safe assumption.
//
// The flags of a Resolution (non-commercial, share-alike, copyleft) are the
// union over all counted components: obligations of a lower-ranked component
// still apply, and a warning says so when the effective licence does not carry
// them itself.
package licence

import (
	"strings"
	"unicode"
)

// Licence is one entry of the ranking table.
type Licence struct {
	// ID is the canonical name written to run metadata, e.g. "CC BY-NC 4.0".
	ID string `json:"license"`
	// URL points at the licence text.
	URL string `json:"license_url"`
	// Rank orders licences by restrictiveness; see the package comment.
	Rank int `json:"rank"`
	// NonCommercial is set when commercial use is not allowed.
	NonCommercial bool `json:"is_non_commercial"`
	// ShareAlike is set when derived material must carry the same licence
	// (Creative Commons share-alike terms).
	ShareAlike bool `json:"is_share_alike"`
	// Copyleft is set when derived works must be released under the same or
	// a compatible licence (weak or strong copyleft, or share-alike).
	Copyleft bool `json:"is_copyleft"`
	aliases  []string
}

// RankUnknown is the rank of an unrecognised or undeclared licence.
const RankUnknown = 10

// Unknown is the licence name recorded for a component that is not declared.
const Unknown = "UNKNOWN"

var table = []Licence{
	{ID: "MIT", URL: "https://opensource.org/license/mit/", Rank: 1, aliases: []string{"MIT License", "Expat"}},
	{ID: "BSD-2-Clause", URL: "https://opensource.org/license/bsd-2-clause/", Rank: 1, aliases: []string{"Simplified BSD"}},
	{ID: "BSD-3-Clause", URL: "https://opensource.org/license/bsd-3-clause/", Rank: 1, aliases: []string{"BSD", "New BSD", "Modified BSD"}},
	{ID: "ISC", URL: "https://opensource.org/license/isc-license-txt/", Rank: 1},
	{ID: "Zlib", URL: "https://opensource.org/license/zlib/", Rank: 1},
	{ID: "CC0 1.0", URL: "https://creativecommons.org/publicdomain/zero/1.0/", Rank: 1, aliases: []string{"CC0"}},
	{ID: "Unlicense", URL: "https://unlicense.org/", Rank: 1, aliases: []string{"The Unlicense"}},
	{ID: "Apache-2.0", URL: "https://www.apache.org/licenses/LICENSE-2.0", Rank: 2, aliases: []string{"Apache 2", "Apache License 2.0", "Apache License, Version 2.0", "ASL 2.0"}},
	{ID: "CC BY 4.0", URL: "https://creativecommons.org/licenses/by/4.0/", Rank: 3, aliases: []string{"CC-BY"}},
	{ID: "MPL-2.0", URL: "https://www.mozilla.org/en-US/MPL/2.0/", Rank: 4, Copyleft: true, aliases: []string{"MPL 2", "Mozilla Public License 2.0"}},
	{ID: "LGPL-2.1", URL: "https://www.gnu.org/licenses/old-licenses/lgpl-2.1.html", Rank: 4, Copyleft: true, aliases: []string{"LGPL-2.1-only", "LGPL-2.1-or-later", "LGPLv2.1"}},
	{ID: "LGPL-3.0", URL: "https://www.gnu.org/licenses/lgpl-3.0.html", Rank: 4, Copyleft: true, aliases: []string{"LGPL-3.0-only", "LGPL-3.0-or-later", "LGPLv3", "LGPL-3"}},
	{ID: "EPL-2.0", URL: "https://www.eclipse.org/legal/epl-2.0/", Rank: 4, Copyleft: true},
	{ID: "GPL-2.0", URL: "https://www.gnu.org/licenses/old-licenses/gpl-2.0.html", Rank: 5, Copyleft: true, aliases: []string{"GPL-2.0-only", "GPL-2.0-or-later", "GPLv2", "GPL-2"}},
	{ID: "GPL-3.0", URL: "https://www.gnu.org/licenses/gpl-3.0.html", Rank: 5, Copyleft: true, aliases: []string{"GPL-3.0-only", "GPL-3.0-or-later", "GPLv3", "GPL-3"}},
	{ID: "CC BY-SA 4.0", URL: "https://creativecommons.org/licenses/by-sa/4.0/", Rank: 6, ShareAlike: true, Copyleft: true},
	{ID: "AGPL-3.0", URL: "https://www.gnu.org/licenses/agpl-3.0.html", Rank: 7, Copyleft: true, aliases: []string{"AGPL-3.0-only", "AGPL-3.0-or-later", "AGPLv3", "AGPL-3", "GNU AGPL v3"}},
	{ID: "CC BY-NC 4.0", URL: "https://creativecommons.org/licenses/by-nc/4.0/", Rank: 8, NonCommercial: true},
	{ID: "CC BY-NC-SA 4.0", URL: "https://creativecommons.org/licenses/by-nc-sa/4.0/", Rank: 9, NonCommercial: true, ShareAlike: true, Copyleft: true},
}

var byKey = func() map[string]Licence {
	m := map[string]Licence{}
	for _, l := range table {
		m[normalise(l.ID)] = l
		for _, a := range l.aliases {
			m[normalise(a)] = l
		}
	}
	return m
}()

// Table returns the ranking table, least restrictive first.
func Table() []Licence {
	out := make([]Licence, len(table))
	copy(out, table)
	return out
}

// Lookup finds a licence by name. Matching ignores case, and treats runs of
// spaces, underscores, commas and hyphens alike, so "CC BY-NC 4.0",
// "CC-BY-NC-4.0" and "cc_by_nc_4.0" are the same licence. ok is false for an
// unrecognised string; the returned Licence then ranks RankUnknown, keeps the
// string as its ID and carries the non-commercial and share-alike flags.
func Lookup(name string) (l Licence, ok bool) {
	if l, ok := byKey[normalise(name)]; ok {
		return l, true
	}
	id := strings.TrimSpace(name)
	if id == "" {
		id = Unknown
	}
	return Licence{ID: id, Rank: RankUnknown, NonCommercial: true, ShareAlike: true, Copyleft: true}, false
}

// normalise upper-cases s and turns every run of characters other than
// letters, digits, '.' and '+' into one '-'.
func normalise(s string) string {
	var b strings.Builder
	dash := false
	for _, r := range strings.ToUpper(strings.TrimSpace(s)) {
		if unicode.IsLetter(r) || unicode.IsDigit(r) || r == '.' || r == '+' {
			if dash && b.Len() > 0 {
				b.WriteByte('-')
			}
			dash = false
			b.WriteRune(r)
			continue
		}
		dash = true
	}
	return b.String()
}
