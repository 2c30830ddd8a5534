package settings

import (
	"archivekit/internal/config"
	"testing"

	"archivekit/internal/pageclass/registry"
)

// TestShippedValuesOfSpec pins setup/config.txt to the table of spec
// page-classification 2.8, key by key, as the spec writes the values.
// Where the spec describes a value instead of giving it, the comment says
// which shipped value stands for it.
func TestShippedValuesOfSpec(t *testing.T) {
	f, err := config.Load(shippedPath())
	if err != nil {
		t.Fatal(err)
	}
	spec := []struct{ section, key, want string }{
		{"OUTPUT", "FOLDER_RESULTS", "./result"},
		{"OUTPUT", "FOLDER_CPOINTS", "./checkpoint"},
		{"OUTPUT", "FOLDER_MODELS", "./model"},
		{"EVAL", "FOLDER_PAGES", "./small_data_samples"},
		{"TRAIN", "FOLDER_PAGES", "./small_data_samples"},
		{"TRAIN", "cross_runs", "0"},
		{"TRAIN", "folds_csv", ""},
		{"TRAIN", "test_size", "0.1"},
		{"TRAIN", "log_step", "100"},
		{"TRAIN", "epochs", "3"},
		{"TRAIN", "lr", "5e-5"},
		{"TRAIN", "max_categ", "14000"},
		{"TRAIN", "Training", "False"},
		{"TRAIN", "Testing", "False"},
		{"SETUP", "files_format", "png"},
		{"SETUP", "seed", "420"},
		{"SETUP", "base_model", "v4.4"}, // "regnety_160 swag fine-tuned": checked below
		{"SETUP", "batch", "16"},
		{"SETUP", "top_N", "3"},
		{"SETUP", "raw", "False"},
		{"SETUP", "inner", "True"},
		{"FASTCLS", "use_fastcls", "False"},
		{"FASTCLS", "fastcls_base", "small"}, // the small variant's short tag
		{"FASTCLS", "fastcls_imgsz", "224"},
		{"FASTCLS", "fastcls_epochs", "30"},
		{"FASTCLS", "fastcls_patience", "20"},
		{"FASTCLS", "fastcls_lr0", "0"},
		{"FASTCLS", "fastcls_dropout", "0.1"},
		{"FASTCLS", "fastcls_cache", "True"},
		{"INPUT", "FOLDER_INPUT", "./small_data_samples"},
		{"INPUT", "chunk_size", "100"},
		{"INPUT", "chunking", "False"},
		{"HUB", "repo_name", ""}, // ships empty on purpose (README: --hub refuses to run until it is set)
		{"HUB", "token", ""},
		{"HUB", "use_hub", "False"},
		{"HUB", "revision", "main"},
		{"HUB", "latest", "v4.4"},
		{"DOCUMENT", "document_json", ""},
		{"DOCUMENT", "document_json_out", ""},
		{"DOCUMENT", "document_json_dir", ""},
		{"DOCUMENT", "document_json_out_dir", ""},
		{"DOCUMENT", "strict", "False"},
	}
	for _, s := range spec {
		got, ok := f.Get(s.section, s.key)
		if !ok || got != s.want {
			t.Errorf("[%s] %s = %q (present %v), want %q (spec 2.8)", s.section, s.key, got, ok, s.want)
		}
	}
	if m, ok := registry.Lookup("v4.4"); !ok || m.Base != "regnety_160" {
		t.Errorf("[SETUP] base_model v4.4 is %+v, want regnety_160 (spec 2.8)", m)
	}
}
