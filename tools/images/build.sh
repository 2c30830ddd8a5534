#!/usr/bin/env bash
# build.sh ACCEL TARGET...: builds the images of Dockerfile.ACCEL (cpu or
# cuda) from the context build/images (make images writes it) and prints
# each image's build time and size; ACCEL postgres builds
# tools/images/Dockerfile.postgres (the job store, target jobs-postgres)
# from the context tools/images. Environment: PODMAN, IMAGE_REGISTRY,
# IMAGE_TAG, RUNNER_REF, BASE_IMAGE (set by make).
set -euo pipefail
accel=${1:?usage: build.sh cpu|cuda|postgres TARGET...}; shift
root=$(cd "$(dirname "$0")/../.." && pwd)
file="$root/Dockerfile.$accel" context="$root/build/images"
if [ "$accel" = postgres ]; then
  file="$root/tools/images/Dockerfile.postgres" context="$root/tools/images"
fi
: "${PODMAN:=podman}" "${IMAGE_REGISTRY:=localhost/archivekit}" "${IMAGE_TAG:?}" "${RUNNER_REF:=local}"
: "${BASE_IMAGE:=localhost/archivekit-base:bookworm}"
suffix=""; [ "$accel" != cuda ] || suffix="-$accel"
report="$root/build/images-$accel.tsv"
printf 'image\tbuild_s\tsize_mb\n' > "$report.tmp"
for target in "$@"; do
  image="$IMAGE_REGISTRY/$target:$IMAGE_TAG$suffix"
  # the image this build replaces, removed once untagged: a machine that
  # builds again and again (CI) would otherwise keep every earlier one
  old=$("$PODMAN" image inspect --format '{{.Id}}' "$image" 2>/dev/null || true)
  start=$(date +%s)
  # Docker format keeps HEALTHCHECK (OCI drops it).
  "$PODMAN" build --quiet --format docker --layers -f "$file" --target "$target" \
    --build-arg BASE="$BASE_IMAGE" --build-arg RUNNER_REF="$RUNNER_REF" \
    --build-arg REGISTRY="$IMAGE_REGISTRY" --build-arg TAG="$IMAGE_TAG" \
    -t "$image" "$context" >/dev/null
  secs=$(( $(date +%s) - start ))
  if [ -n "$old" ] && [ "$old" != "$("$PODMAN" image inspect --format '{{.Id}}' "$image")" ]; then
    # kept when another tag, a container or a later build still uses it
    "$PODMAN" rmi "$old" >/dev/null 2>&1 || true
  fi
  size=$("$PODMAN" image inspect --format '{{.Size}}' "$image")
  printf '%s\t%s\t%s\n' "$image" "$secs" "$(( size / 1000000 ))" >> "$report.tmp"
  echo "built $image in ${secs}s ($(( size / 1000000 )) MB)"
done
mv "$report.tmp" "$report"
