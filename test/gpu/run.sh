#!/usr/bin/env bash
# test/gpu/run.sh BUNDLE: the GPU check of issue 31 (make gpu-check), run
# from any folder on a lent GPU machine with PyTorch (CUDA), timm and
# torchvision, from the folder test/gpu/bundle.sh made. In about 9 minutes
# on an H100 it
#   1. builds the shim against the machine's own PyTorch (csrc/),
#   2. runs the bindings/torch tests (the CUDA ones included),
#   3. makes five full-size random-init models of the published
#      architectures with timm/torchvision (mk_models.py),
#   4. compares each precision on the GPU with fp32 on the CPU on the shipped
#      demo models (weights/demo) and 40 sample pages: Top-1 agreement and
#      max probability difference,
#   5. times pageclass --best on 400 pages with the full-size models (tf32,
#      bf16, and --parallel; pages uploaded as floats, as 8-bit pages resized
#      on the host (--upload u8) and as the decoded pages resized on the
#      device (--upload page); forward passes on pooled streams and on
#      one (--gpu-streams one); GPU utilisation sampled by nvidia-smi),
#   6. times TorchScript's graph optimisation on and off (--jit-optimize;
#      off is the GPU default), on 800 and on 3200 pages, with the rate
#      after the first progress record beside the whole run's,
#   7. the demo ensemble's stand-ins on the GPU and the CPU, the service at
#      concurrency 1 and 8, the original Python pipeline and the
#      forward-only ceilings (ref_gpu.py),
#   8. (part goals, not in the default set) issue 31's goals in one run:
#      the forward-only ceilings, then the shipped defaults at TF32 and
#      bf16 (and bf16 without the warm-up, with decoding in process, and
#      --parallel bf16) on GOAL_PAGES pages (default 12 × 800),
#      each row with its share of the ceiling measured in this run,
# and prints one table (also written to $OUT/gpu-check.md when OUT is set).
#
# GPU_DRY_RUN=1 runs the CPU parts on a machine without a GPU (the
# development machine, after make gpu-bundle): no shim rebuild (the bundle's
# binaries use the cached shim; GPU_DRY_SHIM=1 rebuilds it), the bindings'
# precision and batch tests, agreement of bf16 with fp32 and the refusal of
# fp16 on the CPU, and throughput of the demo ensemble on 16 pages, and,
# when GPU_PARTS names them, the goals (the ceilings on the CPU through
# ref_gpu.py, with PYTHON a Python with torch; fp32 for tf32; no
# --parallel) and the service (the demo models, pageclass-api on the CPU);
# it checks that every step and the table work, not the figures. Run
# `GPU_DRY_RUN=1 GPU_PARTS="goals service" PYTHON=<python with torch> bash
# test/gpu/run.sh build/gpu-bundle` (about 2 minutes) before a device call.
set -uo pipefail
export PYTHONUNBUFFERED=1
B=$(cd "${1:?usage: test/gpu/run.sh BUNDLE}" && pwd)
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd) # the project root, wherever this is run from
DRY=${GPU_DRY_RUN:-0}
W=${W:-$(mktemp -d /tmp/gpucheck-XXXX)}
PY=${PYTHON:-python3}
T0=$(date +%s)
TABLE=$W/table.md
# GPU_PARTS: the parts to run (default all but goals): tests agreement
# throughput jit service reference goals
PARTS=" ${GPU_PARTS:-tests agreement throughput jit service reference} "
part() { case "$PARTS" in *" $1 "*) return 0 ;; esac; return 1; }
mkdir -p "$W"
: > "$TABLE"
log() { echo "== $(($(date +%s) - T0))s $*"; }
row() { # one table row; the table so far also under $OUT, should the run be cut
  printf '| %s | %s |\n' "$1" "$2" >> "$TABLE"
  [ -n "${OUT:-}" ] && cp "$TABLE" "$OUT/table-so-far.md" 2>/dev/null
  true
}
# in_time S: whether S more seconds fit in GPU_CHECK_BUDGET (default 540)
in_time() { [ $(($(date +%s) - T0 + $1)) -le "${GPU_CHECK_BUDGET:-540}" ]; }
# GOAL_TF32 is the precision of the TF32 goal (fp32 on the CPU); SMALL the
# models of the service part; SERVICE_N1 and SERVICE_N8 its requests at
# concurrency 1 and 8, SERVICE_JOB the pages of its one job.
if [ "$DRY" = 1 ]; then
  DEV=cpu PRECS="fp32 bf16" THROUGHPUT="fp32 bf16" NPAGES=16 GOAL_TF32=fp32 SMALL=$ROOT/weights/demo SERVICE_N1=4 SERVICE_N8=16 SERVICE_JOB=16
