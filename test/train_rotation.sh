#!/usr/bin/env bash
# Trains the shipped page-orientation model (weights/rotation) with this
# project's own pageclass, exactly as it was made. Run after `make build`:
#
#   bash test/train_rotation.sh [WORKDIR]
#
# 1. tools/make_fastcls.py --task rotation: the fastcls-small network with four
#    outputs (ROT_0, ROT_90, ROT_180, ROT_270), random-initialised (seed 420);
# 2. pageclass --train --fastcls on ../shared/data/pages with fold 1 of
#    weights/demo/folds.csv (the 20 held-out test pages are never trained on;
#    the dev pages pick the checkpoint), setup/demo-train.txt with 60 epochs:
#    self-supervised, each page turned by a drawn quarter every epoch and
#    labelled with it; dev and test accuracy count every page at all four
#    turns.
set -euo pipefail
work=${1:-$(mktemp -d)}
mkdir -p "$work" && work=$(cd "$work" && pwd)  # absolute: the script moves to the root
cd "$(dirname "$0")/.."
py=${ARCHIVEKIT_PYTHON:-.venv/bin/python}
bin=bin/pageclass
sed -e 's/^fastcls_epochs = .*/fastcls_epochs = 60/' setup/demo-train.txt > "$work/rotation-train.txt"
cp setup/para_config.txt "$work/"
"$py" tools/make_fastcls.py --out "$work/base" --seed 420 --dropout 0.1 --task rotation
"$bin" --config "$work/rotation-train.txt" --train --fastcls --fastcls_base "$work/base" --folds_csv weights/demo/folds.csv \
  --fold_column "fold 1" -m "$work/model" --results "$work/result"
echo "to ship: copy $work/model/fastcls_FOLD_1 to weights/rotation"
