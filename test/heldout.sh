# Sourced by test/train_shipped.sh and test/train_fastcls.sh: links the pages
# held out as "test" in weights/demo/folds.csv into $1/heldout and writes
# $1/eval.txt, setup/demo-train.txt with [EVAL] FOLDER_PAGES = those pages
# (and setup/para_config.txt beside it).
heldout() {
  local work=$1
  mkdir -p "$work/heldout"
  awk -F, 'NR > 1 && $2 == "test" {print $1}' weights/demo/folds.csv | while read -r p; do
    mkdir -p "$work/heldout/$(dirname "$p")"
    ln -sf "$(realpath ../shared/data/pages/"$p")" "$work/heldout/$p"
  done
  sed -e "/^\[EVAL\]/,/^\[/ s|^FOLDER_PAGES = .*|FOLDER_PAGES = $work/heldout|" setup/demo-train.txt > "$work/eval.txt"
  cp setup/para_config.txt "$work/"
}
