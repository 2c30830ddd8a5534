#!/usr/bin/env python3
"""Python reference pipeline of the original page classifier.

PIL decode (Image.open(p).convert("RGB")), the original preprocessing
(transformers ViTImageProcessor for the ViTs; PIL bilinear resize to S x S,
ToTensor and Normalize for the timm models; no crop), a forward pass through
the ORIGINAL transformers / timm model (not the TorchScript export), softmax.
Writes a RAW-style CSV: FILE, PAGE, then the eleven category probabilities in
canonical order. FILE and PAGE follow pageclass (internal/pageclass/results): FILE is the
path relative to the pages folder without extension and without a trailing
"-N"/"_N" page number, PAGE that number (empty when there is none).

Usage:
  reference_predict.py CHECKPOINT --family v4.4 --pages DIR --out ref.csv
                       [--limit N] [--threads T] [--batch B]
CHECKPOINT is a published checkpoint folder (or a --random-init export's
"original" folder). Unreadable images are skipped and listed on stderr.
"""
from __future__ import annotations

import argparse
import csv
import io
import os
import sys
import time

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import export_models as E  # noqa: E402

def split_page_suffix(stem: str) -> tuple[str, int]:
    """internal/pageclass/results.SplitPageSuffix: the digits after the last '-' or '_' (not
    the first character) as a page number; 0 and no split when absent."""
    i = max(stem.rfind("-"), stem.rfind("_"))
    digits = stem[i + 1:]
    if i <= 0 or not digits or not all("0" <= c <= "9" for c in digits) or int(digits) == 0:
        return stem, 0
    return stem[:i], int(digits)


def row_key(root: str, path: str) -> tuple[str, int]:
    """(FILE, PAGE) of an image, as internal/pageclass/results.ImageKey makes it; PAGE 0 = none."""
    rel = os.path.relpath(path, root).replace(os.sep, "/")
    stem = os.path.splitext(rel)[0]
    d, _, base = stem.rpartition("/")
    name, page = split_page_suffix(base)
    return (d + "/" if d else "") + name, page


def predict(orig: E.Original, fam: E.Family, paths: list[str], batch: int = 8, log=None):
    """Canonical-order probabilities for each readable path; returns
    (dict path -> list of 11 floats, list of (path, error))."""
    out, bad = {}, []
    order = [E.CATEGORIES.index(l) for l in orig.labels]
    t0 = time.time()
    for i in range(0, len(paths), batch):
        chunk, ims = [], []
        for p in paths[i:i + batch]:
            try:
                ims.append(E.open_rgb(p))
                chunk.append(p)
            except Exception as e:  # noqa: BLE001 - record the bad file, keep the rest
                bad.append((p, f"{type(e).__name__}: {e}"))
        if not ims:
            continue
        with torch.inference_mode():
            probs = orig.model(E.original_preprocess(fam, ims)).softmax(-1)
        for p, row in zip(chunk, probs.tolist()):
            canon = [0.0] * len(E.CATEGORIES)
            for j, v in zip(order, row):
                canon[j] = v
            out[p] = canon
        if log:
            done = min(i + batch, len(paths))
            log(f"  {done}/{len(paths)} pages, {time.time() - t0:.0f} s")
    return out, bad


def write_csv(path: str, root: str, probs: dict, decimals: int = 6) -> None:
    """RAW CSV sorted by FILE then PAGE, written atomically."""
    rows = sorted((row_key(root, p) + (v,) for p, v in probs.items()), key=lambda r: (r[0], r[1]))
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(["FILE", "PAGE"] + E.CATEGORIES)
    for f, page, v in rows:
        w.writerow([f, page or ""] + [f"{x:.{decimals}f}" for x in v])
    E._atomic(path, lambda t: open(t, "w", newline="").write(buf.getvalue()))


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], epilog=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("checkpoint", help="original checkpoint folder (or timm weights file)")
    ap.add_argument("--family", required=True, help="v1.4..v5.4 or a base name")
    ap.add_argument("--scaled-down", action="store_true", help="the family's scaled-down demo variant")
    ap.add_argument("--arch", help="timm architecture of a bare weights file")
    ap.add_argument("--pages", required=True, help="folder of page images (searched recursively)")
    ap.add_argument("--out", required=True, help="output CSV")
    ap.add_argument("--limit", type=int, default=0, help="only the first N pages (sorted paths)")
    ap.add_argument("--threads", type=int, default=0, help="torch intra-op threads")
    ap.add_argument("--batch", type=int, default=8)
    ap.add_argument("--decimals", type=int, default=6)
    a = ap.parse_args(argv)
    if a.threads:
        torch.set_num_threads(a.threads)
    fam = E.family(a.family, scaled=a.scaled_down)
    paths = E.list_pages(a.pages, a.limit)
    if not paths:
        ap.error(f"--pages {a.pages}: no images found")
    try:
        orig = E.load_original(a.checkpoint, fam, a.arch)
    except (OSError, ValueError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    print(f"{fam.revision} {fam.base}: {orig.kind} {orig.arch}, {len(paths)} pages, "
          f"{torch.get_num_threads()} threads", file=sys.stderr, flush=True)
    t = time.time()
    probs, bad = predict(orig, fam, paths, a.batch, log=lambda m: print(m, file=sys.stderr, flush=True))
    for p, err in bad:
        print(f"skipped {p}: {err}", file=sys.stderr)
    if not probs:
        print("no page could be read", file=sys.stderr)
        return 1
    write_csv(a.out, a.pages, probs, a.decimals)
    print(f"wrote {a.out}: {len(probs)} pages, {len(bad)} skipped, {time.time() - t:.1f} s", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
