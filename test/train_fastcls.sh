#!/usr/bin/env bash
# Trains the shipped demo fast classifier (weights/demo/fastcls_small) with
# this project's own pageclass, exactly as it was made. Run from any
# directory after `make build`:   bash test/train_fastcls.sh [WORKDIR]
# (it moves to the repository root; a relative WORKDIR is taken from where it
# was started).
#
#   1. tools/make_fastcls.py: the fastcls-small architecture, random-initialised
#      (seed 420, dropout 0.1 = [FASTCLS] fastcls_dropout);
#   2. pageclass --train --fastcls on ../shared/data/pages with fold 1 of
#      weights/demo/folds.csv and the [FASTCLS] keys of setup/demo-train.txt
#      (30 epochs, patience 20, lr0 0 = automatic 1e-3, imgsz 224, cache);
#   3. pageclass --eval --fastcls on the 20 held-out pages.
set -euo pipefail
work=${1:-$(mktemp -d)}
mkdir -p "$work" && work=$(cd "$work" && pwd)  # absolute: the script moves to the root
cd "$(dirname "$0")/.."
py=${ARCHIVEKIT_PYTHON:-.venv/bin/python}
bin=bin/pageclass
. test/heldout.sh
heldout "$work"
"$py" tools/make_fastcls.py --out "$work/base" --seed 420 --dropout 0.1
"$bin" --config setup/demo-train.txt --train --fastcls --fastcls_base "$work/base" --folds_csv weights/demo/folds.csv \
  --fold_column "fold 1" -m "$work/model" --results "$work/result"
"$bin" --config "$work/eval.txt" --eval --fastcls --fastcls_base "$work/model/fastcls_FOLD_1" --results "$work/eval"
echo "to ship: copy $work/model/fastcls_FOLD_1 to weights/demo/fastcls_small"
