#!/usr/bin/env bash
# gate.sh: the pre-publication checks of the page-classification
# specification (section 9, "Checks run against the service image") against
# each service image, and a batch run of each batch image, with podman.
# Writes build/image-test-<accel>.tsv (image, check, result, detail) and
# exits 1 when any check fails.
#
# Service checks, each on its own container (--read-only root, tmpfs /tmp):
#   healthy    the container's own healthcheck passes within 330 s
#              (podman healthcheck run, polled: periodic checks need systemd)
#   serves     GET /health answers 200 on the published port; /ready's status
#              is logged in the report; /info gives the version, the image's
#              name and the runner reference
#   log shape  a JSON record with time, level and msg reaches stdout
#   clean stop podman stop -t 30 ends within 30 s with exit 143 or 0
#   PORT       with PORT=9000 it becomes healthy and answers on 9000
#   HOST       with HOST=127.0.0.1 it becomes healthy and the published port
#              does not answer
#   LOG_LEVEL  with LOG_LEVEL=WARNING no INFO record appears
#   skill      the image holds its agent skill (docs/skills/<service>/SKILL.md)
# Size: each image within its budget (see budget below).
# Batch runs: offline (--network none), --read-only root with a tmpfs /tmp,
# sample inputs mounted read-only, output in a mounted folder, the image's
# default arguments.
#
# Environment: PODMAN, IMAGE_REGISTRY, IMAGE_TAG, ACCEL (cpu or cuda),
# SHARED (the sample data), FIXTURES (the tiny CTranslate2 model).
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
: "${PODMAN:=podman}" "${IMAGE_REGISTRY:=localhost/archivekit}" "${IMAGE_TAG:?}" "${ACCEL:=cpu}"
: "${SHARED:?}" "${FIXTURES:?}"
suffix=""; [ "$ACCEL" = cpu ] || suffix="-$ACCEL"
img() { echo "$IMAGE_REGISTRY/$1:$IMAGE_TAG$suffix"; }
report="$root/build/image-test-$ACCEL.tsv"
mkdir -p "$root/build"
work=$(mktemp -d /tmp/archivekit-gate.XXXXXX)
containers=()
cleanup() {
  for c in "${containers[@]}"; do "$PODMAN" rm -f -t 0 "$c" >/dev/null 2>&1 || true; done
  rm -rf "$work"
}
trap cleanup EXIT
printf 'image\tcheck\tresult\tdetail\n' > "$report.tmp"
fails=0
record() { # image check pass|FAIL detail
  printf '%s\t%s\t%s\t%s\n' "$1" "$2" "$3" "$4" >> "$report.tmp"
  printf '%-45s %-10s %-4s %s\n' "$1" "$2" "$3" "$4"
  [ "$3" = pass ] || fails=$((fails + 1))
}
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
# wait_healthy C: 0 once C's healthcheck passes (within 330 s), 1 otherwise;
# prints the seconds taken.
wait_healthy() {
  local c=$1 start=$SECONDS
  while (( SECONDS - start < 330 )); do
    [ "$("$PODMAN" inspect -f '{{.State.Running}}' "$c" 2>/dev/null)" = true ] || { echo "exited"; return 1; }
    if "$PODMAN" healthcheck run "$c" >/dev/null 2>&1; then echo "$((SECONDS - start))"; return 0; fi
    sleep 2
  done
  echo "timeout"; return 1
}
# stdout_records C: the container's stdout (stderr dropped).
stdout_of() { "$PODMAN" logs "$1" 2>/dev/null; }
json_records() { # reads lines, prints the levels of JSON records with time, level, msg
  python3 -c '
import json, sys
for line in sys.stdin:
    try:
        r = json.loads(line)
    except ValueError:
        continue
    if isinstance(r, dict) and {"time", "level", "msg"} <= r.keys():
        print(r["level"])'
}