else
  DEV=cuda:0 PRECS="fp32 tf32 bf16 fp16" THROUGHPUT="tf32 bf16" NPAGES=800 GOAL_TF32=tf32 SMALL=$W/small SERVICE_N1=60 SERVICE_N8=240 SERVICE_JOB=200
fi

# 0. The machine.
if [ "$DRY" = 1 ]; then
  row "device" "dry run on $(nproc) CPU cores (no GPU)"
else
  row "device" "$(nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader | head -1), $(nproc) CPU cores"
fi
row "PyTorch" "$("$PY" -c 'import torch; print(torch.__version__, "CUDA", torch.version.cuda)' 2>&1 | tail -1)"
row "bundle" "commit $(cat "$B/commit" 2>/dev/null || echo unknown)"

B="$B" W="$W" "$PY" - <<'PY'
import lzma, os, shutil, tarfile
b, w = os.environ["B"], os.environ["W"]
tarfile.open(f"{b}/libs.tar.xz").extractall(f"{w}/libs")
for n in ("pageclass", "pageclass-api", "torch.test"):
    with lzma.open(f"{b}/{n}.xz") as f, open(f"{w}/{n}", "wb") as o:
        shutil.copyfileobj(f, o)
    os.chmod(f"{w}/{n}", 0o755)
PY

# 1. The shim against this machine's PyTorch (version: the headers').
if [ "$DRY" != 1 ] || [ "${GPU_DRY_SHIM:-0}" = 1 ]; then
  log shim
  TR=$("$PY" -c 'import os, torch; print(os.path.dirname(torch.__file__))')
  if (cmake -S "$ROOT/csrc" -B "$W/tb" -G Ninja -DTORCH_ROOT="$TR" && ninja -C "$W/tb") > "$W/shim.log" 2>&1; then
    row "shim" "built against $TR"
  else
    tail -30 "$W/shim.log"
    row "shim" "BUILD FAILED (see $W/shim.log)"
  fi
  export LD_LIBRARY_PATH=$W/tb:$W/libs
else
  export LD_LIBRARY_PATH=$W/libs
  row "shim" "dry run: the cached build the bundle was linked with"
fi

# 3 starts now, beside 2: the five full-size models (GPU only).
MP=
if [ "$DRY" != 1 ]; then
  # the full-size five, and stand-ins of the shipped demo ensemble (its
  # architectures and sizes, random weights) whose weights need not travel
  ("$PY" "$HERE/mk_models.py" "$W/m" && "$PY" "$HERE/mk_models.py" "$W/small" "$ROOT/weights/demo") > "$W/mk.log" 2>&1 &
  MP=$!
fi

