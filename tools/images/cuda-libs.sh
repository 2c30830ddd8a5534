#!/usr/bin/env bash
# cuda-libs.sh VENV OUT: copies into OUT (flat) the libraries the torch
# wheel of VENV loads for CUDA: libtorch_cuda.so, and every library it needs
# outside the system folders and the CPU tree (libc10_cuda and the nvidia-*
# wheels' CUDA 12.6 runtime, cuBLAS, cuDNN, cuFFT, ...). The wheel's
# libraries search $ORIGIN, so a flat folder beside libtorch_cpu works.
# The licence files of the nvidia-* wheels those libraries come from go to
# OUT-licenses/<wheel>/ (the images' share/doc/archivekit/licenses/nvidia/).
set -euo pipefail
venv=${1:?usage: cuda-libs.sh VENV OUT}; out=${2:?}; lic="$out-licenses"
torch_lib=$("$venv/bin/python" -c 'import os, torch; print(os.path.join(os.path.dirname(torch.__file__), "lib"))')
rm -rf "$out" "$lic" && mkdir -p "$out" "$lic"
cuda="$torch_lib/libtorch_cuda.so"
[ -f "$cuda" ] || { echo "cuda-libs.sh: $cuda missing (the venv's torch is not a CUDA build)" >&2; exit 1; }
{ echo "$cuda"; ldd "$cuda" | awk '$2 == "=>" && $3 ~ /^\// {print $3}'; } | sort -u | while read -r lib; do
  case "$lib" in /lib/*|/lib64/*|/usr/lib/*|/usr/lib64/*) continue ;; esac
  case "$(basename "$lib")" in libtorch_cpu.so|libc10.so|libgomp.so.1|libcudart.so.12|libcupti.so.12) continue ;; esac
  install -m 0755 "$(readlink -f "$lib")" "$out/$(basename "$lib")"
done
# cuDNN and cuBLAS load parts of themselves with dlopen: take each wheel's
# whole lib folder for those two.
for d in cudnn cublas; do
  for f in "$torch_lib"/../../nvidia/$d/lib/*.so*; do
    [ -f "$f" ] && install -m 0755 "$f" "$out/$(basename "$f")"
  done
done
# Licences: the wheel (its dist-info, or the package folder for wheels that
# keep the file there, as cusparselt) of each library copied from site-packages.
site=$(cd "$torch_lib/../.." && pwd)
for f in "$out"/*; do
  src=$(find "$site" -name "$(basename "$f")" -path '*/lib/*' -not -path "$torch_lib/*" | head -1)
  [ -n "$src" ] || continue
  pkg=${src#"$site"/}; pkg=${pkg%/lib/*}                 # nvidia/cublas, cusparselt
  wheel=$(grep -l "^$pkg/lib/" "$site"/*.dist-info/RECORD | head -1); wheel=$(dirname "$wheel")
  name=$(basename "$wheel" .dist-info)
  [ -d "$lic/$name" ] && continue
  mkdir -p "$lic/$name"
  for l in "$wheel"/License.txt "$wheel"/LICENSE* "$site/$pkg"/LICENSE*; do
    [ -f "$l" ] && install -m 0644 "$l" "$lic/$name/"
  done
  [ -n "$(ls "$lic/$name")" ] || { echo "cuda-libs.sh: no licence file for $name" >&2; exit 1; }
done
# Each library searches its own folder only, not the wheel's
# $ORIGIN/../../nvidia/*/lib, outside the tree (tools/install.sh).
for f in "$out"/*; do
  if [ -n "$(patchelf --print-rpath "$f")" ]; then patchelf --force-rpath --set-rpath '$ORIGIN' "$f"; fi
done
echo "cuda-libs.sh: $(ls "$out" | wc -l) libraries, $(du -sh "$out" | cut -f1) in $out"
