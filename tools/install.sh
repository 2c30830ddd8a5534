#!/usr/bin/env bash
# install.sh PREFIX: writes the relocatable archivekit tree under PREFIX
# (called by `make install` and `make dist`, which set the variables below):
#
#   PREFIX/bin/                 every command, RUNPATH $ORIGIN/../lib
#   PREFIX/lib/                 libtshim.so (RUNPATH $ORIGIN) and the libtorch
#                               libraries it loads (libtorch_cpu, libc10,
#                               libgomp, and the CUDA runtime and profiling
#                               libraries libtorch_cpu of the wheel links)
#   PREFIX/share/archivekit/    VERSION, setup/ (default configuration, licence
#                               components, field list), weights/demo/
#   PREFIX/share/doc/archivekit/ README.md and docs/ (the documentation and
#                               the agent skills, docs/skills/),
#                               LICENSE, THIRD_PARTY_NOTICES.md and licenses/:
#                               the licence files of each third-party part the
#                               tree ships (Go modules, crates and the C/C++
#                               code they bundle, the torch wheel's, NVIDIA's)
#
# The tree finds its own files wherever it is moved: the binaries look for
# setup/ and weights/ in <bin>/../share/archivekit (internal/resources) and load
# their libraries from <bin>/../lib. The one system library it needs besides
# glibc and libstdc++ is libvips (Debian: libvips42).
#
# Environment: TSHIM_DIR, CT2_DIR (native builds), GO, GO_LDFLAGS; CARGO_HOME
# (default ~/.cargo) holds the crates `make cargo-fetch` fetched.
set -euo pipefail
prefix=${1:?usage: install.sh PREFIX}
: "${TSHIM_DIR:?}" "${CT2_DIR:?}" "${PDFIUM_DIR:?}" "${GO:=go}" "${GO_LDFLAGS:?}"
command -v patchelf >/dev/null || { echo "install.sh: patchelf is missing (make apt installs it)" >&2; exit 1; }
root=$(cd "$(dirname "$0")/.." && pwd)
tshim="$TSHIM_DIR/lib/libtshim.so"
[ -f "$tshim" ] || { echo "install.sh: $tshim missing (make native)" >&2; exit 1; }

mkdir -p "$prefix/bin" "$prefix/lib" "$prefix/share/archivekit"
prefix=$(cd "$prefix" && pwd)

# Commands: linked against the cache's libtshim, but looking for it (and
# everything it needs) in ../lib relative to themselves.
( cd "$root" && CGO_ENABLED=1 CGO_LDFLAGS="-L$TSHIM_DIR/lib -Wl,-rpath,\$ORIGIN/../lib -L$CT2_DIR" \
  "$GO" build -trimpath -ldflags "$GO_LDFLAGS" -o "$prefix/bin/" ./cmd/... )
# Repository tools, which work in a checkout only: check-version compares the
# work tree's version sources and tag, nativecheck runs on make fixtures'
# models (docs/tools.md).
rm -f "$prefix/bin/check-version" "$prefix/bin/nativecheck"