# 2. The bindings' tests.
if part tests; then
log "bindings tests"
FX=${ARCHIVEKIT_FIXTURES:-}
if [ ! -f "$FX/manifest.json" ]; then
  FX=$W/fx
  # make_fixtures.py reads pages in category folders: the bundle's
  # CATEGORY__name.png files sorted back into them
  for f in "$B"/pages40/*__*.png; do
    n=$(basename "$f")
    mkdir -p "$W/pagecats/${n%%__*}" && cp "$f" "$W/pagecats/${n%%__*}/${n#*__}"
  done
  "$PY" "$ROOT/test/make_fixtures.py" "$FX" --pages "$W/pagecats" > "$W/fx.log" 2>&1 || tail -5 "$W/fx.log"
fi
run_filter=${GPU_TESTS:-.}
[ "$DRY" = 1 ] && run_filter='Precision|Batch|DeviceFacts|Torchvision'
ARCHIVEKIT_FIXTURES=$FX ARCHIVEKIT_PYTHON="$PY" timeout 300 "$W/torch.test" -test.v -test.run "$run_filter" > "$W/tests.log" 2>&1
pass=$(grep -c '^--- PASS' "$W/tests.log")
skip=$(grep -c '^--- SKIP' "$W/tests.log")
fails=$(grep '^--- FAIL' "$W/tests.log" | awk '{print $3}' | tr '\n' ' ')
row "bindings/torch tests" "$pass passed, $skip skipped, failed: ${fails:-none}"
grep -E '^--- FAIL' -A4 "$W/tests.log" | head -40
fi

pc() { timeout 300 "$W/pageclass" --rotation-model "" "$@"; }
agree() { # agree REF_DIR GOT_DIR: "same/total maxdiff" over the RAW tables
  "$PY" - "$1" "$2" <<'PY'
import csv, glob, sys
def rows(d):
    f = sorted(glob.glob(d + "/**/*RAW*.csv", recursive=True))
    if not f:
        return {}
    out = {}
    for x in csv.DictReader(open(f[0])):  # FILE, PAGE, one column per category, SOURCE
        out[x["FILE"] + "|" + x["PAGE"]] = [float(v) for k, v in x.items() if k not in ("FILE", "PAGE", "SOURCE")]
    return out
a, b = rows(sys.argv[1]), rows(sys.argv[2])
keys = [k for k in a if k in b]
same = sum(max(range(len(a[k])), key=a[k].__getitem__) == max(range(len(b[k])), key=b[k].__getitem__) for k in keys)
diff = max((abs(x - y) for k in keys for x, y in zip(a[k], b[k])), default=float("nan"))
print(same, len(keys), f"{diff:.4f}" if keys else "nan")
PY
}

# 4. Agreement of each precision on $DEV with fp32 on the CPU, per demo
# model (trained weights: random-init deep nets amplify rounding).
if part agreement; then
log agreement
AG=$B/pages40
if [ "$DRY" = 1 ]; then
  AG=$W/pages12
  mkdir -p "$AG"
  find "$B/pages40" -name '*.png' | sort | head -12 | xargs cp -t "$AG"
fi
# the shipped demo models whose weights are here (the GPU machine gets
# what fits the 64 MiB a call carries)
DEMOS=$(for d in "$ROOT"/weights/demo/model_v*; do [ -f "$d/model.pt" ] && echo "$d"; done)
NDEMO=$(echo "$DEMOS" | grep -c .)
for d in $DEMOS; do
  n=$(basename "$d")
  pc -m "$d" -d "$AG" --device cpu --precision fp32 --raw --results "$W/ag/cpu/$n" > "$W/ag-$n-cpu.log" 2>&1
done
for p in $PRECS; do
  same=0 total=0 worst=0 failed=
  for d in $DEMOS; do
    n=$(basename "$d")
    if pc -m "$d" -d "$AG" --device "$DEV" --precision "$p" --raw --results "$W/ag/$p/$n" > "$W/ag-$n-$p.log" 2>&1; then
      if read -r s t w < <(agree "$W/ag/cpu/$n" "$W/ag/$p/$n") && [ "$w" != nan ]; then
        same=$((same + s)) total=$((total + t))
        worst=$("$PY" -c "print(max($worst, $w))")
      else
        failed="$failed $n(no RAW table)"
      fi
    else
      failed="$failed $n"
    fi
  done
  if [ -n "$failed" ]; then
    row "agreement $p on $DEV vs fp32 on the CPU" "FAILED for$failed: $(grep -h -m1 -i error "$W"/ag-*-"$p".log | head -1 | cut -c1-160)"
  else
    row "agreement $p on $DEV vs fp32 on the CPU ($NDEMO demo models: $(echo $(basename -a $DEMOS)), $(find "$AG" -name '*.png' | wc -l) pages)" "Top-1 same $same/$total, max probability difference $worst"
  fi
