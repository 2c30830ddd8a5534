#!/usr/bin/env python3
"""Writes the folds CSV the demo ensemble was trained with.

Usage: make_demo_folds.py PAGES OUT.csv [--folds 2] [--all-train]

One held-out test set (about 10% of each category, at least one page of any
category with 3 or more pages) is "test" in every fold column, so every fold
model and their average are measured on pages none of them saw. The other
pages rotate: in fold k a different ~10% per category is "dev", the rest
"train". --all-train adds one more column, fold N+1, in which every page
that is not held out is "train" and none "dev": the shipped models train
there for a fixed number of epochs chosen by cross-validation on those
pages (tools/study_heads.py). Deterministic (random.Random(420) per category, sorted input).
"""
import argparse
import csv
import os
import random

ap = argparse.ArgumentParser()
ap.add_argument("pages")
ap.add_argument("out")
ap.add_argument("--folds", type=int, default=2)
ap.add_argument("--all-train", action="store_true", help="add a fold column with every non-test page as train")
a = ap.parse_args()
rows = []
for cat in sorted(os.listdir(a.pages)):
    d = os.path.join(a.pages, cat)
    if not os.path.isdir(d):
        continue
    files = sorted(f for f in os.listdir(d) if f.lower().endswith(".png"))
    random.Random(f"420/{cat}").shuffle(files)
    n = len(files)
    k = max(1, round(n * 0.1)) if n >= 3 else 0
    test, rest = files[:k], files[k:]
    for f in test:
        rows.append([f"{cat}/{f}"] + ["test"] * (a.folds + a.all_train))
    for i, f in enumerate(rest):
        roles = []
        for fold in range(a.folds):
            # rotate the dev window through the remaining pages
            lo = (fold * k) % max(1, len(rest))
            in_dev = k > 0 and (i - lo) % len(rest) < k
            roles.append("dev" if in_dev else "train")
        rows.append([f"{cat}/{f}"] + roles + ["train"] * a.all_train)
with open(a.out, "w", newline="", encoding="utf-8") as f:
    w = csv.writer(f)
    w.writerow(["PNG"] + [f"fold {i + 1}" for i in range(a.folds + a.all_train)])
    w.writerows(sorted(rows))
print(f"{len(rows)} pages, {a.folds} folds -> {a.out}")