# Libraries: libtshim and every library it resolves outside the system
# folders (the libtorch wheel's), copied flat into lib/.
install -m 0755 "$tshim" "$prefix/lib/libtshim.so"
patchelf --set-rpath '$ORIGIN' "$prefix/lib/libtshim.so"
ldd "$tshim" | awk '$2 == "=>" && $3 ~ /^\// {print $3}' | while read -r lib; do
  case "$lib" in
    /lib/*|/lib64/*|/usr/lib/*|/usr/lib64/*) continue ;;
  esac
  install -m 0755 "$(readlink -f "$lib")" "$prefix/lib/$(basename "$lib")"
  # The wheel's libraries search $ORIGIN/../../nvidia/*/lib first (the
  # wheel's layout): from lib/, the folder the tree was unpacked into, where
  # another user of a shared /tmp could plant a library. Only lib/ itself.
  patchelf --force-rpath --set-rpath '$ORIGIN' "$prefix/lib/$(basename "$lib")"
done
# PDFium (PDF_RENDERER=pdfium, bindings/pdfium loads it at run time from
# here): libpdfium.so of the pinned pypdfium2 wheel (make pdfium).
install -m 0755 "$PDFIUM_DIR/lib/libpdfium.so" "$prefix/lib/libpdfium.so"

# Shared files: the default set-up files (also embedded in the binaries),
# the demo ensemble, the page-orientation model and the version.
share="$prefix/share/archivekit"
rm -rf "$share/setup" "$share/weights"
mkdir -p "$share/setup/translate" "$share/weights"
install -m 0644 "$root"/setup/config.txt "$root"/setup/para_config.txt "$share/setup/"
install -m 0644 "$root"/setup/translate/*.txt "$share/setup/translate/"
cp -R "$root/weights/demo" "$share/weights/demo"
if [ -d "$root/weights/rotation" ]; then cp -R "$root/weights/rotation" "$share/weights/rotation"; fi
install -m 0644 "$root/VERSION" "$share/VERSION"

# Licences: the project's, the notice of what the tree ships
# (THIRD_PARTY_NOTICES.md), and each third-party part's own licence files.
doc="$prefix/share/doc/archivekit"
rm -rf "$doc" && mkdir -p "$doc/licenses"
install -m 0644 "$root/LICENSE" "$root/THIRD_PARTY_NOTICES.md" "$doc/"
# The documentation, laid out as in the repository so its links hold.
install -m 0644 "$root/README.md" "$doc/"
mkdir -p "$doc/docs" && install -m 0644 "$root"/docs/*.md "$doc/docs/"
# The agent skills (docs/skills/<service>/SKILL.md): how an automated agent
# starts each service, checks it and sends it a sample request.
for skill in "$root"/docs/skills/*/SKILL.md; do
  install -D -m 0644 "$skill" "$doc/docs/skills/$(basename "$(dirname "$skill")")/SKILL.md"
done
# tools/: the export of the published models, which the docs and pageclass's
# missing-model message point to (README.md, export_models.py), the original
# Python pipeline it is checked against (reference_predict.py), the maker
# of a fast classifier's base, which pageclass --train --fastcls's messages
# name (make_fastcls.py), and the Python packages they need
# (requirements.txt, from test/requirements.txt).
mkdir -p "$doc/tools" && install -m 0644 "$root/tools/README.md" "$root/tools/export_models.py" "$root/tools/reference_predict.py" "$root/tools/make_fastcls.py" "$doc/tools/"
install -m 0644 "$root/test/requirements.txt" "$doc/tools/requirements.txt"
# docs/demo-models.md links ../weights/demo/*.png: the same files, in share/archivekit.
ln -sfn ../../archivekit/weights "$doc/weights"
# licences SRC DEST: the licence, copying, notice and patents files at the
# top of the folder SRC into DEST; fails when SRC has none.
licences() {
  local found=0 f
  mkdir -p "$2"
  for f in "$1"/*; do
    case "$(basename "$f" | tr "[:upper:]" "[:lower:]")" in
      licen[cs]e*|copying*|notice*|patents*) [ -f "$f" ] && install -m 0644 "$f" "$2/" && found=1 ;;
    esac
  done
  [ "$found" = 1 ] || { echo "install.sh: no licence file in $1" >&2; return 1; }
}
# Go: the standard library and the modules linked into the commands.
goroot=$("$GO" env GOROOT)
mkdir -p "$doc/licenses/go/std"
install -m 0644 "$goroot/LICENSE" "$goroot/PATENTS" "$doc/licenses/go/std/"
( cd "$root" && "$GO" list -deps -f '{{with .Module}}{{if not .Main}}{{.Path}}@{{.Version}} {{.Dir}}{{end}}{{end}}' ./cmd/... ) \
  | sort -u | while read -r mod dir; do licences "$dir" "$doc/licenses/go/$mod"; done
# Rust: every crate of native/Cargo.lock, and the C and C++ code of the
# bridge that ct2rs, sentencepiece-sys and onig_sys build from their sources.
registry=("${CARGO_HOME:-$HOME/.cargo}"/registry/src/*)
crate_dir() {
  local d
  for d in "${registry[@]}"; do [ -d "$d/$1" ] && { echo "$d/$1"; return; }; done
  echo "install.sh: crate $1 missing from the registry (make cargo-fetch)" >&2; return 1
}
awk '/^\[\[package\]\]/ {n = ""; v = ""} /^name = / {n = $3} /^version = / {v = $3} /^source = / {gsub(/"/, "", n); gsub(/"/, "", v); print n "-" v}' \
  "$root/native/Cargo.lock" | while read -r crate; do
  dir=$(crate_dir "$crate")
  # A few crates package no licence file (ct2rs, sentencepiece, r-efi):
  # their manifest's declaration stands in, the texts are beside it (other
  # crates under the same licences ship them).
  licences "$dir" "$doc/licenses/rust/$crate" 2>/dev/null \
    || { grep -m1 '^license = ' "$dir/Cargo.toml" | sed "s/^license = /$crate ships no licence file; its Cargo.toml declares license = /" \
         > "$doc/licenses/rust/$crate/DECLARED"; }
done
ct2=$(crate_dir "$(awk '/^name = "ct2rs"/ {getline; gsub(/"/, "", $3); print "ct2rs-" $3}' "$root/native/Cargo.lock")")
spm=$(crate_dir "$(awk '/^name = "sentencepiece-sys"/ {getline; gsub(/"/, "", $3); print "sentencepiece-sys-" $3}' "$root/native/Cargo.lock")")
onig=$(crate_dir "$(awk '/^name = "onig_sys"/ {getline; gsub(/"/, "", $3); print "onig_sys-" $3}' "$root/native/Cargo.lock")")
licences "$ct2/CTranslate2" "$doc/licenses/c/CTranslate2"
for p in ruy cpu_features spdlog ruy/third_party/cpuinfo ruy/third_party/cpuinfo/deps/clog; do
  licences "$ct2/CTranslate2/third_party/$p" "$doc/licenses/c/CTranslate2/$p"
done
licences "$spm/source" "$doc/licenses/c/sentencepiece"
for p in absl darts_clone esaxx protobuf-lite; do
  licences "$spm/source/third_party/$p" "$doc/licenses/c/sentencepiece/$p"
done
licences "$onig/oniguruma" "$doc/licenses/c/oniguruma"
# libtorch: the torch wheel's licence and notice (which list what it
# bundles) and the licences of the NVIDIA wheels whose libraries lib/ holds.
torch_lib=$(dirname "$(ldd "$tshim" | awk '$1 == "libtorch_cpu.so" {print $3}')")
site=$(cd "$torch_lib/../.." && pwd)
wheel=("$site"/torch-*.dist-info)
licences "${wheel[0]}" "$doc/licenses/torch"
# GCC's OpenMP runtime (libgomp.so.1, from the wheel) is GPL-3 with the GCC
# Runtime Library Exception: both texts, from Debian's base-files and
# gcc-12-base (THIRD_PARTY_NOTICES.md section 3).
gomp_lic="$doc/licenses/gomp"
mkdir -p "$gomp_lic"
install -m 0644 /usr/share/common-licenses/GPL-3 "$gomp_lic/COPYING3"
sed -n '/^GCC RUNTIME LIBRARY EXCEPTION$/,/^requirements of the license of GCC\./p' \
  /usr/share/doc/gcc-12-base/copyright > "$gomp_lic/COPYING.RUNTIME"
grep -q 'requirements of the license of GCC' "$gomp_lic/COPYING.RUNTIME" || { echo "install.sh: the GCC Runtime Library Exception was not found in /usr/share/doc/gcc-12-base/copyright" >&2; exit 1; }
# PDFium: the wheel's licence files (PDFium's and those of what libpdfium
# bundles: FreeType, ICU, libjpeg-turbo, OpenJPEG, ...).
mkdir -p "$doc/licenses/pdfium" && cp -R "$PDFIUM_DIR/licenses/." "$doc/licenses/pdfium/"
for lib in "$prefix"/lib/libcudart.so* "$prefix"/lib/libcupti.so*; do
  [ -e "$lib" ] || continue
  case "$(basename "$lib")" in libcudart*) w=nvidia_cuda_runtime_cu12 ;; *) w=nvidia_cuda_cupti_cu12 ;; esac
  wheel=("$site/$w"-*.dist-info)
  licences "${wheel[0]}" "$doc/licenses/nvidia/$(basename "${wheel[0]}" .dist-info)"
done
chmod -R a+rX "$prefix/bin" "$prefix/lib" "$share" "$doc"
echo "installed archivekit $(cat "$root/VERSION") into $prefix"