done
if [ "$DRY" = 1 ]; then
  if pc -m "$ROOT/weights/demo/model_v14" -d "$B/pages40" --device cpu --precision fp16 --results "$W/fp16" > "$W/fp16.log" 2>&1; then
    row "fp16 on the CPU" "NOT REFUSED"
  else
    row "fp16 on the CPU" "refused: $(grep -m1 -i fp16 "$W/fp16.log" | cut -c1-120)"
  fi
fi
fi

# 5. Throughput on NPAGES pages (the 40 repeated).
[ -n "$MP" ] && { wait "$MP"; grep -v Warn "$W/mk.log"; }
models=$W/m
[ "$DRY" = 1 ] && models=$ROOT/weights/demo
mkdir -p "$W/pages"
i=0
while [ "$i" -lt "$NPAGES" ]; do
  for f in "$B"/pages40/*.png; do
    [ "$i" -lt "$NPAGES" ] || break
    cp "$f" "$W/pages/r${i}_$(basename "$f")"
    i=$((i + 1))
  done
done
# [SETUP] batch 64 (the shipped configuration's 16 elsewhere)
cfg64=$W/config64.txt
sed -E 's/^batch *=.*/batch = 64/' "$ROOT/setup/config.txt" > "$cfg64"
SMI=
if [ "$DRY" != 1 ]; then
  nvidia-smi --query-gpu=utilization.gpu --format=csv,noheader,nounits -lms 250 > "$W/smi.csv" 2>/dev/null &
  SMI=$!
