// Package setup embeds the shipped default set-up files (the classifier's
// and the translator's configuration, licence components and field list) so
// that every binary has them when no file is found on disk. The files in
// this folder are the only copy: they are what a checkout reads, what
// `make install` copies to share/archivekit/setup, and what is embedded.
package setup

import "embed"

// FS holds the embedded files under their names relative to this folder
// (config.txt, translate/amcr-fields.txt, ...).
//
//go:embed config.txt para_config.txt translate/config.txt translate/para_config.txt translate/amcr-fields.txt
var FS embed.FS
