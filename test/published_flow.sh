#!/usr/bin/env bash
# The maintainer flow of docs/pageclass.md "The published ensemble, step by step", run on
# five random-initialised full-size checkpoints in the published layout (no
# download): random-init each family (tools/export_models.py --random-init
# keeps the checkpoint under <dir>/original), link them as CK/v1.4 ... v5.4,
# export --published CK --out OUT, then pageclass --best -m OUT on one page
# per category. Run from any directory after `make build` (it moves to the
# repository root; a relative WORKDIR is taken from where it was started):
#   bash test/published_flow.sh [WORKDIR]
# About 25 minutes on 2 busy cores; 8 GB of disk.
set -euo pipefail
work=${1:-$(mktemp -d)}
mkdir -p "$work" && work=$(cd "$work" && pwd)  # absolute: the script moves to the root
cd "$(dirname "$0")/.."
py=${ARCHIVEKIT_PYTHON:-.venv/bin/python}
mkdir -p "$work/ck" "$work/pages"
for c in ../shared/data/pages/*/; do
  mkdir -p "$work/pages/$(basename "$c")"
  ln -sf "$(realpath "$(ls "$c"*.png | head -1)")" "$work/pages/$(basename "$c")/"
done
for rev in v1.4 v2.4 v3.4 v4.4 v5.4; do
  [ -f "$work/ri/$rev/model.json" ] || "$py" tools/export_models.py --random-init "$rev" --no-train-check --out "$work/ri/$rev"
  ln -sfn "$work/ri/$rev/original" "$work/ck/$rev"
done
"$py" tools/export_models.py --published "$work/ck" --out "$work/model" --no-train-check
bin/pageclass --best -d "$work/pages" -m "$work/model" --results "$work/result"
if grep -q '"demo": true' "$work"/result/*_page-classification.json; then
  echo "the run used demo models" >&2
  exit 1
fi
echo "tables and run metadata under $work/result"
