#!/usr/bin/env bash
# The run ledger and the shard merge at 10,000 pages (issue 18, "Show").
# Run from any directory after `make build`:
#
#   bash test/ledger10k.sh [PAGES] [WORKDIR]     # PAGES defaults to 10000
#
# 1. Builds the input in WORKDIR (a temporary folder by default, removed at
#    the end unless given): PAGES pages as box000/<CATEGORY>/<page>.png ...,
#    symbolic links to the 184 sample pages of ../shared/data/pages, repeated
#    box after box (read in place, nothing copied, nothing committed).
# 2. One-shot run: pageclass --fastcls (the shipped demo fast classifier) over
#    all of them.
# 3. Four shards (--shard i/4) started at once into one results folder, then
#    pageclass --merge: the merged tables must equal the one-shot run's.
# 4. A run killed with SIGKILL once its ledger holds 60% of the files, then
#    --resume: the resumed run's tables must equal the one-shot run's, and it
#    must classify none of the files the killed run recorded.
#
# Prints the figures (times, rows, files at the kill, files redone) and exits
# non-zero when a check fails.
set -euo pipefail
pages=${1:-10000}
keep=${2:-}
work=${2:-$(mktemp -d)}
mkdir -p "$work" && work=$(cd "$work" && pwd)
cd "$(dirname "$0")/.."
root=$(pwd)
bin=${PAGECLASS:-$root/bin/pageclass}
data=${ARCHIVEKIT_SHARED:-$root/../shared}/data/pages
[ -x "$bin" ] || { echo "no $bin: run make build first" >&2; exit 1; }
[ -d "$data" ] || { echo "no sample pages in $data" >&2; exit 1; }
if [ -z "$keep" ]; then trap 'rm -rf "$work"' EXIT; fi

in=$work/in
rm -rf "$in" "$work"/r-*
mapfile -t src < <(cd "$data" && find . -mindepth 2 -name '*.png' | sort)
n=0 box=0
while [ "$n" -lt "$pages" ]; do
  for s in "${src[@]}"; do
    [ "$n" -lt "$pages" ] || break
    dst=$in/$(printf 'box%03d' "$box")/${s#./}
    mkdir -p "$(dirname "$dst")"
    ln -s "$data/${s#./}" "$dst"
    n=$((n + 1))
  done
  box=$((box + 1))
done
echo "input: $n pages in $box boxes under $in (links to ${#src[@]} sample pages)"

model=(--fastcls --fastcls_base "$root/weights/demo/fastcls_small")
common=(-d "$in" --inner -ff png "${model[@]}")
export LOG_FORMAT=json
secs() { date +%s.%N; }
elapsed() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.1f", b - a }'; }

t0=$(secs)
"$bin" "${common[@]}" --results "$work/r-one" 2>"$work/one.log"
t1=$(secs)
echo "one-shot: $(elapsed "$t0" "$t1") s"

for i in 0 1 2 3; do
  "$bin" "${common[@]}" --results "$work/r-shards" --shard "$i/4" 2>"$work/shard$i.log" &
done
wait
t2=$(secs)
"$bin" --merge --results "$work/r-merged" "$work/r-shards" 2>"$work/merge.log"
t3=$(secs)
echo "4 shards at once: $(elapsed "$t1" "$t2") s; merge: $(elapsed "$t2" "$t3") s"

# The kill: poll the ledger (one line per file after its header) and send
# SIGKILL at 60%.
"$bin" "${common[@]}" --results "$work/r-killed" 2>"$work/killed.log" &
pid=$!
target=$((pages * 6 / 10))
t4=$(secs)
while :; do
  got=$(cat "$work"/r-killed/ledger/*/*.jsonl 2>/dev/null | wc -l || true)
  if [ "$((got - 1))" -ge "$target" ]; then break; fi
  kill -0 "$pid" 2>/dev/null || { echo "the run ended before 60%" >&2; exit 1; }
  sleep 0.2
done
kill -9 "$pid"
wait "$pid" 2>/dev/null || true
t5=$(secs)
killed_ledger=$(ls "$work"/r-killed/ledger/*/*.jsonl)
"$bin" "${common[@]}" --results "$work/r-killed" --resume 2>"$work/resumed.log"
t6=$(secs)
resumed_ledger=$(ls "$work"/r-killed/ledger/*/*.jsonl | grep -v -F "$killed_ledger")
echo "killed after $(elapsed "$t4" "$t5") s; resumed in $(elapsed "$t5" "$t6") s"
grep -o '"msg":"continuing from the ledger"[^}]*' "$work/resumed.log" || true

python3 - "$work" "$pages" "$killed_ledger" "$resumed_ledger" <<'EOF'
import csv, glob, json, sys
work, pages, killed, resumed = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]

def table(folder, suffix):
    m = [p for p in glob.glob(f"{folder}/*{suffix}")]
    assert len(m) == 1, (folder, suffix, m)
    with open(m[0], newline="") as f:
        return list(csv.reader(f))

def items(path):
    with open(path) as f:
        return [json.loads(l)["item"] for l in list(f)[1:] if l.endswith("\n")]

ok = True
one = table(f"{work}/r-one", "_TOP-3.csv")
for name, folder in (("merged shards", f"{work}/r-merged"), ("killed and resumed", f"{work}/r-killed")):
    got = table(folder, "_TOP-3.csv")  # r-killed: the resumed run's (the killed one wrote none)
    same = sum(1 for a, b in zip(one, got) if a == b)
    keys = [r[:2] for r in one] == [r[:2] for r in got]
    diff = max((abs(float(x) - float(y)) for a, b in zip(one[1:], got[1:])
                for x, y in zip(a[2:], b[2:]) if x.replace(".", "").isdigit() and y.replace(".", "").isdigit()), default=0)
    print(f"{name}: {len(got) - 1} rows, one-shot {len(one) - 1}; identical rows {same - 1}; same keys in the same order: {keys}; largest score difference {diff:.4f}")
    ok = ok and len(got) == len(one) == pages + 1 and keys and same == len(one)
done = set(items(killed))
redo = items(resumed)
again = len(done & set(redo))
print(f"ledger: killed run recorded {len(done)} files, the resumed run {len(redo)}; files redone: {again}; both together {len(done | set(redo))} of {pages}")
ok = ok and again == 0 and len(done | set(redo)) == pages
print("OK" if ok else "FAILED")
sys.exit(0 if ok else 1)
EOF