fi
bench() { # bench LABEL ARGS...: pages/s of pageclass --best over $W/pages ($BENCH_PAGES pages from $BENCH_DIR when set)
  local label=$1; shift
  local key t0 t1 rate n0 busy= steady where dir=${BENCH_DIR:-$W/pages} np=${BENCH_PAGES:-$NPAGES}
  LAST_RATE=
  key=tp-$(printf '%s-%s' "$label" "$np" | tr -c 'A-Za-z0-9._-' '_')
  n0=0; [ -f "$W/smi.csv" ] && n0=$(wc -l < "$W/smi.csv")
  t0=$(date +%s.%N)
  if pc --best -m "$models" -d "$dir" --device "$DEV" --results "$W/$key" "$@" > "$W/$key.log" 2>&1; then
    t1=$(date +%s.%N)
    # the classification's own rate (models loaded before it), then the
    # whole command's
    rate=$(grep -o '"pages_per_s":[0-9.]*' "$W/$key.log" | tail -1 | cut -d: -f2)
    LAST_RATE=$rate
    # where the time went, from the same record (pipeline.Stats): the
    # host's start-up, the models' first call against the next ones, and
    # the share of the run with a batch in the models
    where=$("$PY" - "$W/$key.log" <<'PY'
import json, sys
for line in open(sys.argv[1]):
    try: r = json.loads(line)
    except ValueError: continue
    if r.get("msg") == "pages classified" and "model_busy" in r:
        then = f" then {r['call_mean_s']:.3f} s a batch" if r.get("batches", 0) >= 2 else ""
        print(f"; first batch after {r['first_batch_s']:.2f} s, first call {r['first_call_s']:.2f} s{then}"
              f" ({r['batches']} batches), models busy {100*r['model_busy']:.0f}%")
PY
)
    # this run's nvidia-smi samples (loading included)
    [ -n "$SMI" ] && busy=$(tail -n +$((n0 + 1)) "$W/smi.csv" | "$PY" -c "
import sys
v=[int(x) for x in sys.stdin if x.strip().isdigit()]
print(f', GPU busy mean {sum(v)/len(v):.0f}% of {len(v)} samples' if v else '')")
    # the rate after the first progress record (the first batches, which
    # carry the executor's warm-up, left out)
    steady=$("$PY" - "$W/$key.log" <<'PY'
import json, re, sys
from datetime import datetime
def t(r): return datetime.fromisoformat(r["time"][:26].rstrip("Z"))
first = end = None
for line in open(sys.argv[1]):
    try: r = json.loads(line)
    except ValueError: continue
    m = re.match(r"pageclass: (\d+)/\d+ ", r.get("msg", ""))
    if m and first is None: first = (t(r), int(m.group(1)))
    if r.get("msg") == "pages classified": end = (t(r), r["pages"])
if first and end and end[0] > first[0]:
    print(f", after page {first[1]}: {(end[1]-first[1])/(end[0]-first[0]).total_seconds():.1f} pages/s")
PY
)
    row "pageclass --best $label, $np pages ($(basename "$models"))" "${rate:-?} pages/s ($("$PY" -c "print(f'{$np/($t1-$t0):.1f}')") with loading$steady$busy$where)"
  else
    row "pageclass --best $label" "FAILED: $(grep -m1 -i error "$W/$key.log" | cut -c1-160)"
  fi
}
# goals_part: issue 31's goals (part goals), on $DEV with $models; the
# dry run takes them on the CPU with the demo models (fp32 for tf32, no
# --parallel), to check the steps, not the figures.
goals_part() {
    # Issue 31's goals, measured in one run on one machine: the ceilings
    # first, then the shipped defaults (graph optimisation off on the GPU,
    # --upload page) on GOAL_PAGES pages, a run long enough that the
    # start (cuDNN and cuBLAS set-up, the first batches) weighs as it
    # does in an archive's run, each rate as a share of its ceiling.
    log "goals: forward-only ceilings"
    timeout 180 "$PY" "$HERE/ref_gpu.py" "$models" "$W/pages" ceiling 2>&1 | grep -v Warn > "$W/goal-ceil.log"
    ceil() { grep "forward-only ceiling $1," "$W/goal-ceil.log" | grep -o '[0-9.]* pages/s' | cut -d' ' -f1; }
    gp=${GOAL_PAGES:-$((12 * NPAGES))}
    mkdir -p "$W/pagesg"
    i=0
    while [ "$i" -lt "$gp" ]; do
      for f in "$W"/pages/*.png; do
        [ "$i" -lt "$gp" ] || break
        ln -f "$f" "$W/pagesg/g${i}.png"
        i=$((i + 1))
      done
    done
    goal() { # goal PREC RATE-GOAL LABEL ARGS...
      local prec=$1 want=$2 label=$3 c; shift 3
      c=$(ceil "$prec")
      log "goals: $label"
      BENCH_DIR=$W/pagesg BENCH_PAGES=$gp bench "$label" "$@"
      row "goal: $label, $gp pages" "$(R=$LAST_RATE C=$c WANT=$want PREC=$prec "$PY" - <<'PY'
import os
r, c = float(os.environ.get("R") or 0), float(os.environ.get("C") or 0)
want, prec = float(os.environ["WANT"]), os.environ["PREC"]
s = f"{r:.1f} pages/s (goal {want:.0f}: {'met' if r >= want else 'NOT met'}); "
s += (f"{100*r/c:.0f}% of the {c:.0f} pages/s {prec} ceiling of this run (goal 80%: {'met' if r >= 0.8*c else 'NOT met'})"
      if c else "no ceiling measured")
print(s)
PY
)"
    }
    goal "$GOAL_TF32" 140 "--precision $GOAL_TF32 (defaults: --jit-optimize auto, --upload page), batch 64" --precision "$GOAL_TF32" --config "$cfg64"
    goal bf16 250 "--precision bf16 (defaults), batch 64" --precision bf16 --config "$cfg64"
    # the same decoding inside pageclass (--decode-in-process; decoder
    # processes are the default since 2026-11-27): what isolation costs
    goal bf16 250 "--precision bf16 (defaults) --decode-in-process, batch 64" --precision bf16 --config "$cfg64" --decode-in-process
    # the same without the warm-up at load (--warm-up, on by default on a
    # GPU): what the models' first calls cost the classification
    goal bf16 250 "--precision bf16 (defaults) --warm-up off, batch 64" --precision bf16 --config "$cfg64" --warm-up off
    [ "$DEV" != cpu ] && goal bf16 250 "--parallel --precision bf16 (defaults)" --parallel --precision bf16 --config "$cfg64"
    grep 'forward-only ceiling' "$W/goal-ceil.log" | while read -r line; do
      row "${line%%:*} (this run)" "${line##*: }"
    done
}
# start_api LOG [VAR=VALUE...]: pageclass-api on port 18080 with the service
# part's models on $DEV (and the settings given), its output in LOG, as $API;
# waits until it is ready (warm), at most 2 minutes. stop_api stops it.
start_api() {
    local out=$1
    shift
    env "$@" PORT=18080 HOST=127.0.0.1 "$W/pageclass-api" -device "$DEV" -models "$SMALL" -rotation-model "" > "$out" 2>&1 &
    API=$!
    "$PY" -c "
import time, urllib.request
for _ in range(240):
    try:
        urllib.request.urlopen('http://127.0.0.1:18080/ready', timeout=2); break
    except Exception:
        time.sleep(0.5)"
}
stop_api() {
    kill "$API" 2>/dev/null
    wait "$API" 2>/dev/null
}
# service_part: the shipped demo ensemble's architectures on $DEV and the
# CPU, and pageclass-api's /predict_image at concurrency 1 and 8 (part
# service); the dry run takes the demo models themselves on the CPU.
service_part() {
    log "shipped demo ensemble's architectures (random-init stand-ins), GPU and CPU"
    models=$SMALL
    [ "$DEV" != cpu ] && bench "demo-ensemble stand-ins on $DEV (tf32, upload auto: page)"
    DEV=cpu bench "demo-ensemble stand-ins on the CPU ($(nproc) cores)"
    log "service: /predict_image at concurrency 1 and 8"
    start_api "$W/api.log"
    for c in 1 8; do
      r=$(timeout 100 "$PY" "$HERE/load.py" http://127.0.0.1:18080/predict_image "$B/pages40" "$c" $((c == 1 ? SERVICE_N1 : SERVICE_N8)) 2>&1 | tail -1)
      row "pageclass-api /predict_image on $DEV, $(basename "$SMALL") models, concurrency $c" "$r"
    done
    stop_api
    log "service: one job of $SERVICE_JOB pages, one item at a time and JOBS_ITEM_WORKERS=8"
    for k in 1 8; do
      rm -rf "$W/jobs$k"
      start_api "$W/api-jobs$k.log" JOBS_DIR="$W/jobs$k" JOBS_ITEM_WORKERS="$k" MAX_UPLOAD_MB=100
      r=$(ITEMS=$k timeout 100 "$PY" "$HERE/job.py" http://127.0.0.1:18080 "$B/pages40" "$SERVICE_JOB" 2>&1 | tail -1)
      row "pageclass-api one job on $DEV, $(basename "$SMALL") models, JOBS_ITEM_WORKERS=$k" "$r"
      stop_api
    done
}
if [ "$DRY" = 1 ]; then
  for p in $THROUGHPUT; do
    log "throughput $p"
    bench "--precision $p" --precision "$p"
  done
  log "throughput --upload float/u8"
  bench "--upload float" --upload float
  bench "--upload u8" --upload u8
  bench "--upload page" --upload page
  bench "--upload page --gpu-streams one" --upload page --gpu-streams one
  bench "--upload page --jit-optimize off" --upload page --jit-optimize off
  BENCH_DIR=$B/pages40 BENCH_PAGES=$(find "$B/pages40" -name '*.png' | wc -l) bench "--upload page (the 40 sample pages)" --upload page
  part goals && REF_DEVICE=cpu REF_PRECS="fp32 bf16" REF_BATCH=8 GOAL_PAGES=${GOAL_PAGES:-32} goals_part
  part service && service_part
else
  if part throughput; then
    log "throughput"
    # (batch 16 with float uploads, the first path, was 48.7-53.3 pages/s
    # on the H100 on 2026-11-26; dropped to keep the check within 10 min)
    bench "--precision tf32 --upload float, batch 64" --precision tf32 --upload float --config "$cfg64"
    bench "--precision tf32 --upload u8, batch 64" --precision tf32 --upload u8 --config "$cfg64"
    bench "--precision tf32 --upload page, batch 64" --precision tf32 --upload page --config "$cfg64"
    bench "--precision bf16 --upload u8, batch 64" --precision bf16 --upload u8 --config "$cfg64"
    bench "--precision bf16 --upload page, batch 64" --precision bf16 --upload page --config "$cfg64"
    # the two lanes on one stream, against the pooled streams above (31.3)
    bench "--precision tf32 --upload page, batch 64, --gpu-streams one" --precision tf32 --upload page --config "$cfg64" --gpu-streams one
    # the shipped 16 is no choice: a plain GPU run sizes its batch by free
    # memory (the log's "GPU batch" line gives it)
    bench "--precision tf32 --upload page, batch by free memory (profile at 16)" --precision tf32 --upload page
    gb=$(grep -h '"msg":"GPU batch"' "$W"/tp-*by_free_memory__profile_at_16_.log 2>/dev/null | grep -o '"batch":[0-9]*\|"budget":[0-9]*\|"source":"[a-z]*"' | paste -sd' ')
    row "its GPU batch (the log's GPU batch line)" "${gb:-not logged}"
    log "throughput --parallel"
    bench "--parallel --precision tf32 --upload u8, batch by free memory (profile at 64)" --parallel --precision tf32 --upload u8 --config "$cfg64"
    bench "--parallel --precision bf16 --upload u8, batch by free memory (profile at 64)" --parallel --precision bf16 --upload u8 --config "$cfg64"
    bench "--parallel --precision tf32 --upload page, batch by free memory (profile at 64)" --parallel --precision tf32 --upload page --config "$cfg64"
    bench "--parallel --precision bf16 --upload page, batch by free memory (profile at 64)" --parallel --precision bf16 --upload page --config "$cfg64"
    bench "--parallel --precision bf16 --upload page, batch by free memory (profile at 64), --gpu-streams one" --parallel --precision bf16 --upload page --config "$cfg64" --gpu-streams one
  fi
  if part jit; then
    # TorchScript's graph optimisation (profiling, then fused graphs
    # compiled on the first batches of each shape) on and off
    log "graph optimisation on and off"
    read -r s t w < <(pc -m "$ROOT/weights/demo/model_v14" -d "$B/pages40" --device cpu --precision fp32 --raw --results "$W/jit/cpu" > "$W/jit-cpu.log" 2>&1 &&
      pc -m "$ROOT/weights/demo/model_v14" -d "$B/pages40" --device "$DEV" --precision tf32 --jit-optimize off --raw --results "$W/jit/off" > "$W/jit-off.log" 2>&1 &&
      agree "$W/jit/cpu" "$W/jit/off")
    row "agreement tf32 --jit-optimize off on $DEV vs fp32 on the CPU (model_v14)" "Top-1 same ${s:-?}/${t:-?}, max probability difference ${w:-?}"
    bench "--precision tf32 --upload page, batch 64, --jit-optimize on" --precision tf32 --upload page --config "$cfg64" --jit-optimize on
    bench "--precision tf32 --upload page, batch 64, --jit-optimize off" --precision tf32 --upload page --config "$cfg64" --jit-optimize off
    bench "--precision bf16 --upload page, batch 64, --jit-optimize off" --precision bf16 --upload page --config "$cfg64" --jit-optimize off
    # longer runs: the rate an archive sees once the models are warm
    mkdir -p "$W/pages4x"
    for k in 0 1 2 3; do for f in "$W"/pages/*.png; do ln -f "$f" "$W/pages4x/k${k}_$(basename "$f")"; done; done
    BENCH_DIR=$W/pages4x BENCH_PAGES=$((4 * NPAGES)) bench "--precision tf32 --upload page, batch 64, --jit-optimize on" --precision tf32 --upload page --config "$cfg64" --jit-optimize on
    BENCH_DIR=$W/pages4x BENCH_PAGES=$((4 * NPAGES)) bench "--precision tf32 --upload page, batch 64, --jit-optimize off" --precision tf32 --upload page --config "$cfg64" --jit-optimize off
    BENCH_DIR=$W/pages4x BENCH_PAGES=$((4 * NPAGES)) bench "--precision bf16 --upload page, batch 64, --jit-optimize off" --precision bf16 --upload page --config "$cfg64" --jit-optimize off
    BENCH_DIR=$W/pages4x BENCH_PAGES=$((4 * NPAGES)) bench "--parallel --precision bf16 --upload page, --jit-optimize off" --parallel --precision bf16 --upload page --config "$cfg64" --jit-optimize off
    bench "--parallel --precision tf32 --upload page, --jit-optimize off" --parallel --precision tf32 --upload page --config "$cfg64" --jit-optimize off
    bench "--parallel --precision bf16 --upload page, --jit-optimize off" --parallel --precision bf16 --upload page --config "$cfg64" --jit-optimize off
    bench "--parallel --precision bf16 --upload page, --gpu-streams one, --jit-optimize off" --parallel --precision bf16 --upload page --config "$cfg64" --gpu-streams one --jit-optimize off
  fi
  part goals && goals_part
  kill "$SMI" 2>/dev/null
  if part throughput || part jit || part goals; then
    row "GPU utilisation during the pageclass runs" "$("$PY" -c "
v=[int(x) for x in open('$W/smi.csv') if x.strip().isdigit()]
print(f'mean {sum(v)/len(v):.0f}%, samples under 5%: {sum(x<5 for x in v)}/{len(v)}' if v else 'no samples')")"
  fi
  part service && service_part
  if part reference; then
    log "python reference pipeline"
    mkdir -p "$W/pages200"
    find "$W/pages" -name '*.png' | sort | head -200 | xargs cp -t "$W/pages200"
    if in_time 60; then
      timeout 90 "$PY" "$HERE/ref_gpu.py" "$W/m" "$W/pages200" pipeline 2>&1 | grep -v Warn | tee "$W/ref.log"
      row "original Python pipeline (PIL, batch 16, fp32), 200 pages" "$(grep -o '[0-9.]* pages/s' "$W/ref.log" | tail -1)"
    fi
    log "forward-only ceilings"
    if in_time 60; then
      timeout $((${GPU_CHECK_BUDGET:-540} - $(date +%s) + T0)) "$PY" "$HERE/ref_gpu.py" "$W/m" "$W/pages" ceiling 2>&1 | grep -v Warn | tee "$W/ceil.log"
      grep 'forward-only ceiling' "$W/ceil.log" | while read -r line; do
        row "${line%%:*}" "${line##*: }"
      done
    fi
  fi
fi

log finished
{
  echo
  echo "| GPU check ($(date -u +%F), $(($(date +%s) - T0)) s) | |"
  echo "|---|---|"
  cat "$TABLE"
} | tee "$W/gpu-check.md"
[ -n "${OUT:-}" ] && cp "$W/gpu-check.md" "$W/tests.log" "$OUT/" 2>/dev/null
[ -n "${OUT:-}" ] && tar -czf "$OUT/logs.tgz" -C "$W" --exclude='*.csv' --exclude=m --exclude=pages --exclude=libs --exclude=tb --exclude=ag --exclude=fx $(cd "$W" && ls *.log 2>/dev/null) 2>/dev/null
true
