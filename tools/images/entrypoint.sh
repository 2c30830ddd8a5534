#!/bin/sh
# entrypoint COMMAND [ARG...]: the images' entry point. It writes one log
# record (the shared JSON format, on stdout like the services) saying which accelerator the process will
# use, then replaces itself with COMMAND, so signals (SIGTERM from the
# engine) reach the Go process directly, which runs as PID 1.
#
# ARCHIVEKIT_ACCELERATOR (set by the build file) is cpu, cuda, or cpu-build
# (an image of the CUDA build file whose command has no CUDA support: the
# translator, whose CTranslate2 bridge is the CPU build). A CUDA image
# started where no GPU is visible runs on the CPU and says so at WARN (the
# level name of the Go commands' records); a GPU seen by a CPU image or a
# CPU build is also a WARN record (it will not be used).
set -eu

level=INFO
gpus=0
for d in /dev/nvidia[0-9]*; do
  [ -e "$d" ] && gpus=$((gpus + 1))
done
driver=no
for d in /usr/lib/x86_64-linux-gnu /usr/lib64 /usr/lib /usr/local/nvidia/lib64; do
  [ -e "$d/libcuda.so.1" ] && driver=yes && break
done
case "${ARCHIVEKIT_ACCELERATOR:-cpu}" in
cuda)
  if [ "$gpus" -gt 0 ] && [ "$driver" = yes ]; then
    device=cuda
    msg="GPU probe: $gpus NVIDIA device(s) and the driver library are visible: running on CUDA"
  else
    device=cpu level=WARN
    msg="GPU probe: no usable GPU (NVIDIA devices: $gpus, driver library libcuda.so.1: $driver): this CUDA image falls back to the CPU"
  fi ;;
cpu-build)
  device=cpu
  if [ "$gpus" -gt 0 ]; then
    level=WARN
    msg="GPU probe: $gpus NVIDIA device(s) visible, but ${1##*/} in this image is a CPU build: running on the CPU"
  else
    msg="GPU probe: no GPU visible; ${1##*/} in this image is a CPU build: running on the CPU"
  fi ;;
*)
  device=cpu
  if [ "$gpus" -gt 0 ]; then
    level=WARN
    msg="GPU probe: $gpus NVIDIA device(s) visible, but this is the CPU image: running on the CPU (use the CUDA image)"
  else
    msg="GPU probe: no GPU visible: running on the CPU (CPU image)"
  fi ;;
esac
# LOG_LEVEL as the commands read it: a record below the level is not written.
case "$(printf %s "${LOG_LEVEL:-INFO}" | tr a-z A-Z)" in
DEBUG|INFO) show=yes ;;
WARN|WARNING) [ "$level" = WARN ] && show=yes || show=no ;;
*) show=no ;;
esac
if [ "$show" = yes ]; then
  printf '{"time":"%s","level":"%s","msg":"%s","accelerator":"%s","device":"%s","command":"%s"}\n' \
    "$(date -u +%Y-%m-%dT%H:%M:%S.%NZ)" "$level" "$msg" "${ARCHIVEKIT_ACCELERATOR:-cpu}" "$device" "${1##*/}"
fi
exec "$@"
