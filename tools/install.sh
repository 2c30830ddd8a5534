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
#
# The tree finds its own files wherever it is moved: the binaries look for
# setup/ and weights/ in <bin>/../share/archivekit (internal/resources) and load
# their libraries from <bin>/../lib. The one system library it needs besides
# glibc and libstdc++ is libvips (Debian: libvips42).
#
# Environment: TSHIM_DIR, CT2_DIR (native builds), GO, GO_LDFLAGS.
set -euo pipefail
prefix=${1:?usage: install.sh PREFIX}
: "${TSHIM_DIR:?}" "${CT2_DIR:?}" "${GO:=go}" "${GO_LDFLAGS:?}"
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

# Libraries: libtshim and every library it resolves outside the system
# folders (the libtorch wheel's), copied flat into lib/.
install -m 0755 "$tshim" "$prefix/lib/libtshim.so"
patchelf --set-rpath '$ORIGIN' "$prefix/lib/libtshim.so"
ldd "$tshim" | awk '$2 == "=>" && $3 ~ /^\// {print $3}' | while read -r lib; do
  case "$lib" in
    /lib/*|/lib64/*|/usr/lib/*|/usr/lib64/*) continue ;;
  esac
  install -m 0755 "$(readlink -f "$lib")" "$prefix/lib/$(basename "$lib")"
done
# The wheel's libraries already search $ORIGIN (their RPATH ends with it).

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
chmod -R a+rX "$prefix/bin" "$prefix/lib" "$share"
echo "installed archivekit $(cat "$root/VERSION") into $prefix"
