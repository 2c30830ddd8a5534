#!/usr/bin/env bash
# test/gpu/bundle.sh OUTDIR [PAGES_DIR]: what test/gpu/run.sh needs on a GPU
# machine that has PyTorch (with CUDA) but no Go, no libvips and no network
# (make gpu-bundle; started from the scripts of ../shared/gpu). Run from the
# project root with the native environment (make -s env). OUTDIR gets:
# pageclass and the bindings/torch test binary (stripped, xz), the libvips
# closure of pageclass (without glibc, libstdc++ and libtorch; libicudata
# replaced by a stub: PNG/JPEG/TIFF decoding never uses ICU data), a 40-page
# subset of PAGES_DIR (every fifth page) and a stamp of the sources it was
# built from. The shim's sources (csrc/), the fixture maker and the demo
# models travel with the working tree. About 30 MB.
set -euo pipefail
out=$1
pages=${2:-../shared/data/pages}
[ -d "$pages" ] || { echo "bundle: no pages folder $pages" >&2; exit 1; }
rm -rf "$out" && mkdir -p "$out/pages40"
go build -ldflags "-s -w" -o "$out/pageclass" ./cmd/pageclass
go build -ldflags "-s -w" -o "$out/pageclass-api" ./cmd/pageclass-api
go test -c -ldflags "-s -w" -o "$out/torch.test" ./bindings/torch
libs=$(mktemp -d)
trap 'rm -rf "$libs"' EXIT
ldd "$out/pageclass" | awk '/=>/ {print $3}' |
  grep -vE 'libc\.so|libm\.so|libpthread|libdl\.so|librt\.so|ld-linux|libstdc\+\+|libgcc_s|libtshim|libtorch|libc10|libgomp|libcudart|libcupti|libnv' |
  sort -u | xargs cp -L -t "$libs"
icu=$(find "$libs" -name "libicudata.so.*" | head -1)
if [ -n "$icu" ]; then
  echo 'char icudt72_dat[1];' > "$libs/stub.c"
  gcc -shared -fPIC -Wl,-soname,"$(basename "$icu")" -o "$icu" "$libs/stub.c"
  rm "$libs/stub.c"
fi
tar -cf - -C "$libs" . | xz -T0 -6 > "$out/libs.tar.xz"
for b in pageclass pageclass-api torch.test; do xz -T0 -6 -f "$out/$b"; done
find "$pages" -name '*.png' | sort | awk 'NR%5==0' | head -40 | while read -r f; do
  cp "$f" "$out/pages40/$(basename "$(dirname "$f")")__$(basename "$f")"
done
git rev-parse HEAD > "$out/commit" 2>/dev/null || true
du -sh "$out"