# Size budgets (MB, podman's image size): the classifier carries libtorch
# (413 MB) and libvips; the translator its two binaries (155 MB each, most
# of it the embedded language models of lingua-go); CUDA adds about
# 4 GB of NVIDIA libraries to the classifier.
budget() {
  case "$ACCEL:$1" in
  cpu:pageclass*) echo 900 ;; cuda:pageclass*) echo 6000 ;; *:translate*) echo 550 ;;
  esac
}
for t in pageclass pageclass-api translate translate-api; do
  image=$(img "$t")
  "$PODMAN" image exists "$image" || continue
  mb=$(( $("$PODMAN" image inspect -f '{{.Size}}' "$image") / 1000000 ))
  if [ "$mb" -le "$(budget "$t")" ]; then record "$image" size pass "$mb MB (budget $(budget "$t") MB)"
  else record "$image" size FAIL "$mb MB over the budget of $(budget "$t") MB"; fi
done


for svc in pageclass-api translate-api; do
  image=$(img "$svc")
  if ! "$PODMAN" image exists "$image"; then record "$image" build FAIL "image missing (make images)"; continue; fi
  base="akgate-$svc-$$"
  p_def=$(free_port); p_port=$(free_port); p_host=$(free_port); p_log=$(free_port)
  # Service-specific mounts and environment: the translator's tiny model.
  extra=()
  if [ "$svc" = translate-api ]; then
    extra=(-v "$FIXTURES/ct2/translator:/app/model:ro" -e CT2_MODEL_FAMILY=nmt3 -e CT2_COMPUTE_TYPE=float32 -e CT2_LANGUAGES=cs,en)
  fi
  common=(--read-only --tmpfs /tmp "${extra[@]}")
  # Four containers at once: defaults, PORT, HOST, LOG_LEVEL.
  "$PODMAN" run -d --name "$base-def" -p "127.0.0.1:$p_def:8000" "${common[@]}" "$image" >/dev/null 2>>"$work/podman.log" \
    || { grep -v systemd "$work/podman.log" >&2; exit 1; }
  "$PODMAN" run -d --name "$base-port" -p "127.0.0.1:$p_port:9000" -e PORT=9000 "${common[@]}" "$image" >/dev/null 2>>"$work/podman.log" \
    || { grep -v systemd "$work/podman.log" >&2; exit 1; }
  "$PODMAN" run -d --name "$base-host" -p "127.0.0.1:$p_host:8000" -e HOST=127.0.0.1 "${common[@]}" "$image" >/dev/null 2>>"$work/podman.log" \
    || { grep -v systemd "$work/podman.log" >&2; exit 1; }
  "$PODMAN" run -d --name "$base-log" -p "127.0.0.1:$p_log:8000" -e LOG_LEVEL=WARNING "${common[@]}" "$image" >/dev/null 2>>"$work/podman.log" \
    || { grep -v systemd "$work/podman.log" >&2; exit 1; }
  containers+=("$base-def" "$base-port" "$base-host" "$base-log")

  # skill: the agent skill (docs/skills, page-classification spec 9 item 5)
  # and the documentation it points to travel in the image.
  skill=/opt/archivekit/share/doc/archivekit/docs/skills/$svc/SKILL.md
  if "$PODMAN" run --rm --entrypoint /bin/sh "$image" -c "test -s $skill && test -s /opt/archivekit/share/doc/archivekit/docs/services.md" >/dev/null 2>>"$work/podman.log"; then
    record "$image" skill pass "$skill and docs/services.md are in the image"
  else record "$image" skill FAIL "$skill or docs/services.md missing from the image"; fi

  # healthy
  if t=$(wait_healthy "$base-def"); then record "$image" healthy pass "healthcheck passed after ${t}s"
  else record "$image" healthy FAIL "$t; last log: $(stdout_of "$base-def" | tail -2 | tr '\n\t' '  ')"; fi
  # serves
  h=$(curl -s -o /dev/null -w '%{http_code}' --max-time 5 "http://127.0.0.1:$p_def/health" || true)
  r=$(curl -s --max-time 5 -w ' %{http_code}' "http://127.0.0.1:$p_def/ready" | tr -d '\n' || true)
  i=$(curl -s --max-time 5 "http://127.0.0.1:$p_def/info" || true)
  if [ "$h" != 200 ]; then record "$image" serves FAIL "/health answered '$h'"
  elif ! python3 -c 'import json, sys; d = json.loads(sys.argv[1]); sys.exit(0 if d.get("container_image") == sys.argv[2] and d.get("runner_ref") and d.get("version") else 1)' "$i" "$image" 2>/dev/null; then
    record "$image" serves FAIL "/info lacks the version, image name or runner reference: ${i:0:200}"
  else record "$image" serves pass "/health 200 on published port $p_def; /ready: ${r:0:200}; /info names the image and runner reference"; fi
  # log shape
  n=$(stdout_of "$base-def" | json_records | wc -l)
  if [ "$n" -gt 0 ]; then record "$image" "log shape" pass "$n JSON records (time, level, msg) on stdout"
  else record "$image" "log shape" FAIL "no JSON record on stdout"; fi
  # CUDA images on a machine without a GPU: the fall-back to the CPU is said.
  # The translator's CUDA images carry the CPU build of its bridge: their
  # record says so instead.
  if [ "$ACCEL" = cuda ] && case "$image" in *translate*) true ;; *) false ;; esac; then
    if stdout_of "$base-def" | grep -q 'is a CPU build: running on the CPU'; then
      record "$image" "cpu build said" pass "$(stdout_of "$base-def" | grep -o '"msg":"[^"]*CPU build[^"]*"' | head -1)"
    else record "$image" "cpu build said" FAIL "no record saying the translator runs its CPU build"; fi
  elif [ "$ACCEL" = cuda ] && ! ls /dev/nvidia[0-9]* >/dev/null 2>&1; then
    if stdout_of "$base-def" | grep -q 'falls back to the CPU'; then
      record "$image" "cpu fallback" pass "no GPU here: $(stdout_of "$base-def" | grep -o '"msg":"[^"]*\(falls back\|device auto\)[^"]*"' | tr '\n' ' ')"
    else record "$image" "cpu fallback" FAIL "no GPU here and no fall-back record in the log"; fi
  fi
  # clean stop
  start=$(date +%s.%N)
  "$PODMAN" stop -t 30 "$base-def" >/dev/null
  secs=$(python3 -c "print(round($(date +%s.%N) - $start, 1))")
  code=$("$PODMAN" inspect -f '{{.State.ExitCode}}' "$base-def")
  if python3 -c "import sys; sys.exit(0 if $secs <= 30 else 1)" && { [ "$code" = 143 ] || [ "$code" = 0 ]; }; then
    record "$image" "clean stop" pass "stopped in ${secs}s, exit $code"
  else record "$image" "clean stop" FAIL "stopped in ${secs}s, exit $code"; fi
  # PORT
  if t=$(wait_healthy "$base-port") && [ "$(curl -s -o /dev/null -w '%{http_code}' --max-time 5 "http://127.0.0.1:$p_port/health")" = 200 ]; then
    record "$image" PORT pass "PORT=9000: healthy after ${t}s, /health 200 on 9000"
  else record "$image" PORT FAIL "PORT=9000: $t"; fi
  # HOST
  if t=$(wait_healthy "$base-host"); then
    if h=$(curl -s -o /dev/null -w '%{http_code}' --max-time 5 "http://127.0.0.1:$p_host/health") && [ "$h" != 000 ]; then
      record "$image" HOST FAIL "HOST=127.0.0.1: healthy, but the published port answered $h"
    else record "$image" HOST pass "HOST=127.0.0.1: healthy after ${t}s, published port silent"; fi
  else record "$image" HOST FAIL "HOST=127.0.0.1: not healthy: $t"; fi
  # LOG_LEVEL
  if t=$(wait_healthy "$base-log"); then
    curl -s -o /dev/null --max-time 5 "http://127.0.0.1:$p_log/health" || true
    levels=$("$PODMAN" logs "$base-log" 2>&1 | json_records | sort | uniq -c | tr -s ' \n' '  ')
    if "$PODMAN" logs "$base-log" 2>&1 | json_records | grep -qx INFO; then
      record "$image" LOG_LEVEL FAIL "LOG_LEVEL=WARNING: INFO records seen (levels:$levels)"
    else record "$image" LOG_LEVEL pass "LOG_LEVEL=WARNING: healthy after ${t}s, no INFO record (levels:${levels:- none})"; fi
  else record "$image" LOG_LEVEL FAIL "LOG_LEVEL=WARNING: not healthy: $t"; fi
  for c in "$base-def" "$base-port" "$base-host" "$base-log"; do "$PODMAN" rm -f -t 0 "$c" >/dev/null 2>&1 || true; done
done

# Batch runs. The output folders belong to uid 10001 (atrium).
batch() { # name image expect-file-glob args...
  local name=$1 image=$2; shift 2
  local out="$work/$name-out"; mkdir -p "$out"; chown 10001:10001 "$out"
  local start=$SECONDS
  if "$PODMAN" run --rm --network none --read-only --tmpfs /tmp "$@" "$image" > "$work/$name.log" 2>&1; then
    echo "$((SECONDS - start))"; return 0
  fi
  echo "exit $? after $((SECONDS - start))s: $(tail -3 "$work/$name.log" | tr '\n\t' '  ')"; return 1
}
image=$(img pageclass)
if "$PODMAN" image exists "$image"; then
  pages=()  # the first page of four categories
  for d in DRAW TEXT PHOTO LINE_T; do
    f=$(find "$SHARED/data/pages/$d" -maxdepth 1 -type f | sort | head -1)
    pages+=("$d/$(basename "$f")")
  done
  mounts=(); for p in "${pages[@]}"; do mounts+=(-v "$SHARED/data/pages/$p:/data/input/$(basename "$p"):ro"); done
  if t=$(batch pageclass "$image" "${mounts[@]}" -v "$work/pageclass-out:/app/result"); then
    # The spec's table (not the failures, review or summary table beside it), and
    # the failures table, which must list nothing.
    csv=$(find "$work/pageclass-out" -maxdepth 1 -name '*.csv' ! -name '*_FAILURES.csv' ! -name '*_REVIEW.csv' ! -name '*_SUMMARY.csv' | sort | head -1)
    rows=$( [ -n "$csv" ] && tail -n +2 "$csv" | wc -l || echo 0)
    ftable=$(find "$work/pageclass-out" -maxdepth 1 -name '*_FAILURES.csv' | head -1)
    nfailed=$( [ -n "$ftable" ] && tail -n +2 "$ftable" | wc -l || echo 0)
    meta=$(find "$work/pageclass-out" -maxdepth 1 -name '*.json' -exec grep -l '"docker_image\|container_image\|runner_ref' {} + 2>/dev/null | head -1 || true)
    if [ "$rows" -ge "${#pages[@]}" ] && [ "$nfailed" = 0 ] && [ -n "$meta" ] && grep -q "$image" "$meta"; then
      record "$image" "batch run" pass "${#pages[@]} pages (read-only mounts), offline, read-only root: $rows rows in $(basename "$csv"), none in ${ftable##*/}, run metadata names the image, ${t}s"
    else record "$image" "batch run" FAIL "rows $rows in '${csv##*/}', $nfailed in '${ftable##*/}', metadata '${meta##*/}'"; fi
  else record "$image" "batch run" FAIL "$t"; fi
else record "$image" build FAIL "image missing (make images)"; fi

image=$(img translate)
if "$PODMAN" image exists "$image"; then
  alto=$(ls "$SHARED"/data/translator/alto/*.alto.xml | head -1)
  if t=$(batch translate "$image" -v "$alto:/data/input/$(basename "$alto"):ro" \
      -v "$FIXTURES/ct2/translator:/app/model:ro" -v "$work/translate-out:/data/output" \
      -e CT2_MODEL_FAMILY=nmt3 -e CT2_COMPUTE_TYPE=float32 -e CT2_LANGUAGES=cs,en \
      -e CT2_GUARD_MIN_RATIO=0.01 -e CT2_GUARD_MAX_RATIO=100 -e CT2_MAX_INPUT_CHARS=300 -e CT2_MAX_LENGTH=16); then
    got=$(find "$work/translate-out" -name '*_en.alto.xml' | head -1)
    if [ -n "$got" ] && xmllint --noout "$got" 2>/dev/null; then
      record "$image" "batch run" pass "$(basename "$alto") (read-only mount), tiny ct2 model, offline, read-only root: wrote $(basename "$got") (well-formed), ${t}s"
    else record "$image" "batch run" FAIL "no well-formed *_en.alto.xml in the output: $(ls "$work/translate-out" | tr '\n' ' ')"; fi
  else record "$image" "batch run" FAIL "$t"; fi
else record "$image" build FAIL "image missing (make images)"; fi

mv "$report.tmp" "$report"
echo "report: $report ($fails failed)"
[ "$fails" -eq 0 ]
