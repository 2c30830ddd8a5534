#!/usr/bin/env bash
# Calibrates the needs_review flag of the shipped demo models on the pages
# held out as "test" in weights/demo/folds.csv, for a target precision of the
# pages left unflagged within a cap on the review rate (the share of pages
# flagged for doubt; when the target is not reached within the cap, the
# thresholds of the highest precision within it are kept), and writes weights/demo/calibration.json (one
# calibration per model set: each of the five models, their ensemble, the
# fast classifier). Run after `make build`, and again whenever the models in
# weights/demo change (a calibration applies only to the exact models it was
# made for: names and digests):
#
#   bash test/calibrate_demo.sh [TARGET_PRECISION [MAX_REVIEW_RATE]]   # default 0.9, 0.3
#
# Another models folder (same held-out pages): MODELS=DIR bash test/calibrate_demo.sh
set -euo pipefail
target=${1:-0.9}
rate=${2:-0.3}
cd "$(dirname "$0")/.."
models=${MODELS:-weights/demo}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
. test/heldout.sh
heldout "$work"
# a fresh file: calibrations of models no longer in the folder go away
rm -f "$models/calibration.json"
bin/pageclass --config "$work/eval.txt" --eval --best --calibrate --review-precision "$target" --review-rate "$rate" \
  -m "$models" -tn 3 --results "$work/result"
if [ -d "$models/fastcls_small" ]; then
  bin/pageclass --config "$work/eval.txt" --eval --fastcls --fastcls_base "$models/fastcls_small" --calibrate \
    --review-precision "$target" --review-rate "$rate" -tn 3 --results "$work/result"
fi
echo "calibration written: $models/calibration.json"
